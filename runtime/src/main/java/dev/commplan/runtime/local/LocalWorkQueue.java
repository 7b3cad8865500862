package dev.commplan.runtime.local;

import dev.commplan.runtime.local.LocalStream.Work;
import java.util.Arrays;

/**
 * The work a local stream's worker has not taken yet, in the order it was enqueued, each item with its
 * number in its communicator's collective sequence (-1 for work that takes none): a ring of two arrays,
 * doubled when full and never shrunk, so that enqueueing allocates nothing once the ring has grown to what
 * the stream needs. Not synchronized: its stream's lock guards it.
 */
final class LocalWorkQueue {
  private Work[] work = new Work[16];
  private long[] sequence = new long[16];
  private int head;
  private int size;

  /**
   * Puts {@code item} at the end.
   *
   * @param item the work
   * @param sequenceNumber its number in its communicator's collective sequence, or -1
   */
  void add(Work item, long sequenceNumber) {
    if (size == work.length) {
      grow();
    }
    int at = (head + size) % work.length;
    work[at] = item;
    sequence[at] = sequenceNumber;
    size++;
  }

  /** {@return whether no work is waiting} */
  boolean isEmpty() {
    return size == 0;
  }

  /** {@return the sequence number of the first item} The queue is not empty. */
  long firstSequence() {
    return sequence[head];
  }

  /** Takes the first item off the queue and returns it; the queue is not empty. */
  Work removeFirst() {
    Work first = work[head];
    work[head] = null;
    head = (head + 1) % work.length;
    size--;
    return first;
  }

  /** Drops every item (the stream was shut down). */
  void clear() {
    Arrays.fill(work, null);
    size = 0;
  }

  /** Doubles the ring, keeping the order. */
  private void grow() {
    Work[] grownWork = new Work[work.length * 2];
    long[] grownSequence = new long[grownWork.length];
    for (int i = 0; i < size; i++) {
      grownWork[i] = work[(head + i) % work.length];
      grownSequence[i] = sequence[(head + i) % work.length];
    }
    work = grownWork;
    sequence = grownSequence;
    head = 0;
  }
}
