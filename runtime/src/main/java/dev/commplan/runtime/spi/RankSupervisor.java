package dev.commplan.runtime.spi;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.RankFunction;
import dev.commplan.runtime.agreement.Agreement;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.Future;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntFunction;
import java.util.function.IntPredicate;

/**
 * Runs tasks on the ranks of a cluster in this process, one long-lived platform thread per rank, with
 * the failure rules every backend shares, so that no rank of any backend hangs when another fails:
 *
 * <ol>
 *   <li>The first failure aborts the run: a rank's task that throws, or a failure the backend reports
 *       itself ({@link #abort}: a stream's work, a timeout). The backend makes every rank still running
 *       give up ({@link RankControl#abortRanks}), and the supervisor interrupts their threads.
 *   <li>The others get {@code grace} to stop; one that has not is stopped from outside ({@link
 *       RankControl#forceAbort}), and after a second {@code grace} it is reported as left behind.
 *   <li>The call throws {@link CommPlanException} "rank r of n failed: ..." with the first failure as its
 *       cause (the rank whose failure started the abort, when its task threw) and the others suppressed.
 *   <li>The cluster refuses further runs when the backend says a rank can no longer run ({@link
 *       RankControl#usableAfterFailure()}): local streams keep their errors; an NCCL communicator that
 *       was aborted cannot be used again.
 * </ol>
 *
 * <p>A rank's task that returns has its communicator's stream synchronized before the run counts it done:
 * work it enqueued and never waited for finishes, and its failure fails the run rather than vanishing
 * when the cluster closes.
 *
 * <p>While a task runs, the calling thread watches: about every millisecond it calls {@link
 * RankControl#watch} (the NCCL backend times host calls that block on peers there). One task at a time.
 */
public final class RankSupervisor implements AutoCloseable {
  /** What aborting a rank means for one backend. */
  public interface RankControl {
    /**
     * Rank {@code rank}'s communicator, which its task receives.
     *
     * @param rank the rank
     * @return its communicator, owned by the backend
     */
    Communicator communicator(int rank);

    /**
     * {@code failedRank} failed with {@code cause} (-1: the caller of the run was interrupted): make every
     * rank for which {@code stillRunning} holds give up soon (wake its waits, fail its stream, ask its
     * communicator to give up at its next call). Called once per failed run, from any thread.
     *
     * @param failedRank the rank that failed, or -1
     * @param cause the failure
     * @param stillRunning true for the ranks whose task is still running
     */
    void abortRanks(int failedRank, Throwable cause, IntPredicate stillRunning);

    /**
     * Rank {@code rank} did not give up within the grace period: stop what it is blocked in from outside.
     *
     * @param rank the rank that did not give up
     */
    default void forceAbort(int rank) {}

    /**
     * Called about once a millisecond on the calling thread while a task runs.
     *
     * @param nowNanos {@code System.nanoTime()} now
     */
    default void watch(long nowNanos) {}

    /**
     * After a failed run: whether every rank can run another task (else the cluster refuses them).
     *
     * @return true if every rank can run another task
     */
    boolean usableAfterFailure();
  }

  private final String name;
  private final int ranks;
  private final Duration grace;
  private final ExecutorService[] executors;
  private final Thread[] threads;
  private final Object state = new Object();
  private RankControl control; // set once, before the first run
  private boolean running; // guarded by state
  private Throwable abortCause; // guarded by state: the first failure of the current or a broken run
  private int abortingRank = -1; // guarded by state
  private String refusal; // guarded by state: why the cluster refuses runs, or null
  private boolean closed; // guarded by state
  /** The current run's futures, by rank: which ranks are still running when an abort comes. */
  private volatile List<? extends Future<?>> current;
  private volatile RankWhereabouts whereabouts = RankWhereabouts.NONE; // the running ranks' stacks at the abort

