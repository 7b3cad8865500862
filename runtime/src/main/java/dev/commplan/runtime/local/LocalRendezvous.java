package dev.commplan.runtime.local;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.spi.MetCalls;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where the ranks' stream workers meet for each collective. Every communicator numbers its collectives
 * 0, 1, 2, ...; the n calls with the same number form one meeting. A meeting has two barriers:
 *
 * <ol>
 *   <li>arrival: once all n calls are there, the agreement check compares them ({@link MetCalls}): where they
 *       differ (collective, data type, count, op, root, or what made them: another plan or step, a direct call),
 *       every rank fails, before anything is written, with the check's message, which names the first call at
 *       which the ranks' records differ, as on every backend;
 *   <li>completion: each rank runs its slice of the element work ({@link LocalKernels}), then waits for
 *       all the others, so that nobody's receive buffer is still being written when its rank moves on.
 * </ol>
 *
 * <p>Nothing waits forever: an abort (a rank failed) wakes every waiter with {@link
 * RankAbortedException}, and a wait longer than the timeout fails with {@link CommTimeoutException}
 * naming the plan, step, collective, fields, its number and which ranks got there. The first rank to
 * time out at a meeting gives every rank waiting there its own timeout exception (their streams fail
 * with it), then the cluster is aborted, so the ranks elsewhere fail with {@link RankAbortedException}.
 */
final class LocalRendezvous {
  private final LocalCluster cluster;
  private final LocalGroup group;
  private final int ranks;
  private final Duration timeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Map<Long, Meeting> meetings = new HashMap<>();
  private Throwable abortCause;
  private int abortingRank = -1;

  private static final class Meeting {
    final long sequence;
    final LocalCollective[] calls;
    /** The calls as the agreement check compares them. */
    final MetCalls.Call[] met;
    /** The stream each rank runs its call on (its communicator's own, or a plan's: the mesh's world's). */
    final LocalStream[] streams;
    final boolean[] hasFinished;
    /**
     * When the last rank arrived: each rank's wait for its peers is this less its own arrival, which its stream
     * keeps ({@link LocalStream#arrivedNanos}), so that timing the wait allocates nothing here.
     */
    long lastArrival;
    int arrived;
    int finished;
    int left;
    /** What fails each rank here, where their calls differ (its own exception at its rank); null when they agree. */
    List<DisagreementException> mismatch;
    /** Set by the first rank to time out here: each waiting rank's own exception. */
    CommTimeoutException[] timedOut;

    Meeting(long sequence, int ranks) {
      this.sequence = sequence;
      this.calls = new LocalCollective[ranks];
      this.met = new MetCalls.Call[ranks];
      this.streams = new LocalStream[ranks];
      this.hasFinished = new boolean[ranks];
    }
  }

  LocalRendezvous(LocalCluster cluster, LocalGroup group, Duration timeout) {
    this.cluster = cluster;
    this.group = group;
    this.ranks = group.size;
    this.timeout = timeout;
  }

  /**
   * Meets the other ranks for collective number {@code sequence}, runs this rank's share, meets them again;
   * returns how long this rank waited for its peers: from its arrival to the last rank's (the flight record's
   * {@code waitedNanos}, docs/flight-records.md).
   */
  long perform(int rank, long sequence, LocalCollective call, LocalStream stream) {
    Meeting meeting = arrive(rank, sequence, call, stream);
    LocalKernels.run(meeting.calls, rank, stream.scratch);
    finish(rank, meeting, call);
    return meeting.lastArrival - stream.arrivedNanos;
  }

