package dev.commplan.runtime;

import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.nccl.NcclBackend;
import java.util.List;
import java.util.Objects;

/**
 * Picks a backend by name: {@code "local"} (ranks as threads of this JVM) or {@code "nccl"} (one GPU per
 * rank, all driven from this process). The third backend, {@code "mpi"}, is one rank per process: a
 * process launched by {@code mpirun} gets its communicator from {@code MpiBackend.world()} (docs/mpi.md),
 * and {@code cluster("mpi", n)} says so. One NCCL rank per process comes from {@code
 * ProcessBootstrap} (docs/distributed.md).
 */
public final class Backends {
  /** The names {@link #cluster} accepts. */
  public static final List<String> NAMES = List.of("local", "nccl");

  private Backends() {}

  /**
   * A cluster of {@code ranks} ranks on the named backend.
   *
   * @throws IllegalArgumentException for an unknown name (the message lists the known ones) or {@code ranks < 1}
   * @throws BackendUnavailableException if the backend cannot run here (no GPU, no NCCL library, ...)
   */
  public static Cluster cluster(String backend, int ranks) {
    return cluster(backend, ranks, CommOptions.defaults());
  }

  /**
   * A cluster of {@code ranks} ranks on the named backend, with {@code options} (the timeout: see {@link
   * CommOptions}).
   *
   * @throws IllegalArgumentException for an unknown name (the message lists the known ones) or {@code ranks < 1}
   * @throws BackendUnavailableException if the backend cannot run here (no GPU, no NCCL library, ...)
   */
  public static Cluster cluster(String backend, int ranks, CommOptions options) {
    Objects.requireNonNull(options, "options");
    if (backend == null) {
      throw new IllegalArgumentException("name a backend: one of " + NAMES);
    }
    checkRanks(ranks);
    return switch (backend) {
      case "local" -> new LocalCluster(ranks, options);
      case "nccl" -> NcclBackend.cluster(ranks, options);
      case "mpi" -> throw new IllegalArgumentException(
          "the mpi backend runs one rank per process, so it has no cluster of " + ranks + " ranks in this"
              + " process: launch the program with mpirun -np " + ranks + " and take this process's"
              + " communicator from dev.commplan.runtime.mpi.MpiBackend.world() (docs/mpi.md)");
      default -> throw new IllegalArgumentException(
          "unknown backend '" + backend + "': the known backends are " + NAMES + " (and mpi, one rank per process)");
    };
  }

  /**
   * This process's communicator in a job of one rank per process, which a launcher started: {@code
   * "nccl"} bootstraps NCCL from torchrun's, Slurm's or Open MPI's variables over the TCP rendezvous
   * ({@code ProcessBootstrap.ncclFromEnvironment()}, docs/distributed.md); {@code "mpi"} is {@code
   * MPI_COMM_WORLD} under {@code mpirun} ({@code MpiBackend.world()}, docs/mpi.md). The caller closes it.
   *
   * @throws IllegalArgumentException for {@code "local"} (its ranks are threads of one process: use
   *     {@link #cluster}) or an unknown name
   * @throws BackendUnavailableException if the backend cannot run here
   */
  public static Communicator processCommunicator(String backend) {
    Objects.requireNonNull(backend, "backend");
    return switch (backend) {
      case "nccl" -> dev.commplan.runtime.bootstrap.ProcessBootstrap.ncclFromEnvironment();
      case "mpi" -> dev.commplan.runtime.mpi.MpiBackend.world();
      case "local" -> throw new IllegalArgumentException(
          "the local backend's ranks are threads of one process, not one rank per process: use"
              + " Backends.cluster(\"local\", n)");
      default -> throw new IllegalArgumentException(
          "unknown backend '" + backend + "': one rank per process runs on nccl or mpi");
    };
  }

  /** A cluster of {@code ranks} threads of this JVM, no GPU needed (the default rendezvous timeout). */
  public static Cluster local(int ranks) {
    checkRanks(ranks);
    return new LocalCluster(ranks);
  }

  /** A cluster of {@code ranks} threads of this JVM with {@code options} (the timeout: see {@link CommOptions}). */
  public static Cluster local(int ranks, CommOptions options) {
    Objects.requireNonNull(options, "options");
    checkRanks(ranks);
    return new LocalCluster(ranks, options);
  }

  private static void checkRanks(int ranks) {
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
  }
}
