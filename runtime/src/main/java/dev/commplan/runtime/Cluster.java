package dev.commplan.runtime;

import java.util.List;
import java.util.Objects;

/**
 * A group of ranks driven from this process, one thread per rank: N threads of one JVM on the local
 * backend, N ranks on the NCCL backend (one a GPU, or several on one GPU where NCCL 2.30 and its opt-in
 * allow it: {@code NcclBackend.cluster}).
 *
 * <p>{@link #run} and {@link #call} start the task on every rank's thread and wait for all of them. The
 * first failure is rethrown; the other ranks are aborted rather than left waiting for it, so a failing
 * rank never makes the call hang.
 */
public interface Cluster extends AutoCloseable {
  /** {@return the number of ranks} */
  int size();

  /** {@return the backend: {@code "local"} or {@code "nccl"}} */
  String backendName();

  /**
   * Runs {@code task} on every rank, each on its own thread with its own communicator, and waits. The
   * default: {@link #call} with a function that runs {@code task} and returns null.
   *
   * @param task the work each rank runs, called once per rank, concurrently
   * @throws CommPlanException wrapping the first rank's failure (others suppressed)
   */
  default void run(RankTask task) {
    Objects.requireNonNull(task, "task");
    call(comm -> {
      task.run(comm);
      return null;
    });
  }

  /**
   * Like {@link #run}, returning each rank's result, indexed by rank.
   *
   * @param <T> the type of each rank's result
   * @param function the work each rank runs, called once per rank, concurrently
   * @return each rank's result, at index rank
   */
  <T> List<T> call(RankFunction<T> function);

  /** Closes every rank's communicator; idempotent. */
  @Override
  void close();
}
