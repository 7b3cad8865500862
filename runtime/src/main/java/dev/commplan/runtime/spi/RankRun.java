package dev.commplan.runtime.spi;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntConsumer;
import java.util.function.IntFunction;

/**
 * One run of a task on every rank ({@link RankSupervisor#call}): each rank's future, which ranks the
 * supervisor has seen end, and how each failed rank failed, in the order the supervisor saw the failures.
 * The thread that waits for the run reads and writes it; any thread may ask {@link #isRunning}.
 */
final class RankRun<T> {
  private final List<Future<T>> futures;
  /** A permit per rank whose task ended: the waiting thread wakes on it. */
  private final Semaphore ended = new Semaphore(0);
  /** Per rank: whether the supervisor has seen it end, and its failure (null: none or not yet). */
  private final boolean[] done;
  private final Throwable[] failures;
  /** The failed ranks, in the order the supervisor saw them fail. */
  private final List<Integer> failureOrder = new ArrayList<>();

  private RankRun(int ranks) {
    this.futures = new ArrayList<>(ranks);
    this.done = new boolean[ranks];
    this.failures = new Throwable[ranks];
  }

  /**
   * Submits each rank's task to its thread.
   *
   * @param <T> the type of each rank's result
   * @param threads the ranks' threads
   * @param task each rank's task, by rank
   * @return the run, its tasks submitted
   */
  static <T> RankRun<T> start(RankThreads threads, IntFunction<Callable<T>> task) {
    int ranks = threads.threads().length;
    RankRun<T> run = new RankRun<>(ranks);
    for (int r = 0; r < ranks; r++) {
      Callable<T> work = task.apply(r);
      run.futures.add(threads.submit(r, () -> {
        try {
          return work.call();
        } finally {
          run.ended.release();
        }
      }));
    }
    return run;
  }

  /** {@return whether rank {@code rank}'s task has not ended yet} Any thread may ask. */
  boolean isRunning(int rank) {
    return !futures.get(rank).isDone();
  }

  /**
   * Waits until a rank's task ends, or a millisecond passes.
   *
   * @throws InterruptedException if the waiting thread is interrupted
   */
  void awaitAnEndOrAMillisecond() throws InterruptedException {
    ended.tryAcquire(1, TimeUnit.MILLISECONDS);
  }

  /** Records every rank whose task has ended, and returns whether all have. */
  boolean allDone() {
    boolean all = true;
    for (int r = 0; r < futures.size(); r++) {
      if (!done[r]) {
        if (futures.get(r).isDone()) {
          finish(r);
        } else {
          all = false;
        }
      }
    }
    return all;
  }

  /**
   * Waits up to {@code limit} in all for the ranks still running to end, recording those that do.
   *
   * @param limit the longest wait
   * @return whether every rank has ended
   * @throws InterruptedException if the waiting thread is interrupted
   */
  boolean awaitAll(Duration limit) throws InterruptedException {
    long deadline = System.nanoTime() + limit.toNanos();
    for (int r = 0; r < futures.size(); r++) {
      if (done[r]) {
        continue;
      }
      try {
        futures.get(r).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        continue;
      } catch (ExecutionException | CancellationException e) {
        // recorded by finish
      }
      finish(r);
    }
    return allDone();
  }

  /**
   * Runs {@code action} for every rank the supervisor has not seen end, in rank order.
   *
   * @param action given each such rank
   */
  void forEachNotDone(IntConsumer action) {
    for (int r = 0; r < done.length; r++) {
      if (!done[r]) {
        action.accept(r);
      }
    }
  }

  /**
   * Gives up on every rank the supervisor has not seen end: each counts as ended, failed with what {@code
   * failure} makes for it.
   *
   * @param failure the failure of a rank left behind, by rank
   */
  void leaveBehind(IntFunction<Throwable> failure) {
    forEachNotDone(r -> {
      done[r] = true;
      failed(r, failure.apply(r));
    });
  }

  /** Records that rank {@code rank}'s task ended, and how; its future is done. */
  private void finish(int rank) {
    done[rank] = true;
    try {
      futures.get(rank).get();
    } catch (ExecutionException e) {
      failed(rank, e.getCause());
    } catch (CancellationException e) {
      failed(rank, e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // cannot happen: the future is done
    }
  }

  private void failed(int rank, Throwable failure) {
    failures[rank] = failure;
    failureOrder.add(rank);
  }

  /** {@return whether a rank failed} */
  boolean failed() {
    return !failureOrder.isEmpty();
  }

  /** {@return the failed ranks, in the order the supervisor saw them fail} */
  List<Integer> failureOrder() {
    return Collections.unmodifiableList(failureOrder);
  }

  /** {@return rank {@code rank}'s failure, or null} */
  Throwable failure(int rank) {
    return failures[rank];
  }

  /** {@return every rank's result, in rank order} Once every rank returned. */
  List<T> results() {
    List<T> results = new ArrayList<>(futures.size());
    for (Future<T> f : futures) {
      try {
        results.add(f.get());
      } catch (InterruptedException | ExecutionException e) {
        throw new AssertionError("a finished rank's result could not be read", e);
      }
    }
    return results;
  }
}
