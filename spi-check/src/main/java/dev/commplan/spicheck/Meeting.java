package dev.commplan.spicheck;

import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.RankAbortedException;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Where a cluster's ranks meet for each collective, in the order every rank calls them: each rank shows
 * its send side, waits for all ({@link CyclicBarrier}), computes its own result from every rank's send
 * side into a block of its own ({@link Kernels}), waits for all again (so that no one still reads a send
 * side that a result overwrites: in place, they are the same memory), and then writes its result.
 *
 * <p>No wait is longer than the timeout: a rank that waited that long fails with {@link
 * CommTimeoutException} naming the ranks that did not come, and the meeting breaks ({@link #abort}), which
 * wakes every other rank with {@link RankAbortedException}. A broken meeting stays broken.
 */
final class Meeting {
  private final int ranks;
  private final Duration timeout;
  private final CyclicBarrier barrier;
  /** Each rank's send side of the collective being run; written before the first wait, read after it. */
  private final MemorySegment[] sends;
  /** How many collectives each rank has entered, to name the missing ranks when one times out. */
  private final AtomicLongArray entered;
  private volatile Throwable abortCause;
  private volatile int abortingRank = -1;

  Meeting(int ranks, Duration timeout) {
    this.ranks = ranks;
    this.timeout = timeout;
    this.barrier = new CyclicBarrier(ranks);
    this.sends = new MemorySegment[ranks];
    this.entered = new AtomicLongArray(ranks);
  }

  int ranks() {
    return ranks;
  }

  /** Runs {@code call} for {@code rank}: every rank calls this with the same call, in the same order. */
  void run(int rank, Call call, MemorySegment send, MemorySegment recv) {
    ensureNotBroken(rank);
    sends[rank] = send;
    long sequence = entered.incrementAndGet(rank);
    await(rank, call, sequence);
    MemorySegment result = Kernels.result(call, rank, sends);
    await(rank, call, sequence);
    if (result != null) {
      MemorySegment.copy(result, 0, recv, 0, result.byteSize());
    }
  }

  /** Throws {@link RankAbortedException} if the meeting was broken. */
  void ensureNotBroken(int rank) {
    Throwable cause = abortCause;
    if (cause != null) {
      throw aborted(rank, cause);
    }
  }

  boolean isBroken() {
    return abortCause != null;
  }

  /** Breaks the meeting because {@code failedRank} (-1: none in particular) failed: every waiting rank wakes. */
  void abort(int failedRank, Throwable cause) {
    synchronized (this) {
      if (abortCause != null) {
        return;
      }
      abortingRank = failedRank;
      abortCause = cause;
    }
    barrier.reset(); // the ranks waiting now get BrokenBarrierException
  }

  private void await(int rank, Call call, long sequence) {
    try {
      barrier.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      List<Integer> missing = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        if (entered.get(r) < sequence) {
          missing.add(r);
        }
      }
      CommTimeoutException timedOut = new CommTimeoutException("spi-check rank " + rank + " of " + ranks + ": "
          + call.label() + " (the rank's collective number " + sequence + ") waited " + timeout + " for rank(s) "
          + missing + ", which did not get there", call.planName(), call.step(), call.label(), call.fields(), rank,
          timeout, missing, null, null);
      abort(rank, timedOut);
      throw timedOut;
    } catch (BrokenBarrierException e) {
      throw aborted(rank, abortCause != null ? abortCause : e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the supervisor interrupts the ranks of an aborted run
      throw aborted(rank, abortCause != null ? abortCause : e);
    }
  }

  private RankAbortedException aborted(int rank, Throwable cause) {
    int by = abortingRank;
    return new RankAbortedException("spi-check rank " + rank + " of " + ranks + " gave up: "
        + (by >= 0 ? "rank " + by + " failed" : "the cluster was aborted or closed") + ": " + cause, cause);
  }
}
