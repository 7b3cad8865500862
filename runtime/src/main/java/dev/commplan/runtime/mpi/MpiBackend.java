package dev.commplan.runtime.mpi;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.mpi.internal.MpiLibrary;
import java.time.Duration;

/**
 * The MPI backend's entry points: plans run across processes on CPUs, each process one rank of {@code
 * MPI_COMM_WORLD}, started by {@code mpirun}. The backend binds Open MPI's {@code libmpi.so.40} through
 * {@code java.lang.foreign} (found by the dynamic loader, or where {@value MpiLibrary#PROPERTY} says) and
 * needs {@code --enable-native-access=ALL-UNNAMED}.
 *
 * <p>MPI is initialized once per process, by the first {@link #world()} ({@code MPI_Init_thread} with
 * {@code MPI_THREAD_SERIALIZED}; if something else in the process initialized MPI already, it is used as
 * it is). It is finalized by {@link #finalizeMpi()}, or else by a shutdown hook when the JVM exits
 * normally ({@code System.exit} or the end of {@code main}); it cannot be initialized again after that.
 */
public final class MpiBackend {
  private MpiBackend() {}

  /**
   * A new communicator over all ranks of {@code MPI_COMM_WORLD} (an {@code MPI_Comm_dup}: collective, so
   * every rank calls it, the same number of times in the same order), with {@link CommOptions#defaults()}'s
   * timeout (5 minutes, or what {@value CommOptions#TIMEOUT_PROPERTY} says). The caller closes it.
   *
   * @return this rank's communicator, owned by the caller
   * @throws BackendUnavailableException if native access is off, Open MPI is not installed, or MPI was
   *     finalized in this process
   */
  public static MpiCommunicator world() {
    return world(CommOptions.defaults());
  }

  /**
   * Like {@link #world()}, waiting at most {@code options.timeout()} for collectives before aborting the job.
   *
   * @param options the timeout and other options
   * @return this rank's communicator, owned by the caller
   */
  public static MpiCommunicator world(CommOptions options) {
    return MpiCommunicator.dupWorld(options);
  }

  /**
   * Like {@link #world()}, waiting at most {@code timeout} for collectives before aborting the job.
   *
   * @param timeout how long a wait for collectives may take before the job is aborted; positive
   * @return this rank's communicator, owned by the caller
   */
  public static MpiCommunicator world(Duration timeout) {
    return world(CommOptions.timeout(timeout));
  }

  /**
   * Why this backend cannot run here (native access off, "libmpi.so.40 not found (tried ...)", MPI
   * already finalized), or null when it can. Does not initialize MPI.
   *
   * @return the reason, for a user to read, or null
   */
  public static String unavailableReason() {
    return MpiRuntime.unavailableReason();
  }

  /**
   * Whether this process looks started by Open MPI's launcher ({@code OMPI_COMM_WORLD_SIZE} is set).
   * Without it, {@link #world()} still works where Open MPI can start a singleton: one rank.
   *
   * @return true when {@code OMPI_COMM_WORLD_SIZE} is set
   */
  public static boolean launchedByMpirun() {
    return System.getenv("OMPI_COMM_WORLD_SIZE") != null;
  }

  /**
   * {@code MPI_Get_library_version}'s text ("Open MPI v4.1.4, package: ..."); does not initialize MPI.
   *
   * @return the library's version text
   * @throws BackendUnavailableException if the library cannot be loaded
   */
  public static String libraryVersion() {
    return MpiRuntime.libraryVersion();
  }

  /** {@return the thread level MPI granted ("MPI_THREAD_SERIALIZED"), or "not initialized"} */
  public static String threadLevel() {
    return MpiRuntime.threadLevel();
  }

  /**
   * Closes every open MPI communicator of this process and calls {@code MPI_Finalize} (when this backend
   * initialized MPI). Every rank should call it (or let the JVM exit normally, which does it); MPI cannot
   * be used again in this process afterwards. A no-op when MPI is not initialized.
   */
  public static void finalizeMpi() {
    MpiRuntime.finalizeMpi();
  }
}
