package dev.commplan.runtime;

import dev.commplan.runtime.launch.LaunchEnvironment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.ServiceLoader;

/**
 * Picks a {@link Backend} by name: those on the class path (or module path) through {@link
 * ServiceLoader}. CommPlan ships {@code "local"} (ranks as threads of this JVM), {@code "nccl"} (one GPU
 * per rank) and {@code "mpi"} (one rank per process under {@code mpirun}); a backend jar of someone
 * else's is found the same way. Nothing is cached: each call asks the service loader (a lookup costs far
 * less than making a cluster).
 */
public final class Backends {
  private Backends() {}

  /** {@return the names of the backends found, in alphabetical order} */
  public static List<String> names() {
    List<String> names = new ArrayList<>();
    for (Backend backend : ServiceLoader.load(Backend.class, Backends.class.getClassLoader())) {
      names.add(backend.name());
    }
    names.sort(null);
    return names;
  }

  /**
   * The backend called {@code name}.
   *
   * @param name the backend's name, any case, surrounding spaces ignored
   * @return the backend; it may still be unavailable here ({@link Backend#unavailableReason()})
   * @throws IllegalArgumentException for an unknown name (the message lists the known ones)
   */
  public static Backend backend(String name) {
    if (name == null) {
      throw new IllegalArgumentException("name a backend: one of " + names());
    }
    String wanted = name.strip().toLowerCase(Locale.ROOT);
    for (Backend backend : ServiceLoader.load(Backend.class, Backends.class.getClassLoader())) {
      if (backend.name().equals(wanted)) {
        return backend;
      }
    }
    throw new IllegalArgumentException("unknown backend '" + name + "': the backends here are " + names()
        + " (a backend is found through META-INF/services/" + Backend.class.getName() + " on the class path, or"
        + " through its module-info's provides " + Backend.class.getName() + " on the module path)");
  }

  /**
   * A cluster of {@code ranks} ranks on the named backend, with the default options
   * ({@link CommOptions#defaults()}).
   *
   * @param backend the backend's name, as for {@link #backend}
   * @param ranks the number of ranks, at least 1
   * @return a new cluster, which the caller closes
   * @throws IllegalArgumentException for an unknown name, {@code ranks < 1}, or a backend of one rank per
   *     process
   * @throws BackendUnavailableException if the backend cannot run here
   */
  public static Cluster cluster(String backend, int ranks) {
    return cluster(backend, ranks, CommOptions.defaults());
  }

  /**
   * A cluster of {@code ranks} ranks on the named backend, with {@code options} (the timeout: see {@link
   * CommOptions}).
   *
   * @param backend the backend's name, as for {@link #backend}
   * @param ranks the number of ranks, at least 1
   * @param options the timeout and other options every rank gets
   * @return a new cluster, which the caller closes
   * @throws IllegalArgumentException for an unknown name (the message lists the known ones), {@code ranks
   *     < 1}, or a backend of one rank per process ({@code mpi}: the message says how to start it)
   * @throws BackendUnavailableException if the backend cannot run here (no GPU, no NCCL library, ...)
   */
  public static Cluster cluster(String backend, int ranks, CommOptions options) {
    Objects.requireNonNull(options, "options");
    Backend found = backend(backend);
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
    return found.cluster(ranks, options);
  }

  /**
   * This process's communicator in a job of one rank per process, which a launcher started: its place in
   * the job comes from torchrun's, Slurm's or Open MPI's variables ({@link LaunchEnvironment}); {@code
   * "nccl"} meets the other ranks at the TCP rendezvous (docs/distributed.md), {@code "mpi"} is {@code
   * MPI_COMM_WORLD} under {@code mpirun} (docs/mpi.md). The caller closes it.
   *
   * @param backend {@code "nccl"} or {@code "mpi"} (or a third-party backend of one rank per process)
   * @return this process's communicator, which the caller closes
   * @throws IllegalArgumentException for {@code "local"} (its ranks are threads of one process: use
   *     {@link #cluster}) or an unknown name
   * @throws BackendUnavailableException if the backend cannot run here
   */
  public static Communicator processCommunicator(String backend) {
    Backend found = backend(Objects.requireNonNull(backend, "backend"));
    return found.processCommunicator(LaunchEnvironment.fromEnvironment(), CommOptions.defaults());
  }

  /**
   * A cluster of {@code ranks} threads of this JVM, no GPU needed (the default options).
   *
   * @param ranks the number of ranks (threads), at least 1
   * @return a new cluster, which the caller closes
   */
  public static Cluster local(int ranks) {
    return cluster("local", ranks);
  }

  /**
   * A cluster of {@code ranks} threads of this JVM with {@code options} (the timeout: see
   * {@link CommOptions}).
   *
   * @param ranks the number of ranks (threads), at least 1
   * @param options the timeout and other options every rank gets
   * @return a new cluster, which the caller closes
   */
  public static Cluster local(int ranks, CommOptions options) {
    return cluster("local", ranks, options);
  }
}