  /** Wakes every waiter with {@link RankAbortedException} caused by {@code cause}, now and from now on. */
  void abort(int rank, Throwable cause) {
    lock.lock();
    try {
      if (abortCause == null) {
        abortCause = cause;
        abortingRank = rank;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  private Meeting arrive(int rank, long sequence, LocalCollective call, LocalStream stream) {
    lock.lock();
    try {
      checkNotAborted(rank, sequence, call);
      Meeting meeting = meetings.computeIfAbsent(sequence, s -> new Meeting(s, ranks));
      meeting.calls[rank] = call;
      meeting.met[rank] = call.met;
      meeting.streams[rank] = stream;
      long now = System.nanoTime();
      stream.arrivedNanos = now;
      meeting.arrived++;
      if (meeting.arrived == ranks) { // the agreement check decides whether the calls agree, and words it if not
        meeting.lastArrival = now;
        meeting.mismatch = MetCalls.compareCollective(meeting.met, meeting.sequence);
        changed.signalAll();
      }
      long deadline = System.nanoTime() + timeout.toNanos();
      while (meeting.arrived < ranks) {
        await(rank, sequence, call, deadline, meeting, "arrive");
      }
      if (meeting.mismatch != null) {
        leave(meeting);
        throw meeting.mismatch.get(rank); // each rank its own, with the same message
      }
      return meeting;
    } finally {
      lock.unlock();
    }
  }

  private void finish(int rank, Meeting meeting, LocalCollective call) {
    lock.lock();
    try {
      meeting.finished++;
      meeting.hasFinished[rank] = true;
      if (meeting.finished == ranks) {
        meetings.remove(meeting.sequence);
        changed.signalAll();
      }
      long deadline = System.nanoTime() + timeout.toNanos();
      while (meeting.finished < ranks) {
        await(rank, meeting.sequence, call, deadline, meeting, "finish its share");
      }
    } finally {
      lock.unlock();
    }
  }

  /** After a mismatch nobody runs the meeting; the last rank to see it removes it. */
  private void leave(Meeting meeting) {
    meeting.left++;
    if (meeting.left == ranks) {
      meetings.remove(meeting.sequence);
    }
  }

  private void await(int rank, long sequence, LocalCollective call, long deadline, Meeting meeting, String phase) {
    checkTimedOut(rank, meeting);
    checkNotAborted(rank, sequence, call);
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw timedOut(rank, sequence, call, meeting, phase);
    }
    try {
      changed.awaitNanos(left);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      checkNotAborted(rank, sequence, call);
      checkTimedOut(rank, meeting);
      throw new CommPlanException(
          group.rankText(rank) + ": interrupted while waiting for the other ranks at " + call.label + " (#" + sequence
              + ")", e);
    }
    checkTimedOut(rank, meeting);
    checkNotAborted(rank, sequence, call);
  }

  /** Another rank timed out at this meeting: this one throws its own timeout (its stream already has it). */
  private static void checkTimedOut(int rank, Meeting meeting) {
    if (meeting.timedOut != null && meeting.timedOut[rank] != null) {
      throw meeting.timedOut[rank];
    }
  }

  private void checkNotAborted(int rank, long sequence, LocalCollective call) {
    if (abortCause != null) {
      throw new RankAbortedException(
          group.rankText(rank) + ": " + call.label + " (collective #" + sequence + ") abandoned because "
              + (abortingRank == call.comm.worldRank() ? "this rank failed" : abortingRank < 0
                  ? "the cluster was stopped" : "rank " + abortingRank + " failed") + ": "
              + LocalCluster.brief(abortCause),
          abortCause);
    }
  }

  /**
   * The first rank to time out at {@code meeting}: makes a timeout exception for every rank waiting there,
   * fails their streams with it, this rank's included (before any abort, so that they report the timeout
   * rather than the abort), wakes them, and returns this rank's. The caller's worker then aborts the cluster.
   */
  private CommTimeoutException timedOut(int rank, long sequence, LocalCollective call, Meeting meeting, String phase) {
    List<Integer> there = new ArrayList<>();
    List<Integer> missing = new ArrayList<>();
    boolean arriving = phase.equals("arrive");
    for (int r = 0; r < ranks; r++) {
      boolean done = arriving ? meeting.calls[r] != null : meeting.hasFinished[r];
      (done ? there : missing).add(r);
    }
    String whoIsThere = group.ranksText(there) + (arriving ? " arrived" : " finished") + ", " + group.ranksText(missing)
        + " did not";
    meeting.timedOut = new CommTimeoutException[ranks];
    for (int r : there) {
      LocalCollective waiting = meeting.calls[r];
      String summary = "local backend: " + waiting.label + " (collective #" + sequence + ") timed out on "
          + group.rankText(r)
          + " after " + timeout + " waiting for every rank to " + phase + ": " + whoIsThere
          + " (a rank that skips a collective, or issues its collectives in another order, or stops, leaves the"
          + " others waiting; set the timeout with CommOptions.timeout, on LocalCluster's constructor);"
          + " the cluster is aborted";
      CommTimeoutException e = new CommTimeoutException(summary, waiting.label.planName(), waiting.label.step(),
          waiting.label.collective(), waiting.label.fields(), r, timeout, missing,
          meeting.streams[r].recorder.format(), null);
      meeting.timedOut[r] = e;
      meeting.streams[r].fail(e); // this rank's too: a peer's abort may reach its stream before its worker records e
    }
    changed.signalAll();
    return meeting.timedOut[rank];
  }
}
