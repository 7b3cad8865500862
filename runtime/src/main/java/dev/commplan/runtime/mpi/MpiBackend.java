package dev.commplan.runtime.mpi;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.mpi.internal.MpiLibrary;
import java.time.Duration;
import java.time.format.DateTimeParseException;

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
  /** System property: the default timeout of {@link #world()}, in seconds ("30", "2.5") or ISO-8601 ("PT1M"). */
  public static final String TIMEOUT_PROPERTY = "commplan.mpi.timeout";
  /** The default timeout when {@value #TIMEOUT_PROPERTY} is not set. */
  public static final Duration DEFAULT_TIMEOUT = Duration.ofMinutes(5);
  /** The {@code MPI_Abort} error code of a timed-out wait, which mpirun exits with. */
  public static final int TIMEOUT_ABORT_CODE = 70;

  private MpiBackend() {}

  /**
   * A new communicator over all ranks of {@code MPI_COMM_WORLD} (an {@code MPI_Comm_dup}: collective, so
   * every rank calls it, the same number of times in the same order), with the timeout {@value
   * #TIMEOUT_PROPERTY} gives, or {@link #DEFAULT_TIMEOUT}. The caller closes it.
   *
   * @throws BackendUnavailableException if native access is off, Open MPI is not installed, or MPI was
   *     finalized in this process
   */
  public static MpiCommunicator world() {
    return world(defaultTimeout());
  }

  /** Like {@link #world()}, waiting at most {@code timeout} for collectives to complete before aborting the job. */
  public static MpiCommunicator world(Duration timeout) {
    return MpiCommunicator.dupWorld(timeout);
  }

  /** The timeout {@value #TIMEOUT_PROPERTY} gives, or {@link #DEFAULT_TIMEOUT}. */
  public static Duration defaultTimeout() {
    String value = System.getProperty(TIMEOUT_PROPERTY);
    if (value == null || value.isBlank()) {
      return DEFAULT_TIMEOUT;
    }
    String v = value.strip();
    try {
      Duration d = v.startsWith("P") || v.startsWith("p")
          ? Duration.parse(v)
          : Duration.ofNanos(Math.round(Double.parseDouble(v) * 1e9));
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("-D" + TIMEOUT_PROPERTY + "=" + value + " must be positive");
      }
      return d;
    } catch (NumberFormatException | DateTimeParseException e) {
      throw new IllegalArgumentException("-D" + TIMEOUT_PROPERTY + "=" + value
          + " is neither a number of seconds (\"30\", \"2.5\") nor an ISO-8601 duration (\"PT1M\")", e);
    }
  }

  /**
   * Why this backend cannot run here (native access off, "libmpi.so.40 not found (tried ...)", MPI
   * already finalized), or null when it can. Does not initialize MPI.
   */
  public static String unavailableReason() {
    return MpiRuntime.unavailableReason();
  }

  /**
   * Whether this process looks started by Open MPI's launcher ({@code OMPI_COMM_WORLD_SIZE} is set).
   * Without it, {@link #world()} still works where Open MPI can start a singleton: one rank.
   */
  public static boolean launchedByMpirun() {
    return System.getenv("OMPI_COMM_WORLD_SIZE") != null;
  }

  /** {@code MPI_Get_library_version}'s text ("Open MPI v4.1.4, package: ..."); does not initialize MPI. */
  public static String libraryVersion() {
    return MpiRuntime.libraryVersion();
  }

  /** The thread level MPI granted ("MPI_THREAD_SERIALIZED"), or "not initialized". */
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
