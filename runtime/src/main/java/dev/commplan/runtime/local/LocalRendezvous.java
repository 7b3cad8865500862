package dev.commplan.runtime.local;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.spi.OperationLabel;
import dev.commplan.runtime.RankAbortedException;
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
 *   <li>arrival: once all n calls are there they are compared (collective, data type, count, op, root);
 *       a mismatch fails every rank with one message naming both sides, before anything is written;
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
    /** The stream each rank runs its call on (its communicator's own, or a plan's: the mesh's world's). */
    final LocalStream[] streams;
    final boolean[] hasFinished;
    int arrived;
    int finished;
    int left;
    /** What fails every rank here: a mismatch of the calls or of the plans' order; null when they agree. */
    DisagreementException mismatch;
    /** Set by the first rank to time out here: each waiting rank's own exception. */
    CommTimeoutException[] timedOut;

    Meeting(long sequence, int ranks) {
      this.sequence = sequence;
      this.calls = new LocalCollective[ranks];
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

  /** Meets the other ranks for collective number {@code sequence}, runs this rank's share, meets them again. */
  void perform(int rank, long sequence, LocalCollective call, LocalStream stream) {
    Meeting meeting = arrive(rank, sequence, call, stream);
    LocalKernels.run(meeting.calls, rank, stream.scratch);
    finish(rank, meeting, call);
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
      meeting.streams[rank] = stream;
      meeting.arrived++;
      if (meeting.arrived == ranks) {
        meeting.mismatch = mismatch(meeting);
        changed.signalAll();
      }
      long deadline = System.nanoTime() + timeout.toNanos();
      while (meeting.arrived < ranks) {
        await(rank, sequence, call, deadline, meeting, "arrive");
      }
      if (meeting.mismatch != null) {
        leave(meeting);
        DisagreementException m = meeting.mismatch; // each rank throws its own, with the same finding
        throw new DisagreementException(m.getMessage(), m.thisRank(), m.otherRank(), m.differingRanks(),
            m.differingFields());
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
   * fails their streams with it (before the abort, so that they report the timeout rather than the
   * abort), wakes them, and returns this rank's. The caller's worker then aborts the cluster.
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
      if (r != rank) {
        meeting.streams[r].fail(e);
      }
    }
    changed.signalAll();
    return meeting.timedOut[rank];
  }

  /**
   * Null if every rank called the same thing; else a message naming rank 0's call and each differing one by
   * its label: the plan, step and fields, a direct call, or one of the agreement check's own calls.
   */
  private DisagreementException mismatch(Meeting meeting) {
    LocalCollective reference = meeting.calls[0];
    StringBuilder differing = new StringBuilder();
    List<Integer> ranks = new ArrayList<>();
    for (int r = 1; r < meeting.calls.length; r++) {
      if (!reference.matches(meeting.calls[r])) {
        differing.append(", rank ").append(r).append(" called ").append(meeting.calls[r].label);
        ranks.add(r);
      }
    }
    if (!differing.isEmpty()) {
      return new DisagreementException("local backend: collective #" + meeting.sequence
          + (group.isWorld() ? "" : " of " + group.label) + " does not match across ranks:"
          + " rank 0 called " + reference.label + differing + "; every rank must issue the same collectives,"
          + " with the same data type, count, op and root, in the same order", reference.label.toString(),
          meeting.calls[ranks.getFirst()].label.toString(), ranks, List.of("call"));
    }
    return orderMismatch(meeting);
  }

  /**
   * The execute-order check, free here since the ranks meet anyway: calls of the same shape that are
   * steps of different plans (or different steps), or a plan's step on one rank and a direct call on
   * another, mean the ranks issue their work in different orders, which NCCL would not notice (it would mix
   * their data). Direct calls on every rank carry nothing more to compare.
   */
  private DisagreementException orderMismatch(Meeting meeting) {
    int referenceRank = -1;
    for (int r = 0; r < meeting.calls.length && referenceRank < 0; r++) {
      if (meeting.calls[r].label.planName() != null) {
        referenceRank = r;
      }
    }
    if (referenceRank < 0) {
      return null;
    }
    OperationLabel reference = meeting.calls[referenceRank].label;
    List<Integer> differing = new ArrayList<>();
    OperationLabel found = null;
    for (int r = 0; r < meeting.calls.length; r++) {
      OperationLabel label = meeting.calls[r].label;
      if (!label.inPlan() || !label.planName().equals(reference.planName()) || label.step() != reference.step()) {
        differing.add(r);
        found = found == null ? label : found;
      }
    }
    if (differing.isEmpty()) {
      return null;
    }
    String expected = "plan " + reference.planName() + ", step " + reference.step();
    String other = found.inPlan() ? "plan " + found.planName() + ", step " + found.step() : "a direct call";
    return new DisagreementException("local backend: the ranks execute their plans in different orders: collective #"
        + meeting.sequence + (group.isWorld() ? "" : " of " + group.label) + " is " + expected + " on rank "
        + referenceRank + " but " + other + " on rank" + (differing.size() == 1 ? " " + differing.getFirst() : "s "
        + differing) + " (calls of the same shape, " + meeting.calls[referenceRank].describe() + ": NCCL would mix"
        + " their data without a word); every rank must execute the same plans, their steps and its direct calls,"
        + " in the same order", expected, other, differing, List.of("plan"));
  }
}