  /**
   * Starts one daemon platform thread per rank, so that an abort can interrupt every rank from the first run
   * on.
   *
   * @param name the backend's name, for thread names ({@code commplan-NAME-rank-R}) and messages
   * @param ranks the number of ranks, at least 1; one thread each
   * @param grace how long ranks get to stop after an abort, twice (see the class comment)
   * @throws IllegalArgumentException if {@code ranks < 1}
   */
  public RankSupervisor(String name, int ranks, Duration grace) {
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
    this.name = Objects.requireNonNull(name, "name");
    this.ranks = ranks;
    this.grace = Objects.requireNonNull(grace, "grace");
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
   * Connects the backend; once, before the first {@link #call}.
   *
   * @param control the backend's side
   */
  public void control(RankControl control) {
    synchronized (state) {
      if (this.control != null) {
        throw new IllegalStateException("the rank control is set already");
      }
      this.control = Objects.requireNonNull(control, "control");
    }
  }

  /** {@return the number of ranks} */
  public int size() {
    return ranks;
  }

  /**
   * Runs {@code action} on every rank's thread without the failure rules, for a backend's set-up and
   * tear-down (each rank's communicator made or closed on its own thread); the caller waits as it needs.
   *
   * @param <T> the type of each rank's result
   * @param action run with each rank's number, on that rank's thread
   * @return the futures, in rank order
   */
  public <T> List<Future<T>> submitToEachRank(IntFunction<T> action) {
    List<Future<T>> futures = new ArrayList<>(ranks);
    for (int r = 0; r < ranks; r++) {
      int rank = r;
      futures.add(executors[r].submit(() -> action.apply(rank)));
    }
    return futures;
  }

  /**
   * Runs {@code function} on every rank, each on its own thread with its own communicator, and returns
   * the results in rank order, or throws the first failure (see the class comment).
   *
   * @param <T> the type of each rank's result
   * @param function the work, given each rank's communicator
   * @return the results, in rank order
   * @throws IllegalStateException if the cluster is closed, refuses runs after a failure, or runs a task
   */
  public <T> List<T> call(RankFunction<T> function) {
    Objects.requireNonNull(function, "function");
    RankControl c;
    synchronized (state) {
      if (closed) {
        throw new IllegalStateException("this " + name + " cluster is closed");
      }
      if (refusal != null) {
        throw new IllegalStateException("this " + name + " cluster was aborted when " + refusal
            + "; its ranks' state is lost, make a new cluster", abortCause);
      }
      if (running) {
        throw new IllegalStateException("this " + name + " cluster is already running a task; run one at a time");
      }
      c = Objects.requireNonNull(control, "no rank control: the backend did not call control(...)");
      running = true;
      abortCause = null;
      abortingRank = -1;
      whereabouts = RankWhereabouts.NONE;
    }
    Throwable[] failures = new Throwable[ranks];
    boolean[] done = new boolean[ranks];
    List<Integer> failureOrder = new ArrayList<>();
    try {
      List<Future<T>> futures = new ArrayList<>(ranks);
      Semaphore finished = new Semaphore(0); // a permit per rank whose task ended: the waiting thread wakes on it
      for (int r = 0; r < ranks; r++) {
        int rank = r;
        futures.add(executors[r].submit(() -> {
          try {
            // The pool clears a thread's interrupt before a task, so an abort that came before this point
            // interrupts again here (one after it interrupts the task itself); the task still runs and
            // meets the abort where it waits, as every other rank does.
            if (rank != abortingRank() && abortCauseOrNull() != null) {
              Thread.currentThread().interrupt();
            }
            Communicator comm = c.communicator(rank);
            T result = function.apply(comm);
            // Work the task enqueued and never waited for is finished here, so that its failure (ranks that
            // disagreed, a timeout) is the run's failure instead of vanishing when the cluster closes.
            if (comm != null && !comm.isClosed()) { // null: a control with no communicators (tests)
              comm.stream().synchronize();
            }
            return result;
          } catch (Throwable t) {
            abort(rank, t); // at once, from the failing thread, so that nobody waits for the caller to notice
            throw t;
          } finally {
            finished.release();
          }
        }));
      }
      current = futures;
      await(futures, done, failures, failureOrder, c, finished);
      if (!failureOrder.isEmpty()) {
        throw firstFailure(failures, failureOrder, c);
      }
      List<T> results = new ArrayList<>(ranks);
      for (Future<T> f : futures) {
        results.add(resultOf(f));
      }
      // Every rank returned: what no agreement check compared yet (each rank's last calls) is compared here.
      DisagreementException e = Agreement.compareUnchecked(ranks, c::communicator);
      if (e != null) {
        throw new CommPlanException("every rank of the " + name + " cluster returned, but " + e.getMessage(), e);
      }
      return results;
    } finally {
      current = null;
      synchronized (state) {
        running = false;
      }
    }
  }

  /** Waits for every rank, watching; once aborted, applies the grace periods. */
  private <T> void await(List<Future<T>> futures, boolean[] done, Throwable[] failures, List<Integer> failureOrder,
      RankControl c, Semaphore finished) {
    try {
      while (!allDone(futures, done, failures, failureOrder)) {
        if (isAborted()) {
          if (!awaitAll(futures, done, failures, failureOrder, grace)) {
            for (int r = 0; r < ranks; r++) {
              if (!done[r]) {
                c.forceAbort(r);
              }
            }
            if (!awaitAll(futures, done, failures, failureOrder, grace)) {
              leftBehind(done, failures, failureOrder);
            }
          }
          return;
        }
        finished.tryAcquire(1, TimeUnit.MILLISECONDS); // a rank ended, or a millisecond passed: look and watch
        c.watch(System.nanoTime());
      }
    } catch (InterruptedException e) {
      abort(-1, e);
      Thread.currentThread().interrupt();
      throw new CommPlanException("interrupted while waiting for the ranks; the " + name + " cluster was aborted", e);
    }
  }

  private void leftBehind(boolean[] done, Throwable[] failures, List<Integer> failureOrder) {
    for (int r = 0; r < ranks; r++) {
      if (!done[r]) {
        done[r] = true;
        failures[r] = new RankAbortedException("rank " + r + " did not stop within " + grace.multipliedBy(2)
            + " of the " + name + " cluster's abort (it is blocked somewhere that ignores interrupts and the"
            + " backend's abort); its thread is left behind", abortCauseOrNull());
        failureOrder.add(r);
      }
    }
    synchronized (state) {
      refusal = refusal != null ? refusal : "rank threads did not stop";
    }
  }

  /** Marks finished ranks; true when all are done. */
  private static <T> boolean allDone(List<Future<T>> futures, boolean[] done, Throwable[] failures,
      List<Integer> failureOrder) {
    boolean all = true;
    for (int r = 0; r < futures.size(); r++) {
      if (!done[r]) {
        if (futures.get(r).isDone()) {
          finish(futures.get(r), r, done, failures, failureOrder);
        } else {
          all = false;
        }
      }
    }
    return all;
  }

  private static <T> boolean awaitAll(List<Future<T>> futures, boolean[] done, Throwable[] failures,
      List<Integer> failureOrder, Duration limit) throws InterruptedException {
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
      finish(futures.get(r), r, done, failures, failureOrder);
    }
    return allDone(futures, done, failures, failureOrder);
  }

  private static <T> void finish(Future<T> future, int rank, boolean[] done, Throwable[] failures,
      List<Integer> failureOrder) {
    done[rank] = true;
    try {
      future.get();
    } catch (ExecutionException e) {
      failures[rank] = e.getCause();
      failureOrder.add(rank);
    } catch (CancellationException e) {
      failures[rank] = e;
      failureOrder.add(rank);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // cannot happen: the future is done
    }
  }

  private CommPlanException firstFailure(Throwable[] failures, List<Integer> failureOrder, RankControl c) {
    // The rank whose failure started the abort is the first failure; its task may have thrown after
    // others' (they were woken by the abort), so prefer it when it threw at all.
    int first = failureOrder.getFirst();
    synchronized (state) {
      if (abortingRank >= 0 && failures[abortingRank] != null) {
        first = abortingRank;
      }
      if (refusal == null && !c.usableAfterFailure()) {
        refusal = "rank " + first + " failed (" + failures[first].getMessage() + ")";
      }
    }
    Throwable cause = failures[first];
    CommPlanException failure = new CommPlanException("rank " + first + " of " + ranks + " failed: " + cause, cause);
    for (int rank : failureOrder) {
      whereabouts.attachTo(rank, failures[rank]);
      if (rank != first) {
        failure.addSuppressed(failures[rank]);
      }
    }
    return failure;
  }

  /**
   * Aborts the current run because {@code rank} failed with {@code cause} (-1: not a rank), from any thread:
   * the backend makes the ranks still running give up and their threads are interrupted; the first abort counts.
   *
   * @param rank the rank that failed, or -1
   * @param cause its failure
   */
  public void abort(int rank, Throwable cause) {
    List<? extends Future<?>> futures = current;
    IntPredicate stillRunning = r -> r != rank && (futures == null || !futures.get(r).isDone());
    RankControl c;
    boolean inRun;
    synchronized (state) {
      if (abortCause != null) {
        return;
      }
      // only the first abort in a run reads (a run's failure reports them), before the abort moves any rank
      whereabouts = running ? RankWhereabouts.read(threads, rank, stillRunning) : RankWhereabouts.NONE;
      abortCause = cause;
      abortingRank = rank;
      c = control;
      inRun = running;
    }
    if (c != null) {
      c.abortRanks(rank, cause, stillRunning);
      if (!inRun && !c.usableAfterFailure()) {
        refuseRuns((rank >= 0 ? "rank " + rank : "the cluster") + " failed between runs (" + cause + ")");
      }
    }
    for (int r = 0; r < ranks; r++) {
      Thread t = threads[r];
      if (r != rank && t != null && t != Thread.currentThread()) {
        t.interrupt(); // a rank blocked in code of its own (a sleep, a queue) wakes up
      }
    }
  }

  /** {@return whether the current or last run has been aborted (until the next run starts)} */
  public boolean isAborted() {
    synchronized (state) {
      return abortCause != null;
    }
  }

  /** {@return whether the cluster refuses runs after a failure} */
  public boolean isBroken() {
    synchronized (state) {
      return refusal != null;
    }
  }

  /** {@return the first failure of the current or last run, or null} */
  public Throwable abortCauseOrNull() {
    synchronized (state) {
      return abortCause;
    }
  }

  /** {@return the rank whose failure aborted the current or last run (-1: none, or not a rank)} */
  public int abortingRank() {
    synchronized (state) {
      return abortingRank;
    }
  }

  /**
   * Marks the cluster as refusing runs (its communicators are gone), for a backend's own failure paths.
   *
   * @param why the reason, which later refusals name
   */
  public void refuseRuns(String why) {
    synchronized (state) {
      if (refusal == null) {
        refusal = Objects.requireNonNull(why, "why");
      }
    }
  }

  /**
   * Stops the rank threads and waits up to a second for each other one to end: queued work is dropped, a running
   * thread interrupted. Idempotent. The backend first closes its communicators ({@link #submitToEachRank}).
   */
  @Override
  public void close() {
    synchronized (state) {
      if (closed) {
        return;
      }
      closed = true;
    }
    for (ExecutorService e : executors) {
      e.shutdownNow();
    }
    try {
      for (Thread t : threads) { // joined: an executor counts as terminated before its thread has ended
        if (t != Thread.currentThread()) {
          t.join(1000);
        }
      }
    } catch (InterruptedException interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** {@return whether {@link #close()} has been called} */
  public boolean isClosed() {
    synchronized (state) {
      return closed;
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
  public String toString() {
    return "RankSupervisor[" + name + ", " + ranks + " ranks" + (isBroken() ? ", broken" : "") + "]";
  }
}
