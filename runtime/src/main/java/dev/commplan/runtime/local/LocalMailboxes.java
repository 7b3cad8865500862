package dev.commplan.runtime.local;

import dev.commplan.model.Collective;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.spi.MetCalls;
import dev.commplan.runtime.spi.OperationLabel;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where the local backend's sends meet their receives: one channel per (source, destination) pair of
 * ranks, first in, first out, as NCCL and MPI match the transfers between two ranks in the order they
 * were issued. Only the two ranks of a transfer take part: a rank that sends to no one or receives from
 * no one never waits here.
 *
 * <p>A send is posted (no copy, nothing waits), a receive waits for the head of its channel, has the agreement
 * check compare the two ({@link MetCalls}: where data type or count differ, both ranks fail with its message,
 * the same on every backend), copies
 * straight from the sender's memory and marks the send taken; the sender's group ends once every send it
 * posted has been taken ({@link LocalTransfers}), so its memory is not written meanwhile. Nothing waits
 * forever: an abort wakes every waiter with {@link RankAbortedException}, and a wait longer than the
 * timeout fails with {@link CommTimeoutException} naming the plan, step, transfer and the peer that never
 * came (the stream's failure then aborts the cluster).
 */
final class LocalMailboxes {
  /** One side of a transfer, made once (compiled schedules reuse it on every execute). */
  static final class Transfer {
    final LocalCollective call; // the send or receive: memory, offset, type, count, label
    final int peer;
    // State of a posted send, guarded by the mailboxes' lock; reset when posted.
    boolean taken;
    /** What the sender throws: its receive did not match, or a buffer was freed; null when it went through. */
    CommPlanException mismatch;

    Transfer(LocalCollective call, int peer) {
      this.call = call;
      this.peer = peer;
    }

    /** {@code send F32 to rank 1, count 16 (plan p.X, step 0, fields [x])}. */
    String describe() {
      return call.describe() + (call.label.inPlan() ? " (" + call.label + ")" : "");
    }
  }

  private final LocalCluster cluster;
  private final LocalGroup group;
  private final int ranks;
  private final Duration timeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final ArrayDeque<Transfer>[] channels; // [source * ranks + destination]
  private Throwable abortCause;
  private int abortingRank = -1;

  @SuppressWarnings({"unchecked", "rawtypes"}) // an array of generic deques
  LocalMailboxes(LocalCluster cluster, LocalGroup group, Duration timeout) {
    this.cluster = cluster;
    this.group = group;
    this.ranks = group.size;
    this.timeout = timeout;
    this.channels = new ArrayDeque[ranks * ranks];
    for (int i = 0; i < channels.length; i++) {
      channels[i] = new ArrayDeque<>(4);
    }
  }

  /** Posts {@code send} (from its communicator's rank to {@code send.peer}); returns at once. */
  void post(Transfer send) {
    lock.lock();
    try {
      checkNotAborted(send);
      send.taken = false;
      send.mismatch = null;
      channels[send.call.comm.rank() * ranks + send.peer].addLast(send);
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Waits for the send at the head of the channel from {@code recv.peer}, checks it matches and copies it. */
  void receive(Transfer recv, LocalStream stream) {
    int rank = recv.call.comm.rank();
    ArrayDeque<Transfer> channel = channels[recv.peer * ranks + rank];
    Transfer send;
    lock.lock();
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (channel.isEmpty()) {
        await(recv, deadline, group.rankAndWorldRank(recv.peer) + " to send to it", stream);
      }
      send = channel.pollFirst();
      LocalCollective s = send.call;
      LocalCollective r = recv.call;
      List<DisagreementException> mismatch = MetCalls.compareTransfer(s.met, r.met);
      if (mismatch != null) { // the agreement check's finding: each side its own exception, with the same message
        send.mismatch = mismatch.get(s.comm.rank());
        send.taken = true;
        changed.signalAll();
        throw mismatch.get(rank);
      }
      if (s.send.isClosed() || r.recv.isClosed()) {
        String freed = "local backend: " + (s.send.isClosed() ? "rank " + s.comm.rank() + "'s send buffer ("
            + send.describe() + ")" : "rank " + rank + "'s receive buffer (" + recv.describe() + ")")
            + " was freed after the transfer was enqueued";
        send.mismatch = new CommPlanException(freed);
        send.taken = true;
        changed.signalAll();
        throw new CommPlanException(freed);
      }
    } finally {
      lock.unlock();
    }
    // The sender waits until `taken`, so its memory stays as it is while this copies (outside the lock).
    long bytes = recv.call.count * recv.call.type.byteSize();
    MemorySegment.copy(send.call.send.segment(), send.call.sendOffset, recv.call.recv.segment(),
        recv.call.recvOffset, bytes);
    lock.lock();
    try {
      send.taken = true;
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Waits until {@code send} was taken by its receiver; fails with the receiver's message if they did not match. */
  void awaitTaken(Transfer send, LocalStream stream) {
    lock.lock();
    try {
      long deadline = System.nanoTime() + timeout.toNanos();
      while (!send.taken) {
        await(send, deadline, group.rankAndWorldRank(send.peer) + " to receive what it sends", stream);
      }
      if (send.mismatch != null) {
        throw send.mismatch;
      }
    } finally {
      lock.unlock();
    }
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

  private void await(Transfer waiting, long deadline, String forWhat, LocalStream stream) {
    checkNotAborted(waiting);
    long left = deadline - System.nanoTime();
    if (left <= 0) {
      throw timedOut(waiting, forWhat, stream);
    }
    try {
      changed.awaitNanos(left);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      checkNotAborted(waiting);
      throw new CommPlanException(group.rankText(waiting.call.comm.rank()) + ": interrupted while waiting for " + forWhat
          + " at " + waiting.call.label, e);
    }
    checkNotAborted(waiting);
  }

  private void checkNotAborted(Transfer waiting) {
    if (abortCause != null) {
      int rank = waiting.call.comm.rank();
      throw new RankAbortedException(group.rankText(rank) + ": " + waiting.call.label + " abandoned because "
          + (abortingRank == waiting.call.comm.worldRank() ? "this rank failed" : abortingRank < 0
              ? "the cluster was stopped"
              : "rank " + abortingRank + " failed") + ": " + LocalCluster.brief(abortCause), abortCause);
    }
  }

  private CommTimeoutException timedOut(Transfer waiting, String forWhat, LocalStream stream) {
    int rank = waiting.call.comm.rank();
    OperationLabel label = waiting.call.label;
    String summary = "local backend: " + label + " timed out on " + group.rankText(rank) + " after " + timeout + " waiting for "
        + forWhat + " (" + waiting.describe() + "): a rank that does not issue the matching "
        + (waiting.call.collective == Collective.SEND ? "receive" : "send")
        + ", issues it in another step or order, or stops, leaves its peer waiting; the cluster is aborted";
    return new CommTimeoutException(summary, label.planName(), label.step(), label.collective(), label.fields(), rank,
        timeout, List.of(waiting.peer), stream.recorder.format(), null);
  }
}
