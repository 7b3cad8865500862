package dev.commplan.runtime.nccl;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.RankFunction;
import dev.commplan.runtime.RankTask;
import dev.commplan.runtime.nccl.internal.Nccl;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One process driving N GPUs: {@code ncclCommInitAll} over devices {@code 0..N-1}, and one platform
 * thread per rank that has {@code cudaSetDevice}'d to its GPU and runs that rank's tasks.
 *
 * <p>When a rank's task fails, the others still running are asked to give up: they see it at their next
 * call into the communicator, or while waiting in {@code Stream.synchronize()} (which polls), call {@code
 * ncclCommAbort} on their own thread and throw {@link RankAbortedException}. A rank that has not given up
 * after {@value #GRACE_MILLIS} ms (blocked inside NCCL or CUDA, or in code of its own) is interrupted and
 * its communicator aborted from outside, as NCCL documents for a hung call; after a second grace period
 * the cluster stops waiting for it. Either way the first failure is rethrown, and a cluster whose ranks
 * were aborted refuses further work.
 *
 * <p>Timeouts ({@link CommOptions#timeout()}): each rank's {@code synchronize()} has its own (see {@link
 * NcclCommunicator}). While a task runs, the thread that called {@link #call} is the cluster's watchdog:
 * every millisecond it checks whether a rank has been blocked in a host call that waits for its peers
 * ({@code ncclGroupEnd} of a blocking communicator) for longer than the timeout, and every 100 ms it polls
 * each communicator's {@code ncclCommGetAsyncError}; either aborts that communicator from outside, which
 * returns the blocked call, and the rank fails with {@code CommTimeoutException} or {@link NcclException}.
 * No extra thread is started.
 */
final class NcclCluster implements Cluster {
  static final long GRACE_MILLIS = 5_000;
  /** How often the watchdog polls ncclCommGetAsyncError while a task runs. */
  static final long ASYNC_POLL_NANOS = 100_000_000L;

  private final int size;
  private final NcclCommunicator[] comms;
  private final ExecutorService[] executors;
  private final Thread[] threads;
  private volatile boolean closed;
  private volatile String brokenBecause;

  private NcclCluster(int size) {
    this.size = size;
    this.comms = new NcclCommunicator[size];
    this.executors = new ExecutorService[size];
    this.threads = new Thread[size];
  }

  static NcclCluster create(int ranks) {
    return create(ranks, CommOptions.defaults());
  }

  static NcclCluster create(int ranks, CommOptions options) {
    java.util.Objects.requireNonNull(options, "options");
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
    NcclEnvironment.requireDevices(ranks);
    NcclVersion version = NcclEnvironment.requireNccl();
    long[] handles = Checked.ncclCommInitAll(ranks);
    NcclCluster cluster = new NcclCluster(ranks);
    try {
      for (int r = 0; r < ranks; r++) {
        int rank = r;
        cluster.executors[r] = Executors.newSingleThreadExecutor(runnable -> {
          Thread t = new Thread(runnable, "commplan-nccl-rank-" + rank);
          t.setDaemon(true);
          cluster.threads[rank] = t;
          return t;
        });
      }
      List<Future<NcclCommunicator>> made = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        long handle = handles[r];
        int device = r;
        made.add(cluster.executors[r].submit(() -> {
          Checked.cudaSetDevice(device); // this thread's device from now on
          return new NcclCommunicator(handle, version, options);
        }));
      }
      for (int r = 0; r < ranks; r++) {
        cluster.comms[r] = get(made.get(r));
      }
    } catch (RuntimeException | Error e) {
      for (int r = 0; r < ranks; r++) {
        if (cluster.comms[r] != null) {
          try {
            cluster.comms[r].abort();
          } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed);
          }
        } else {
          Nccl.ncclCommAbort(handles[r]);
        }
        if (cluster.executors[r] != null) {
          cluster.executors[r].shutdownNow();
        }
      }
      throw e;
    }
    return cluster;
  }

  private static <T> T get(Future<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommPlanException("interrupted while setting up the NCCL cluster", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new CommPlanException("setting up a rank failed: " + cause, cause);
    }
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public String backendName() {
    return "nccl";
  }

  /** Rank {@code r}'s communicator (for this package's tests and probes). */
  NcclCommunicator communicator(int rank) {
    return comms[rank];
  }

  @Override
  public void run(RankTask task) {
    call(c -> {
      task.run(c);
      return null;
    });
  }

  @Override
  public <T> List<T> call(RankFunction<T> function) {
    if (closed) {
      throw new IllegalStateException("this NCCL cluster is closed");
    }
    if (brokenBecause != null) {
      throw new IllegalStateException("this NCCL cluster's communicators were aborted after " + brokenBecause
          + "; close it and make a new one");
    }
    List<Future<T>> futures = new ArrayList<>(size);
    for (int r = 0; r < size; r++) {
      NcclCommunicator comm = comms[r];
      Callable<T> work = () -> function.apply(comm);
      futures.add(executors[r].submit(work));
    }
    Throwable[] failures = new Throwable[size];
    int firstFailed = -1;
    boolean[] done = new boolean[size];
    int remaining = size;
    long lastAsyncPoll = System.nanoTime();
    // Wait for completions in whatever order they come, so the first failure is seen at once.
    while (remaining > 0 && firstFailed < 0) {
      for (int r = 0; r < size; r++) {
        if (done[r] || !futures.get(r).isDone()) {
          continue;
        }
        done[r] = true;
        remaining--;
        failures[r] = failure(futures.get(r));
        if (failures[r] != null && firstFailed < 0) {
          firstFailed = r;
        }
      }
      if (remaining > 0 && firstFailed < 0) {
        waitBriefly(futures, done);
        long now = System.nanoTime();
        boolean pollAsync = now - lastAsyncPoll > ASYNC_POLL_NANOS;
        if (pollAsync) {
          lastAsyncPoll = now;
        }
        for (int r = 0; r < size; r++) {
          if (!done[r]) {
            comms[r].watch(now, pollAsync);
          }
        }
      }
    }
    if (firstFailed >= 0) {
      String reason = "rank " + firstFailed + " failed: " + failures[firstFailed];
      stopOthers(futures, done, failures, firstFailed, reason);
      for (NcclCommunicator c : comms) {
        if (c.isAborted()) {
          brokenBecause = reason;
          break;
        }
      }
      CommPlanException e = new CommPlanException(
          "rank " + firstFailed + " of " + size + " failed: " + failures[firstFailed].getMessage(),
          failures[firstFailed]);
      for (int r = 0; r < size; r++) {
        if (r != firstFailed && failures[r] != null) {
          e.addSuppressed(failures[r]);
        }
      }
      throw e;
    }
    List<T> results = new ArrayList<>(size);
    for (Future<T> f : futures) {
      results.add(resultOf(f));
    }
    return results;
  }

  private void stopOthers(List<? extends Future<?>> futures, boolean[] done, Throwable[] failures,
      int failedRank, String reason) {
    Throwable cause = failures[failedRank];
    for (int r = 0; r < size; r++) {
      if (!done[r]) {
        comms[r].requestAbort(reason, cause);
      }
    }
    if (!awaitAll(futures, done, failures, GRACE_MILLIS)) {
      // Still running: blocked in code that never calls into the communicator, or inside NCCL or CUDA.
      for (int r = 0; r < size; r++) {
        if (!done[r]) {
          threads[r].interrupt();
          comms[r].abortFromOutside();
        }
      }
      if (!awaitAll(futures, done, failures, GRACE_MILLIS)) {
        for (int r = 0; r < size; r++) {
          if (!done[r]) {
            failures[r] = new RankAbortedException("rank " + r + " did not stop within " + 2 * GRACE_MILLIS
                + " ms of being aborted; its thread is left behind", cause);
          }
        }
        brokenBecause = reason;
      }
    }
  }

  private static boolean awaitAll(List<? extends Future<?>> futures, boolean[] done, Throwable[] failures,
      long millis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    boolean all = true;
    for (int r = 0; r < futures.size(); r++) {
      if (done[r]) {
        continue;
      }
      long left = deadline - System.nanoTime();
      try {
        futures.get(r).get(Math.max(0, left), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        all = false;
        continue;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        all = false;
        break;
      } catch (ExecutionException | CancellationException e) {
        // recorded below
      }
      done[r] = true;
      failures[r] = failure(futures.get(r));
    }
    return all;
  }

  private static void waitBriefly(List<? extends Future<?>> futures, boolean[] done) {
    for (int r = 0; r < futures.size(); r++) {
      if (!done[r]) {
        try {
          futures.get(r).get(1, TimeUnit.MILLISECONDS);
        } catch (TimeoutException | ExecutionException | CancellationException e) {
          // looked at by the caller
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new CommPlanException("interrupted while waiting for the ranks", e);
        }
        return;
      }
    }
  }

  private static Throwable failure(Future<?> f) {
    try {
      f.get();
      return null;
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (CancellationException e) {
      return e;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return e;
    }
  }

  private static <T> T resultOf(Future<T> f) {
    try {
      return f.get();
    } catch (InterruptedException | ExecutionException e) {
      throw new AssertionError("a finished rank's result could not be read", e);
    }
  }

  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    // Destroy every rank's communicator on its own thread, all at once: ncclCommDestroy of one rank may
    // wait for its peers. After a failure that aborted some ranks, the others are aborted too rather
    // than destroyed, since a destroy could wait for a peer that is gone.
    boolean broken = brokenBecause != null;
    List<Future<?>> closing = new ArrayList<>(size);
    for (int r = 0; r < size; r++) {
      NcclCommunicator comm = comms[r];
      closing.add(executors[r].submit(() -> {
        try {
          if (broken) {
            comm.abort();
          }
        } finally {
          comm.close();
        }
      }));
    }
    boolean[] done = new boolean[size];
    Throwable[] failures = new Throwable[size];
    if (!awaitAll(closing, done, failures, 6 * GRACE_MILLIS)) {
      for (int r = 0; r < size; r++) {
        if (!done[r]) {
          comms[r].abortFromOutside();
        }
      }
      awaitAll(closing, done, failures, GRACE_MILLIS);
    }
    for (ExecutorService e : executors) {
      e.shutdownNow();
    }
    Throwable first = Arrays.stream(failures).filter(t -> t != null).findFirst().orElse(null);
    if (first != null) {
      CommPlanException e = new CommPlanException("closing the NCCL cluster failed: " + first.getMessage(), first);
      for (Throwable t : failures) {
        if (t != null && t != first) {
          e.addSuppressed(t);
        }
      }
      throw e;
    }
  }

  @Override
  public String toString() {
    return "NcclCluster[" + size + " ranks, devices 0.." + (size - 1) + "]";
  }
}
