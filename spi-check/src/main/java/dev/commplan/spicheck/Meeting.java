package dev.commplan.spicheck;

import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.RankAbortedException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where one group's ranks meet (the world's, or a split's), in the order every rank calls:
 *
 * <ul>
 *   <li>a collective: each rank shows its send side, waits for all ({@link CyclicBarrier}), computes its own
 *       result from every rank's send side into a block of its own ({@link Kernels}), waits for all again (so
 *       that no one still reads a send side that a result overwrites: in place, they are the same memory), and
 *       then writes its result;
 *   <li>a split: each rank shows its color, key and label and waits for all; the first rank of each new group
 *       (by key, then by rank here) makes the group's meeting, and after a second wait every rank takes its
 *       own; a third wait keeps the next split from overwriting what a slow rank still reads;
 *   <li>a send: a copy of the data is left in the receiver's mailbox for this rank, at once (sends never
 *       wait); a receive waits until the next message from its peer is there, and copies it.
 * </ul>
 *
 * <p>No wait is longer than the timeout: a rank that waited that long fails with {@link
 * CommTimeoutException} naming the ranks that did not come, and the whole {@link Family} breaks, which wakes
 * every rank of every group with {@link RankAbortedException}.
 */
final class Meeting {
  private final Family family;
  private final int ranks;
  /** Each member's rank in the world, for messages. */
  private final int[] worldRanks;
  private final String label;
  private final Duration timeout;
  private final CyclicBarrier barrier;
  /** Each rank's send side of the collective being run; written before the first wait, read after it. */
  private final MemorySegment[] sends;
  /** How many meetings (collectives and splits) each rank has entered, to name the missing ranks on a timeout. */
  private final AtomicLongArray entered;
  /** The split being made: each rank's color, key and label, and the meetings the groups' first ranks made. */
  private final int[] colors;
  private final int[] keys;
  private final String[] labels;
  private final Meeting[] made;
  /** The mailboxes: messages from rank {@code from} to rank {@code to} at {@code from * ranks + to}, oldest first. */
  private final List<ArrayDeque<MemorySegment>> mail;
  private final ReentrantLock mailLock = new ReentrantLock();
  private final Condition mailArrived = mailLock.newCondition();

  Meeting(Family family, int[] worldRanks, String label, Duration timeout) {
    this.family = family;
    this.ranks = worldRanks.length;
    this.worldRanks = worldRanks.clone();
    this.label = label;
    this.timeout = timeout;
    this.barrier = new CyclicBarrier(ranks);
    this.sends = new MemorySegment[ranks];
    this.entered = new AtomicLongArray(ranks);
    this.colors = new int[ranks];
    this.keys = new int[ranks];
    this.labels = new String[ranks];
    this.made = new Meeting[ranks];
    this.mail = new ArrayList<>(ranks * ranks);
    for (int i = 0; i < ranks * ranks; i++) {
      mail.add(new ArrayDeque<>());
    }
    family.add(this);
  }

  int ranks() {
    return ranks;
  }

  String label() {
    return label;
  }

  Family family() {
    return family;
  }

  /** The world rank of this group's rank {@code rank}. */
  int worldRank(int rank) {
    return worldRanks[rank];
  }

  /** Runs {@code call} for {@code rank}: every rank calls this with the same call, in the same order. */
  void run(int rank, Call call, MemorySegment send, MemorySegment recv) {
    ensureNotBroken(rank);
    sends[rank] = send;
    long sequence = entered.incrementAndGet(rank);
    await(rank, call.label(), call, sequence);
    MemorySegment result = Kernels.result(call, rank, sends);
    await(rank, call.label(), call, sequence);
    if (result != null) {
      MemorySegment.copy(result, 0, recv, 0, result.byteSize());
    }
  }

  /** A rank's place after a split: its new group's meeting and its rank there. */
  record Place(Meeting meeting, int rank) {}

