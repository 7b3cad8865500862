package dev.commplan.runtime.spi;

import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * The threads of a {@link RankSupervisor}'s ranks: one long-lived daemon platform thread per rank, named
 * {@code commplan-NAME-rank-R}, which runs the work submitted to its rank one piece after another. Every
 * thread is started when the supervisor is made, before any run, so that an abort can interrupt every rank
 * from the first run on, and read where each one is ({@link RankWhereabouts}).
 */
final class RankThreads {
  private final ExecutorService[] executors;
  private final Thread[] threads;

  /**
   * Starts one thread per rank.
   *
   * @param name the backend's name, for the threads' names
   * @param ranks the number of ranks, at least 1
   */
  RankThreads(String name, int ranks) {
    this.executors = new ExecutorService[ranks];
    this.threads = new Thread[ranks];
    for (int r = 0; r < ranks; r++) {
      int rank = r;
      ThreadPoolExecutor executor = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
          runnable -> {
            Thread t = Thread.ofPlatform().name("commplan-" + name + "-rank-" + rank).daemon(true).unstarted(runnable);
            threads[rank] = t;
            return t;
          });
      executor.prestartAllCoreThreads(); // every rank's thread exists before a run: an abort can interrupt it
      executors[r] = executor;
    }
  }

  /**
   * Runs {@code work} on rank {@code rank}'s thread, after what was submitted to it before.
   *
   * @param <T> the type of the work's result
   * @param rank the rank
   * @param work the work
   * @return its future
   */
  <T> Future<T> submit(int rank, Callable<T> work) {
    return executors[rank].submit(work);
  }

  /** {@return the ranks' threads, by rank, for reading their stacks; not to be changed} */
  Thread[] threads() {
    return threads;
  }

  /**
   * Interrupts every rank's thread but {@code rank}'s and the caller's, so that a rank blocked in code of
   * its own (a sleep, a queue) wakes up.
   *
   * @param rank the rank not to interrupt, or -1 for none
   */
  void interruptAllBut(int rank) {
    for (int r = 0; r < threads.length; r++) {
      Thread t = threads[r];
      if (r != rank && t != null && t != Thread.currentThread()) {
        t.interrupt();
      }
    }
  }

  /**
   * Stops the threads: work not yet started is dropped, running work is interrupted, and each thread other
   * than the caller's is waited for up to a second (an executor counts as terminated before its thread has
   * ended, so the threads themselves are joined).
   */
  void close() {
    for (ExecutorService e : executors) {
      e.shutdownNow();
    }
    try {
      for (Thread t : threads) {
        if (t != Thread.currentThread()) {
          t.join(1000);
        }
      }
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
