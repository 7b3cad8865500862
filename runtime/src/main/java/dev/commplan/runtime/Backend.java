package dev.commplan.runtime;

import dev.commplan.runtime.launch.ProcessInfo;
import java.util.ServiceLoader;

/**
 * A backend, found by name through {@link ServiceLoader}, the way {@code java.sql.DriverManager}
 * finds JDBC drivers: a backend's jar lists its implementation in {@code
 * META-INF/services/dev.commplan.runtime.Backend} (and {@code provides} it in its {@code module-info}),
 * and {@link Backends} looks it up by {@link #name()}. CommPlan's core names no backend; a third-party
 * backend jar on the class path shows up by name like the three built in ({@code local}, {@code nccl},
 * {@code mpi}).
 *
 * <p>Implementations have a public no-argument constructor, do no work in it (the library is probed in
 * {@link #unavailableReason()}), and are used by any thread.
 */
public interface Backend {
  /**
   * {@return the name users pick it by: {@code "local"}, {@code "nccl"}, {@code "mpi"}; lower case, unique}
   */
  String name();

  /**
   * Why this backend cannot run in this process at all (native access off, a library missing, no
   * device), or null when it can. Cheap enough to call before choosing a backend; creates nothing.
   *
   * @return the reason, for a user to read, or null when this backend can run here
   */
  String unavailableReason();

  /**
   * A cluster of {@code ranks} ranks driven from this process (threads of this JVM, or one GPU each).
   *
   * @param ranks the number of ranks, at least 1
   * @param options timeouts and the like, applied to every rank
   * @return a new cluster, which the caller closes
   * @throws IllegalArgumentException if {@code ranks < 1}, or the backend has no clusters in one process
   *     (the message says how to start it instead)
   * @throws BackendUnavailableException if it cannot run here
   */
  Cluster cluster(int ranks, CommOptions options);

  /**
   * This process's communicator in a job of one rank per process that a launcher started ({@code
   * info}: torchrun's, Slurm's or Open MPI's variables). The caller closes it.
   *
   * @param info where this process sits in its job: rank, size, rendezvous address
   * @param options timeouts and the like
   * @return this process's communicator, connected to the other ranks; the caller closes it
   * @throws IllegalArgumentException if the backend has no ranks of their own process (the message says
   *     what to use instead)
   * @throws BackendUnavailableException if it cannot run here
   */
  Communicator processCommunicator(ProcessInfo info, CommOptions options);
}