  /**
   * {@code rank}'s side of a split (every rank of the group calls it, in the same order as its other
   * meetings): the ranks of one color form a group, ordered by key and then by their rank here, named by the
   * label of its first rank.
   */
  Place split(int rank, int color, int key, String splitLabel) {
    ensureNotBroken(rank);
    colors[rank] = color;
    keys[rank] = key;
    labels[rank] = splitLabel;
    long sequence = entered.incrementAndGet(rank);
    String what = "split(color " + color + ", key " + key + ")";
    await(rank, what, null, sequence);
    List<Integer> members = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      if (colors[r] == color) {
        members.add(r);
      }
    }
    members.sort(Comparator.<Integer>comparingInt(r -> keys[r]).thenComparingInt(r -> r));
    int first = members.getFirst();
    if (first == rank) {
      made[rank] = new Meeting(family, members.stream().mapToInt(r -> worldRanks[r]).toArray(), labels[rank], timeout);
    }
    await(rank, what, null, sequence);
    Place mine = new Place(made[first], members.indexOf(rank));
    await(rank, what, null, sequence); // every rank has read made[] before the next split writes it
    return mine;
  }

  /** Leaves a copy of {@code data} for {@code to}: a send, which never waits. */
  void send(int rank, int to, MemorySegment data) {
    ensureNotBroken(rank);
    MemorySegment copy = Arena.ofAuto().allocate(Math.max(1, data.byteSize())).asSlice(0, data.byteSize());
    copy.copyFrom(data);
    mailLock.lock();
    try {
      mail.get(rank * ranks + to).addLast(copy);
      mailArrived.signalAll();
    } finally {
      mailLock.unlock();
    }
  }

  /**
   * Waits for the next message from {@code from} to {@code rank} and copies it into {@code into} (a message
   * of another size is copied as far as both go: the agreement check names the difference).
   */
  void receive(int rank, int from, MemorySegment into, Call call) {
    MemorySegment message;
    long deadline = System.nanoTime() + timeout.toNanos();
    mailLock.lock();
    try {
      ArrayDeque<MemorySegment> box = mail.get(from * ranks + rank);
      while (box.isEmpty()) {
        ensureNotBroken(rank);
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          throw timedOut(rank, call.label(), call, List.of(from), " to send to it");
        }
        try {
          mailArrived.awaitNanos(left);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt(); // the supervisor interrupts the ranks of an aborted run
          throw aborted(rank, family.abortCause() != null ? family.abortCause() : e);
        }
      }
      message = box.removeFirst();
    } finally {
      mailLock.unlock();
    }
    MemorySegment.copy(message, 0, into, 0, Math.min(message.byteSize(), into.byteSize()));
  }

  /** Throws {@link RankAbortedException} if the family was broken. */
  void ensureNotBroken(int rank) {
    Throwable cause = family.abortCause();
    if (cause != null) {
      throw aborted(rank, cause);
    }
  }

  /** The family broke: every rank waiting here wakes. */
  void wake() {
    barrier.reset(); // the ranks waiting now get BrokenBarrierException
    mailLock.lock();
    try {
      mailArrived.signalAll();
    } finally {
      mailLock.unlock();
    }
  }

  private void await(int rank, String what, Call call, long sequence) {
    try {
      barrier.await(timeout.toNanos(), TimeUnit.NANOSECONDS);
    } catch (TimeoutException e) {
      List<Integer> missing = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        if (entered.get(r) < sequence) {
          missing.add(r);
        }
      }
      throw timedOut(rank, what + " (the rank's meeting number " + sequence + ")", call, missing, ", which did not get"
          + " there");
    } catch (BrokenBarrierException e) {
      throw aborted(rank, family.abortCause() != null ? family.abortCause() : e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt(); // the supervisor interrupts the ranks of an aborted run
      throw aborted(rank, family.abortCause() != null ? family.abortCause() : e);
    }
  }

  /** A timeout of {@code rank} waiting for {@code missing} in {@code what}; the family is broken first. */
  private CommTimeoutException timedOut(int rank, String what, Call call, List<Integer> missing, String why) {
    List<Integer> world = missing.stream().map(r -> worldRanks[r]).toList();
    CommTimeoutException timedOut = new CommTimeoutException(where(rank) + ": " + what + " waited " + timeout
        + " for rank(s) " + missing + " (world rank(s) " + world + ")" + why, call == null ? null : call.planName(),
        call == null ? -1 : call.step(), call == null ? what : call.label(), call == null ? List.of() : call.fields(),
        rank, timeout, missing, null, null);
    family.abort(worldRanks[rank], timedOut);
    return timedOut;
  }

  private RankAbortedException aborted(int rank, Throwable cause) {
    int by = family.abortingRank();
    return new RankAbortedException(where(rank) + " gave up: " + (by >= 0 ? "world rank " + by + " failed"
        : "the cluster was aborted or closed") + ": " + cause, cause);
  }

  /** {@code spi-check rank 1 of world (4 ranks)}. */
  private String where(int rank) {
    return "spi-check rank " + rank + " of " + label + " (" + ranks + " ranks)";
  }
}
