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
import java.util.concurrent.Future;
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
 *
 * <p>A failed run has every rank write its flight record first, where the backend gave the cluster's records
 * ({@link #flightRecords}) and they have a folder: each with the failure that rank saw, or, for a rank whose
 * task returned, what stopped the run (docs/flight-records.md).
 *
 * <p>The supervisor applies these rules; its parts keep the rest: the ranks' threads ({@code RankThreads}),
 * one run's futures and failures ({@code RankRun}), and whether the cluster may run and how its last run was
 * aborted ({@code ClusterState}).
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
  private final RankThreads threads;
  private final ClusterState state = new ClusterState();
  /** The current run, for an abort to know which ranks are still running; null between runs. */
  private volatile RankRun<?> current;
  /** The ranks' flight records, written when a run fails; null where the backend keeps none. */
  private volatile FlightJob flightJob;

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
    this.threads = new RankThreads(name, ranks);
  }

  /**
   * Connects the backend; once, before the first {@link #call}.
   *
   * @param control the backend's side
   */
  public void control(RankControl control) {
    state.control(control);
  }

  /**
   * The ranks' flight records: every rank writes its own to the job's folder when a run fails ({@link
   * FlightJob#writeOnFailure}), before the run throws.
   *
   * @param job the cluster's records
   */
  public void flightRecords(FlightJob job) {
    this.flightJob = job;
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
      futures.add(threads.submit(r, () -> action.apply(rank)));
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
    RankControl c = state.startRun(name);
    try {
      RankRun<T> run = RankRun.start(threads, rank -> () -> runRank(rank, function, c));
      current = run;
      await(run, c);
      if (run.failed()) {
        throw failure(run, c);
      }
      List<T> results = run.results();
      compareLastCalls(c);
      return results;
    } finally {
      current = null;
      state.endRun();
    }
  }

  /**
   * Rank {@code rank}'s task in a run, on its thread: {@code function} with its communicator, then a
   * synchronize of that communicator's stream. A failure aborts the run at once, from this thread, so that
   * nobody waits for the caller to notice.
   */
  private <T> T runRank(int rank, RankFunction<T> function, RankControl c) throws Exception {
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
      abort(rank, t);
      throw t;
    }
  }

  /** Waits for every rank, watching; once aborted, applies the grace periods. */
  private void await(RankRun<?> run, RankControl c) {
    try {
      while (!run.allDone()) {
        if (isAborted()) {
          if (!run.awaitAll(grace)) {
            run.forEachNotDone(c::forceAbort);
            if (!run.awaitAll(grace)) {
              leaveBehind(run);
            }
          }
          return;
        }
        run.awaitAnEndOrAMillisecond(); // a rank ended, or a millisecond passed: look and watch
        c.watch(System.nanoTime());
      }
    } catch (InterruptedException e) {
      abort(-1, e);
      Thread.currentThread().interrupt();
      throw new CommPlanException("interrupted while waiting for the ranks; the " + name + " cluster was aborted", e);
    }
  }

  /** The ranks that did not stop within both grace periods fail as left behind, and the cluster is broken. */
  private void leaveBehind(RankRun<?> run) {
    run.leaveBehind(r -> new RankAbortedException("rank " + r + " did not stop within " + grace.multipliedBy(2)
        + " of the " + name + " cluster's abort (it is blocked somewhere that ignores interrupts and the"
        + " backend's abort); its thread is left behind", abortCauseOrNull()));
    state.refuseRuns("rank threads did not stop");
  }

  /**
   * The failure a failed run throws: the first failure with the others suppressed, each carrying where its
   * rank was at the abort. The cluster refuses later runs if the backend says a rank cannot run again.
   */
  private CommPlanException failure(RankRun<?> run, RankControl c) {
    // The rank whose failure started the abort is the first failure; its task may have thrown after
    // others' (they were woken by the abort), so prefer it when it threw at all.
    int first = run.failureOrder().getFirst();
    int aborting = abortingRank();
    if (aborting >= 0 && run.failure(aborting) != null) {
      first = aborting;
    }
    if (!isBroken() && !c.usableAfterFailure()) {
      refuseRuns("rank " + first + " failed (" + run.failure(first).getMessage() + ")");
    }
    Throwable cause = run.failure(first);
    writeFlightRecords(run::failure, "rank " + first + " failed: " + cause.getMessage());
    CommPlanException failure = new CommPlanException("rank " + first + " of " + ranks + " failed: " + cause, cause);
    RankWhereabouts whereabouts = state.whereabouts();
    for (int rank : run.failureOrder()) {
      whereabouts.attachTo(rank, run.failure(rank));
      if (rank != first) {
        failure.addSuppressed(run.failure(rank));
      }
    }
    return failure;
  }

  /** Every rank returned: what no agreement check compared yet (each rank's last calls) is compared here. */
  private void compareLastCalls(RankControl c) {
    DisagreementException e = Agreement.compareUnchecked(ranks, c::communicator);
    if (e != null) {
      writeFlightRecords(r -> e, e.getMessage());
      throw new CommPlanException("every rank of the " + name + " cluster returned, but " + e.getMessage(), e);
    }
  }

  /**
   * Every rank writes its flight record, where there is a folder for them: with the failure {@code failureOf} gives
   * for it, or, for a rank that did not fail itself, that {@code stoppedBy} stopped the run.
   */
  private void writeFlightRecords(java.util.function.IntFunction<Throwable> failureOf, String stoppedBy) {
    FlightJob job = flightJob;
    if (job != null) {
      job.writeOnFailure(r -> {
        Throwable own = failureOf.apply(r);
        return own != null ? String.valueOf(own.getMessage()) : "rank " + r + " was stopped because " + stoppedBy;
      });
    }
  }

  /**
   * Aborts the current run because {@code rank} failed with {@code cause} (-1: not a rank), from any thread:
   * the backend makes the ranks still running give up and their threads are interrupted; the first abort counts.
   *
   * @param rank the rank that failed, or -1
   * @param cause its failure
   */
  public void abort(int rank, Throwable cause) {
    RankRun<?> run = current;
    IntPredicate stillRunning = r -> r != rank && (run == null || run.isRunning(r));
    // only the first abort in a run reads where the ranks are (a run's failure reports it), before it moves any
    ClusterState.FirstAbort first = state.abort(rank, cause,
        () -> RankWhereabouts.read(threads.threads(), rank, stillRunning));
    if (first == null) {
      return;
    }
    RankControl c = first.control();
    if (c != null) {
      c.abortRanks(rank, cause, stillRunning);
      if (!first.duringRun() && !c.usableAfterFailure()) {
        refuseRuns((rank >= 0 ? "rank " + rank : "the cluster") + " failed between runs (" + cause + ")");
      }
    }
    threads.interruptAllBut(rank); // a rank blocked in code of its own (a sleep, a queue) wakes up
  }

  /** {@return whether the current or last run has been aborted (until the next run starts)} */
  public boolean isAborted() {
    return state.isAborted();
  }

  /** {@return whether the cluster refuses runs after a failure} */
  public boolean isBroken() {
    return state.isBroken();
  }

  /** {@return the first failure of the current or last run, or null} */
  public Throwable abortCauseOrNull() {
    return state.abortCause();
  }

  /** {@return the rank whose failure aborted the current or last run (-1: none, or not a rank)} */
  public int abortingRank() {
    return state.abortingRank();
  }

  /**
   * Marks the cluster as refusing runs (its communicators are gone), for a backend's own failure paths.
   *
   * @param why the reason, which later refusals name
   */
  public void refuseRuns(String why) {
    state.refuseRuns(why);
  }

  /**
   * Stops the rank threads and waits up to a second for each other one to end: queued work is dropped, a running
   * thread interrupted. Idempotent. The backend first closes its communicators ({@link #submitToEachRank}).
   */
  @Override
  public void close() {
    if (state.close()) {
      threads.close();
    }
  }

  /** {@return whether {@link #close()} has been called} */
  public boolean isClosed() {
    return state.isClosed();
  }

  @Override
  public String toString() {
    return "RankSupervisor[" + name + ", " + ranks + " ranks" + (isBroken() ? ", broken" : "") + "]";
  }
}
