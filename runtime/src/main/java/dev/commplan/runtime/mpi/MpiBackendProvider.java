package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Backend;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.launch.Launcher;
import dev.commplan.runtime.launch.ProcessInfo;
import java.util.ServiceLoader;

/** The MPI backend as {@link Backend} {@code "mpi"}: one rank per process (see {@link MpiBackend}). */
public final class MpiBackendProvider implements Backend {
  /** For {@link ServiceLoader}; use {@code Backends} to get one. */
  public MpiBackendProvider() {}

  @Override
  public String name() {
    return "mpi";
  }

  @Override
  public String unavailableReason() {
    return MpiBackend.unavailableReason();
  }

  /** Refused: MPI runs one rank per process, started by {@code mpirun}. */
  @Override
  public Cluster cluster(int ranks, CommOptions options) {
    throw new IllegalArgumentException(
        "the mpi backend runs one rank per process, so it has no cluster of " + ranks + " ranks in this"
            + " process: launch the program with mpirun -np " + ranks + " and take this process's"
            + " communicator from Backends.processCommunicator(\"mpi\") or MpiBackend.world() (docs/mpi.md)");
  }

  /**
   * {@code MPI_COMM_WORLD} ({@link MpiBackend#world(CommOptions)}); MPI knows this process's rank, so
   * {@code info} is only checked against it when it came from Open MPI's own variables.
   */
  @Override
  public Communicator processCommunicator(ProcessInfo info, CommOptions options) {
    MpiCommunicator world = MpiBackend.world(options);
    if (info.launcher() == Launcher.OPEN_MPI && (info.rank() != world.rank() || info.size() != world.size())) {
      int rank = world.rank();
      int size = world.size();
      world.close();
      throw new IllegalStateException("Open MPI's variables say " + info + ", but MPI_COMM_WORLD says rank " + rank
          + " of " + size);
    }
    return world;
  }
}
