package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The units of one communicator's agreement check ({@link Agreement}): each direct collective and each plan
 * execute, step, launch, bucket or closed round, as a {@link CallRecord}, in the order this rank made them, and
 * when they are compared. After units 1, 3, 7, ..., 1023 and then every {@value Agreement#MAX_INTERVAL}, the
 * window (the units since the last comparison) is compared across the ranks ({@link WindowCheck}), enqueued
 * after the unit on its stream; a plan built with the order check has it compared after each of its units too.
 *
 * <p>The records are kept in a ring of the last {@value #KEPT} units, written by the thread that holds the
 * communicator's gate (four stores a unit), and published with the number of units (a release store), so that
 * a thread of another rank of the same process can read them ({@link #copy}): where an in-process group's
 * ranks meet, a backend that finds their calls differing has the ranks' records compared there ({@link
 * HostComparison}), and words what it found as the window check would.
 */
final class CallWindow {
  /** Units whose records are kept: twice the longest window, so that a reader finds units some way back. */
  static final int KEPT = 2 * Agreement.MAX_INTERVAL;

  private static final VarHandle UNITS;

  static {
    try {
      UNITS = MethodHandles.lookup().findVarHandle(CallWindow.class, "units", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private final Agreement owner;
  /** Unit u's record at {@code (u - 1) % KEPT}, {@value CallRecord#LONGS} longs. */
  private final long[] ring = new long[KEPT * CallRecord.LONGS];
  /** The units made so far; written by the owner's thread, published with a release store. */
  private long units;
  /** The units since the last comparison: the window, the last {@code length} of the ring. */
  private int length;
  /** A comparison was due at a unit that enqueues nothing ({@link #addWithoutCall}): the next unit makes it first. */
  private boolean comparisonOwed;
  private long nextCheck = 1;

  CallWindow(Agreement owner) {
    this.owner = owner;
  }

  /** {@return the units made so far} On the owner's thread. */
  long units() {
    return units;
  }

  /** {@return the units since the last comparison} */
  int length() {
    return length;
  }

  /**
   * A unit enqueued on {@code stream}: its record, and the window compared after it where a comparison is due
   * (or owed, or asked for: {@code compareNow}).
   */
  void add(long word0, long word1, long plan, long step, Stream stream, boolean compareNow) {
    if (comparisonOwed) { // due at a unit that could enqueue nothing: the window up to that unit
      compare(stream);
    }
    record(word0, word1, plan, step);
    if (units == nextCheck) {
      nextCheck = next(units);
      compare(stream);
    } else if (compareNow) {
      compare(stream);
    }
  }

  /**
   * A unit that enqueues nothing ({@link Agreement#roundClosed}): a comparison due at it is made at the next
   * unit instead, over the window up to this one. Not recorded where that window is full already.
   */
  void addWithoutCall(long word0, long word1, long plan, long step) {
    if (length == Agreement.MAX_INTERVAL) {
      return; // only where a comparison is owed already and its window is full: its record would not fit
    }
    record(word0, word1, plan, step);
    if (units == nextCheck) {
      nextCheck = next(units);
      comparisonOwed = true;
    }
  }

  private void record(long word0, long word1, long plan, long step) {
    long unit = units + 1;
    int at = slot(unit);
    ring[at] = word0;
    ring[at + 1] = word1;
    ring[at + 2] = plan;
    ring[at + 3] = step;
    length++;
    UNITS.setRelease(this, unit);
  }

  private static int slot(long unit) {
    return (int) ((unit - 1) % KEPT) * CallRecord.LONGS;
  }

  /**
   * The unit (or message) after which the next check runs: 1, 3, 7, ..., 1023, then every {@value
   * Agreement#MAX_INTERVAL}.
   */
  static long next(long checkedAt) {
    return checkedAt < Agreement.MAX_INTERVAL - 1 ? 2 * checkedAt + 1 : checkedAt + Agreement.MAX_INTERVAL;
  }

  /**
   * Enqueues the comparison of the window on {@code stream}, to be read after the synchronize that covers it;
   * skipped alike on every rank for a stream being captured (it would run at every launch, comparing stale
   * records) or one with no synchronize hook (nothing could read it). The window starts again either way.
   */
  void compare(Stream stream) {
    StreamProgress progress = Guards.progressOf(stream);
    if (progress != null && !owner.exchange().isCapturing(stream)) {
      WindowCheck check = owner.buffers().window(stream);
      check.arm(this, owner);
      owner.exchange().allGather(check.stagedHeader(), check.headers(), check.stagedRecords(), check.records(), stream);
      progress.afterSynchronize(check, progress.issue());
    }
    length = 0;
    comparisonOwed = false;
  }

  /** Copies the window's records, oldest first, into {@code into} from {@code at}; on the owner's thread. */
  void copyWindow(long[] into, int at) {
    copyUnits(units - length + 1, length, into, at);
  }

  private void copyUnits(long first, int count, long[] into, int at) {
    int from = slot(first);
    int words = count * CallRecord.LONGS;
    int untilEnd = Math.min(words, ring.length - from);
    System.arraycopy(ring, from, into, at, untilEnd);
    System.arraycopy(ring, 0, into, at + untilEnd, words - untilEnd);
  }

  /** {@return the units whose records are published, for a thread other than the owner's} */
  long published() {
    return (long) UNITS.getAcquire(this);
  }

  /**
   * From a thread other than the owner's: copies the records of units {@code first} to {@code first + count -
   * 1}, which must be published ({@link #published()}), into {@code into} from {@code at}.
   *
   * @return whether they were all still kept when copied (the owner may have gone on and written over them)
   */
  boolean copy(long first, int count, long[] into, int at) {
    if (count == 0) {
      return true;
    }
    if (first < 1 || first + count - 1 > published() || !keeps(first)) {
      return false;
    }
    copyUnits(first, count, into, at);
    VarHandle.acquireFence(); // the copy's reads before the check below
    return keeps(first); // nothing at or after `first` was written over meanwhile
  }

  /**
   * Whether unit {@code first}'s slot (and so those after it, up to the last published) is not being written:
   * the owner writes the unit after the last published before it publishes it.
   */
  private boolean keeps(long first) {
    return published() + 1 - first < KEPT;
  }
}
