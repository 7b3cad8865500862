package dev.commplan.runtime.spi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.spi.OperationLabel.Kind;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The last operations of one rank on one stream (or, on NCCL, of one communicator), kept in a fixed ring of
 * preallocated slots: sequence number, what it was ({@link OperationLabel}, a reference; or, for a direct
 * call, its arguments, stored as primitives: {@link #enqueuedDirect}), when it was enqueued, started and ended,
 * its state, its number in its group's sequence and how long this rank waited in it for its peers. Recording
 * allocates nothing, so backends record every operation of every execute; the record is printed in timeout
 * and abort messages ("which op was this rank on, and what came before"), written to disk by its {@link
 * FlightGroup}'s {@link FlightLog} (docs/flight-records.md), and {@link #snapshot()} and {@link #format()} give
 * it for debugging.
 *
 * <p>Two numbers: an operation's <em>sequence number</em> here ({@link Entry#sequence()}) counts every operation
 * this recorder kept, and names its ring slot ({@link #slot}); its <em>group sequence number</em> ({@link
 * Entry#groupSeq()}), taken from the recorder's {@link FlightGroup} when it is enqueued, counts only the
 * operations every member of the group issues in the same order ({@link Kind#sequenced()}), over all of the
 * group's recorders, and is what lines the ranks' records up.
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
   * @param sequence the operation's number in this recorder, from 0
   * @param label what it was
   * @param state where it is
   * @param enqueueNanos {@code System.nanoTime()} when it was enqueued
   * @param startNanos when it started, 0 if not known
   * @param endNanos when it finished or failed, 0 if not known
   * @param groupSeq its number in its group's sequence ({@link Kind#sequenced()} operations of a recorder with a
   *     {@link FlightGroup}), or -1
   * @param waitedNanos how long this rank waited in it for its peers, or -1 if not known
   * @param stream the stream it was enqueued on: {@code stream 0} is the communicator's own
   * @param kind what it is to the other ranks: its label's kind, or what the backend said of a direct call
   *     ({@link #enqueuedDirect})
   */
  public record Entry(long sequence, OperationLabel label, State state, long enqueueNanos, long startNanos,
      long endNanos, long groupSeq, long waitedNanos, String stream, Kind kind) {
    /**
     * An entry outside any group's sequence, its wait not known, on the communicator's own stream, of its label's
     * kind.
     *
     * @param sequence the operation's number in its recorder, from 0
     * @param label what it was
     * @param state where it is
     * @param enqueueNanos {@code System.nanoTime()} when it was enqueued
     * @param startNanos when it started, 0 if not known
     * @param endNanos when it finished or failed, 0 if not known
     */
    public Entry(long sequence, OperationLabel label, State state, long enqueueNanos, long startNanos,
        long endNanos) {
      this(sequence, label, state, enqueueNanos, startNanos, endNanos, -1, -1, OWN_STREAM, label.kind());
    }
  }

  /** The name of a communicator's own stream in records: {@value}. */
  public static final String OWN_STREAM = "stream 0";

  private static final Kind[] KINDS = Kind.values();
  private static final Collective[] COLLECTIVES = Collective.values();
  private static final DataType[] TYPES = DataType.values();
  private static final ReduceOp[] OPS = ReduceOp.values();

  private final int rank;
  private final int capacity;
  private final long[] sequence;
  private final OperationLabel[] label;
  private final byte[] state;
  private final long[] enqueued;
  private final long[] started;
  private final long[] ended;
  /** Each slot's number in the group's sequence, or -1. */
  private final long[] groupSeq;
  /** Each slot's wait for its peers, or -1 while not known. */
  private final long[] waited;
  private final byte[] kind;
  private final String[] streamName;
  /** A direct call's arguments, stored as primitives where its label is null: the collective's ordinal. */
  private final byte[] directCollective;
  private final byte[] directType;
  private final byte[] directOp; // -1: none
  private final long[] directCount;
  private final int[] directRootOrPeer;
  private final String[] directWhat; // what the backend calls a direct call of its own, or null
  /** The group whose sequence {@link Kind#sequenced()} operations take their numbers from, or null. */
  private final FlightGroup group;
  private final String stream;
  /** The collectives (not checks, sends or local work) whose wait is known, and the sum of their waits. */
  private long waitedCount;
  private long waitedSum;
  private long next;
  /** Every operation numbered below this has ended (or left the ring): where {@link #finishedBefore} starts. */
  private long endedBelow;

  /**
   * A recorder for {@code rank} keeping the last {@code capacity} operations, outside any group: its operations
   * take no group sequence number, and its stream is {@value #OWN_STREAM}.
   *
   * @param rank the rank recorded, for the text
   * @param capacity how many operations to keep, at least 1
   */
  public FlightRecorder(int rank, int capacity) {
    this(rank, capacity, null, OWN_STREAM);
  }

  /**
   * A recorder of one stream of {@code group}'s communicator; {@link FlightGroup#recorder} makes them.
   *
   * @param rank the rank recorded, for the text
   * @param capacity how many operations to keep, at least 1
   * @param group the group whose sequence its operations take numbers of, or null
   * @param stream the stream's name in records: {@value #OWN_STREAM} for the communicator's own
   */
  FlightRecorder(int rank, int capacity, FlightGroup group, String stream) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive, not " + capacity);
    }
    this.rank = rank;
    this.capacity = capacity;
    this.group = group;
    this.stream = stream;
    this.sequence = new long[capacity];
    this.label = new OperationLabel[capacity];
    this.state = new byte[capacity];
    this.enqueued = new long[capacity];
    this.started = new long[capacity];
    this.ended = new long[capacity];
    this.groupSeq = new long[capacity];
    this.waited = new long[capacity];
    this.kind = new byte[capacity];
    this.streamName = new String[capacity];
    this.directCollective = new byte[capacity];
    this.directType = new byte[capacity];
    this.directOp = new byte[capacity];
    this.directCount = new long[capacity];
    this.directRootOrPeer = new int[capacity];
    this.directWhat = new String[capacity];
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
   * Records an operation just enqueued on this recorder's stream and returns its sequence number.
   *
   * @param what the operation; stored by reference
   * @param nanos {@code System.nanoTime()} at enqueue
   * @return the operation's sequence number
   */
  public long enqueued(OperationLabel what, long nanos) {
    return enqueued(what, stream, nanos);
  }

  /**
   * Records an operation just enqueued on {@code onStream} (a recorder of several streams: NCCL's) and returns
   * its sequence number.
   *
   * @param what the operation; stored by reference
   * @param onStream the stream's name in records, stored by reference
   * @param nanos {@code System.nanoTime()} at enqueue
   * @return the operation's sequence number
   */
  public synchronized long enqueued(OperationLabel what, String onStream, long nanos) {
    int i = take(what.kind(), onStream, nanos);
    label[i] = what;
    return sequence[i];
  }

  /**
   * Records a direct call just enqueued on {@code onStream}, by its arguments (no label is made: a backend's
   * direct calls allocate nothing), and returns its sequence number. Its label is made only when it is read:
   * {@code WHAT: CALL} where the backend names it ({@code what}), else the agreement check's words for a {@link
   * Kind#CHECK}, else a direct call's ({@link OperationLabel#direct(OperationLabel.Call)}).
   *
   * @param collective the collective
   * @param type its data type
   * @param op its reduction, or null
   * @param count its count
   * @param rootOrPeer its root, a send's or receive's peer, or -1
   * @param kind what it is to the other ranks: {@link Kind#COLLECTIVE} or {@link Kind#P2P} for a user's call,
   *     {@link Kind#CHECK} for the agreement check's, {@link Kind#LOCAL} for one no other rank's record lines up
   *     with (MPI's comparison at a close, met only by ranks that close)
   * @param what what the backend calls it, stored by reference ({@code agreement check at close() of world}), or
   *     null
   * @param onStream the stream's name in records, stored by reference
   * @param nanos {@code System.nanoTime()} at enqueue
   * @return the operation's sequence number
   */
  public synchronized long enqueuedDirect(Collective collective, DataType type, ReduceOp op, long count,
      int rootOrPeer, Kind kind, String what, String onStream, long nanos) {
    int i = take(kind, onStream, nanos);
    label[i] = null;
    directCollective[i] = (byte) collective.ordinal();
    directType[i] = (byte) type.ordinal();
    directOp[i] = (byte) (op == null ? -1 : op.ordinal());
    directCount[i] = count;
    directRootOrPeer[i] = rootOrPeer;
    directWhat[i] = what;
    return sequence[i];
  }

  /** The next slot, filled but for what the operation is; holding the monitor. */
  private int take(Kind k, String onStream, long nanos) {
    long seq = next++;
    int i = slot(seq);
    sequence[i] = seq;
    state[i] = (byte) State.ENQUEUED.ordinal();
    enqueued[i] = nanos;
    started[i] = 0;
    ended[i] = 0;
    kind[i] = (byte) k.ordinal();
    groupSeq[i] = group != null && k.sequenced() ? group.takeSeq() : -1;
    waited[i] = -1;
    streamName[i] = onStream;
    return i;
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
   * Operation {@code seq} finished after this rank waited {@code waitedNanos} in it for its peers (ignored
   * once it has left the ring).
   *
   * @param seq the operation's sequence number
   * @param nanos {@code System.nanoTime()} when it finished
   * @param waitedNanos how long this rank waited for its peers, or -1 if not known
   */
  public synchronized void finished(long seq, long nanos, long waitedNanos) {
    end(seq, State.FINISHED, nanos);
    waited(seq, waitedNanos);
  }

  /**
   * How long this rank waited in operation {@code seq} for its peers, where that is learnt after it ended
   * (ignored once it has left the ring, and where a wait is recorded already). Counted into {@link
   * #addWaits} where the operation is a {@link Kind#COLLECTIVE}.
   *
   * @param seq the operation's sequence number
   * @param waitedNanos how long this rank waited, or -1 if not known
   */
  public synchronized void waited(long seq, long waitedNanos) {
    int i = slot(seq);
    if (sequence[i] != seq || waited[i] >= 0 || waitedNanos < 0) {
      return;
    }
    waited[i] = waitedNanos;
    if (kind[i] == Kind.COLLECTIVE.ordinal()) {
      waitedCount++;
      waitedSum += waitedNanos;
    }
  }

  /**
   * Adds to {@code countAndSum} how many collectives of this recorder had their wait recorded ({@link #waited})
   * and the sum of those waits, since it was made: what the agreement check's lateness figures are made of.
   *
   * @param countAndSum two longs: the count, then the sum in nanoseconds; added to
   */
  public synchronized void addWaits(long[] countAndSum) {
    countAndSum[0] += waitedCount;
    countAndSum[1] += waitedSum;
  }

  /**
   * Whether operation {@code seq} is kept, has not ended, and is a {@link Kind#COLLECTIVE}: for a backend that
   * learns of operations finishing when a wait returns, and times a wait only where it covered one collective.
   *
   * @param seq the operation's sequence number
   * @return whether it is a collective still pending
   */
  public synchronized boolean pendingCollective(long seq) {
    int i = slot(seq);
    return sequence[i] == seq && state[i] < State.FINISHED.ordinal() && kind[i] == Kind.COLLECTIVE.ordinal();
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

  /** Slot {@code i}'s label, made here for a direct call recorded by its arguments; holding the monitor. */
  private OperationLabel labelOf(int i) {
    if (label[i] != null) {
      return label[i];
    }
    Collective c = COLLECTIVES[directCollective[i]];
    OperationLabel.Call call = OperationLabel.Call.of(c, TYPES[directType[i]], directOp[i] < 0 ? null
        : OPS[directOp[i]], directCount[i], directRootOrPeer[i], null, List.of());
    if (directWhat[i] != null) {
      return new OperationLabel(null, -1, -1, directWhat[i] + ": " + call.describe(), List.of(), List.of(call));
    }
    return KINDS[kind[i]] == Kind.CHECK ? OperationLabel.agreementCheck(call) : OperationLabel.direct(call);
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
        entries.add(new Entry(seq, labelOf(i), STATES[state[i]], enqueued[i], started[i], ended[i], groupSeq[i],
            waited[i], streamName[i], KINDS[kind[i]]));
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

  /** {@return the stream's name in records: {@value #OWN_STREAM} for the communicator's own} */
  public String stream() {
    return stream;
  }

  @Override
  public String toString() {
    return "FlightRecorder[rank " + rank + ", " + stream + ", " + capacity + " slots]";
  }
}
