package dev.commplan.runtime.spi;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One communicator's part of its rank's flight record ({@link FlightLog}): the group's label and members, the
 * recorders of its streams, and the group's sequence, from which every operation that every member issues in
 * the same order ({@link OperationLabel.Kind#sequenced()}: collectives, plan steps and buckets, the agreement
 * check's calls) takes its number when it is enqueued, on whichever of the group's streams. That number, not a
 * recorder's own, is what lines the ranks' records up (docs/flight-records.md, "Sequence numbers").
 *
 * <p>A backend makes one per communicator ({@link FlightLog#group}), one recorder per stream ({@link
 * #recorder}), and closes it with the communicator. Thread-safe.
 */
public final class FlightGroup {
  private final FlightLog log;
  private final String label;
  private final int rank;
  private final int size;
  /** The members' world ranks, in group-rank order; null where the job finds them ({@link FlightJob}). */
  private final int[] worldRanks;
  private final String identity;
  private final AtomicLong nextSeq = new AtomicLong();
  private final List<FlightRecorder> recorders = new CopyOnWriteArrayList<>();
  /** The waits of recorders detached since: what {@link #addWaits} adds for them. */
  private final long[] detachedWaits = new long[2];

  FlightGroup(FlightLog log, String label, int rank, int size, int[] worldRanks, String identity) {
    this.log = log;
    this.label = label;
    this.rank = rank;
    this.size = size;
    this.worldRanks = worldRanks == null ? null : worldRanks.clone();
    this.identity = identity;
  }

  /**
   * A recorder of one of this communicator's streams, of {@value FlightRecorder#DEFAULT_CAPACITY} slots, whose
   * operations take their numbers in this group's sequence; kept here until {@link #detach}ed.
   *
   * @param stream the stream's name in records: {@value FlightRecorder#OWN_STREAM} for the communicator's own,
   *     {@code stream 1}, ... for those {@code newStream()} made
   * @return the recorder
   */
  public FlightRecorder recorder(String stream) {
    FlightRecorder r = new FlightRecorder(log.worldRank(), FlightRecorder.DEFAULT_CAPACITY, this, stream);
    recorders.add(r);
    return r;
  }

  /**
   * A stream closed by its user: its recorder leaves the record (its waits still count in {@link #addWaits}).
   *
   * @param recorder one of this group's recorders
   */
  public void detach(FlightRecorder recorder) {
    synchronized (detachedWaits) {
      if (recorders.remove(recorder)) {
        recorder.addWaits(detachedWaits);
      }
    }
  }

  /** Every operation of its recorders that has not ended failed at {@code nanos} ({@link FlightRecorder#failPending}). */
  void failPending(long nanos) {
    for (FlightRecorder r : recorders) {
      r.failPending(nanos);
    }
  }

  /** The communicator was closed: the group leaves its rank's record. */
  public void close() {
    log.forget(this);
  }

  long takeSeq() {
    return nextSeq.getAndIncrement();
  }

  /** {@return the number the group's next collective or check operation takes: how many it has issued} */
  public long nextSeq() {
    return nextSeq.get();
  }

  /**
   * Adds to {@code countAndSum} how many of this group's collectives had this rank's wait recorded, and the sum
   * of those waits ({@link FlightRecorder#addWaits}), over its recorders, those detached included.
   *
   * @param countAndSum two longs: the count, then the sum in nanoseconds; added to
   */
  public void addWaits(long[] countAndSum) {
    synchronized (detachedWaits) {
      countAndSum[0] += detachedWaits[0];
      countAndSum[1] += detachedWaits[1];
    }
    for (FlightRecorder r : recorders) {
      r.addWaits(countAndSum);
    }
  }

  /** {@return the rank's record this group belongs to} */
  public FlightLog log() {
    return log;
  }

  String label() {
    return label;
  }

  int rank() {
    return rank;
  }

  int size() {
    return size;
  }

  /** {@return the members' world ranks as given, or null} */
  int[] givenWorldRanks() {
    return worldRanks == null ? null : worldRanks.clone();
  }

  String identity() {
    return identity;
  }

  /**
   * The operations of every recorder, merged into one list, oldest first: by the time they were enqueued, then
   * their group sequence number; the sequenced ones are then put in the order of their numbers (two streams'
   * enqueues at one nanosecond, or from two threads, could otherwise cross).
   */
  List<FlightRecorder.Entry> operations() {
    List<FlightRecorder.Entry> all = new ArrayList<>();
    for (FlightRecorder r : recorders) {
      all.addAll(r.snapshot());
    }
    all.sort(Comparator.comparingLong(FlightRecorder.Entry::enqueueNanos)
        .thenComparingLong(FlightRecorder.Entry::groupSeq));
    int[] at = new int[all.size()];
    int n = 0;
    for (int i = 0; i < all.size(); i++) {
      if (all.get(i).groupSeq() >= 0) {
        at[n++] = i;
      }
    }
    FlightRecorder.Entry[] sequenced = new FlightRecorder.Entry[n];
    for (int k = 0; k < n; k++) {
      sequenced[k] = all.get(at[k]);
    }
    Arrays.sort(sequenced, Comparator.comparingLong(FlightRecorder.Entry::groupSeq));
    for (int k = 0; k < n; k++) {
      all.set(at[k], sequenced[k]);
    }
    return all;
  }

  @Override
  public String toString() {
    return "FlightGroup[" + label + ", rank " + rank + " of " + size + "]";
  }
}
