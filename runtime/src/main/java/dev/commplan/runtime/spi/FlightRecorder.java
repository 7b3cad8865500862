package dev.commplan.runtime.spi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The last operations of one rank, kept in a fixed ring of preallocated slots: sequence number, what it
 * was ({@link OperationLabel}, a reference), when it was enqueued, started and ended, and its state.
 * Recording allocates nothing, so backends record every operation of every execute; the record is
 * printed in timeout and abort messages ("which op was this rank on, and what came before"), and
 * {@link #snapshot()} and {@link #format()} give it for debugging.
 *
 * <p>Thread-safe: the enqueueing thread and the stream's worker (or watchdog) record concurrently; each
 * method holds the recorder's monitor briefly and calls nothing else while holding it.
 */
public final class FlightRecorder {
  /** The number of operations a recorder keeps unless told otherwise. */
  public static final int DEFAULT_CAPACITY = 32;

  /** Where an operation is. */
  public enum State {
    /** On the stream, not yet started (or, on NCCL, not known to have finished). */
    ENQUEUED,
    /** Running (local backend: the stream's worker took it). */
    STARTED,
    /** Finished. */
    FINISHED,
    /** Failed, timed out, or abandoned because the group was aborted. */
    FAILED
  }

  private static final State[] STATES = State.values();

  /**
   * One recorded operation.
   *
   * @param sequence the operation's number on this rank, from 0
   * @param label what it was
   * @param state where it is
   * @param enqueueNanos {@code System.nanoTime()} when it was enqueued
   * @param startNanos when it started, 0 if not known
   * @param endNanos when it finished or failed, 0 if not known
   */
  public record Entry(long sequence, OperationLabel label, State state, long enqueueNanos, long startNanos,
      long endNanos) {}

  private final int rank;
  private final int capacity;
  private final long[] sequence;
  private final OperationLabel[] label;
  private final byte[] state;
  private final long[] enqueued;
  private final long[] started;
  private final long[] ended;
  private long next;
  /** Every operation numbered below this has ended (or left the ring): where {@link #finishedBefore} starts. */
  private long endedBelow;

  /**
   * A recorder for {@code rank} keeping the last {@code capacity} operations.
   *
   * @param rank the rank recorded, for the text
   * @param capacity how many operations to keep, at least 1
   */
  public FlightRecorder(int rank, int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, not " + capacity);
    }
    this.rank = rank;
    this.capacity = capacity;
    this.sequence = new long[capacity];
    this.label = new OperationLabel[capacity];
    this.state = new byte[capacity];
    this.enqueued = new long[capacity];
    this.started = new long[capacity];
    this.ended = new long[capacity];
    Arrays.fill(sequence, -1);
  }

  /** {@return the number of operations kept} */
  public int capacity() {
    return capacity;
  }

  /**
   * The ring slot of operation {@code seq}; backends keep per-slot resources (NCCL: a CUDA event).
   *
   * @param seq an operation's sequence number
   * @return the slot, in {@code [0, capacity())}
   */
  public int slot(long seq) {
    return (int) (seq % capacity);
  }

  /**
   * Records an operation just enqueued and returns its sequence number.
   *
   * @param what the operation; stored by reference
   * @param nanos {@code System.nanoTime()} at enqueue
   * @return the operation's sequence number
   */
  public synchronized long enqueued(OperationLabel what, long nanos) {
    long seq = next++;
    int i = slot(seq);
    sequence[i] = seq;
    label[i] = what;
    state[i] = (byte) State.ENQUEUED.ordinal();
    enqueued[i] = nanos;
    started[i] = 0;
    ended[i] = 0;
    return seq;
  }

  /**
   * Operation {@code seq} started (ignored once it has left the ring).
   *
   * @param seq the operation's sequence number
   * @param nanos {@code System.nanoTime()} when it started
   */
  public synchronized void started(long seq, long nanos) {
    int i = slot(seq);
    if (sequence[i] == seq) {
      state[i] = (byte) State.STARTED.ordinal();
      started[i] = nanos;
    }
  }

  /**
   * Operation {@code seq} finished (ignored once it has left the ring).
   *
   * @param seq the operation's sequence number
   * @param nanos {@code System.nanoTime()} when it finished
   */
  public synchronized void finished(long seq, long nanos) {
    end(seq, State.FINISHED, nanos);
  }

  /**
   * Operation {@code seq} finished, unless it has ended already (ignored once it has left the ring): for a
   * backend that learns of operations finishing per stream, not in the order they were recorded.
   *
   * @param seq the operation's sequence number
   * @param nanos {@code System.nanoTime()} to record as its end
   */
  public synchronized void finishedIfPending(long seq, long nanos) {
    int i = slot(seq);
    if (sequence[i] == seq && state[i] < State.FINISHED.ordinal()) {
      end(seq, State.FINISHED, nanos);
    }
  }

  /**
   * Operation {@code seq} failed (ignored once it has left the ring).
   *
   * @param seq the operation's sequence number
   * @param nanos {@code System.nanoTime()} when it failed
   */
  public synchronized void failed(long seq, long nanos) {
    end(seq, State.FAILED, nanos);
  }

  /**
   * Every kept operation numbered below {@code seq} that has not ended is finished now.
   *
   * @param seq the first sequence number not to mark
   * @param nanos {@code System.nanoTime()} to record as their end
   */
  public synchronized void finishedBefore(long seq, long nanos) {
    // Operations below endedBelow have all ended: start there, or at the oldest one kept.
    long to = Math.min(seq, next);
    for (long s = Math.max(endedBelow, next - capacity); s < to; s++) {
      int i = slot(s);
      if (sequence[i] == s && state[i] < State.FINISHED.ordinal()) {
        state[i] = (byte) State.FINISHED.ordinal();
        ended[i] = nanos;
      }
    }
    endedBelow = Math.max(endedBelow, to);
  }

  /**
   * Every kept operation that has not ended is failed now (after a timeout or abort).
   *
   * @param nanos {@code System.nanoTime()} to record as their end
   */
  public synchronized void failPending(long nanos) {
    for (int i = 0; i < capacity; i++) {
      if (sequence[i] >= 0 && state[i] < State.FINISHED.ordinal()) {
        state[i] = (byte) State.FAILED.ordinal();
        ended[i] = nanos;
      }
    }
    endedBelow = next;
  }

  private void end(long seq, State s, long nanos) {
    int i = slot(seq);
    if (sequence[i] == seq) {
      state[i] = (byte) s.ordinal();
      ended[i] = nanos;
    }
  }

  /** {@return the number the next operation gets (the count of operations recorded so far)} */
  public synchronized long nextSequence() {
    return next;
  }

  /** {@return the kept operations, oldest first; allocates, for failures and debugging} */
  public synchronized List<Entry> snapshot() {
    List<Entry> entries = new ArrayList<>(capacity);
    long first = Math.max(0, next - capacity);
    for (long seq = first; seq < next; seq++) {
      int i = slot(seq);
      if (sequence[i] == seq) {
        entries.add(new Entry(seq, label[i], STATES[state[i]], enqueued[i], started[i], ended[i]));
      }
    }
    return entries;
  }

  /** {@return the oldest kept operation that has not ended, or null} */
  public synchronized Entry oldestPending() {
    for (Entry e : snapshot()) {
      if (e.state() == State.ENQUEUED || e.state() == State.STARTED) {
        return e;
      }
    }
    return null;
  }

  /**
   * The record as text, most recent last, with times relative to now.
   *
   * @return the text, with a header line naming the rank
   */
  public String format() {
    return format(System.nanoTime());
  }

  /**
   * The record as text, one line per operation, most recent last, times in ms before {@code nowNanos}:
   * <pre>
   * flight record of rank 1 (last 3 of 3 operations, most recent last):
   *   #0 FINISHED  enqueued -1204.3 ms, took 0.1 ms: plan p.Grads, step 0, all-reduce F32 SUM, count 16, fields [w]
   *   #1 STARTED   enqueued -1003.9 ms, started -1003.8 ms: plan p.Grads, step 1, ...
   * </pre>
   *
   * @param nowNanos the {@code System.nanoTime()} that times are shown relative to
   * @return the text, with a header line naming the rank
   */
  public String format(long nowNanos) {
    List<Entry> entries = snapshot();
    long total;
    synchronized (this) {
      total = next;
    }
    StringBuilder sb = new StringBuilder()
        .append("flight record of rank ").append(rank).append(" (last ").append(entries.size()).append(" of ")
        .append(total).append(total == 1 ? " operation" : " operations").append(", most recent last):");
    if (entries.isEmpty()) {
      sb.append("\n  (nothing enqueued yet)");
    }
    for (Entry e : entries) {
      sb.append(String.format(Locale.ROOT, "%n  #%d %-9s enqueued %.1f ms ago", e.sequence(), e.state(),
          (nowNanos - e.enqueueNanos()) / 1e6));
      if (e.startNanos() != 0) {
        sb.append(String.format(Locale.ROOT, ", started %.1f ms ago", (nowNanos - e.startNanos()) / 1e6));
      }
      if (e.endNanos() != 0) {
        long from = e.startNanos() != 0 ? e.startNanos() : e.enqueueNanos();
        sb.append(String.format(Locale.ROOT, ", %s after %.1f ms", e.state() == State.FAILED ? "failed" : "ended",
            (e.endNanos() - from) / 1e6));
      }
      sb.append(": ").append(e.label());
    }
    return sb.toString();
  }

  @Override
  public String toString() {
    return "FlightRecorder[rank " + rank + ", " + capacity + " slots]";
  }
}
