package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One comparison of a window of units ({@link Agreement}): this rank's header and records are staged side
 * by side (one host write) and all-gathered into every rank's headers and every rank's records; after the
 * synchronize that covers it, the headers are read and compared with this rank's, and only where they
 * differ are the records read, to name the first differing call on each side.
 */
final class WindowCheck extends CheckBuffers.Pooled {
  static final int HEADER_LONGS = 4;
  private static final int RECORD_LONGS = Agreement.MAX_INTERVAL * CallRecord.LONGS;

  private final int rank;
  private final int ranks;
  private final U64Buffer memory;
  private final U64Buffer headers;
  private final U64Buffer records;
  /** This rank's header and records side by side, so that one host write puts both on the device. */
  private final U64Buffer staged;
  private final U64Buffer stagedHeader;
  private final U64Buffer stagedRecords;
  /** What {@link #staged} holds: the header, then the records (the window's first {@code length} count). */
  private final long[] mine = new long[HEADER_LONGS + RECORD_LONGS];
  private final long[] gathered;
  /** The arrays above as memory segments, made once: {@code MemorySegment.ofArray} per copy would allocate. */
  private final MemorySegment mineSegment = MemorySegment.ofArray(mine);
  private final MemorySegment gatheredSegment;
  private int length;
  private boolean atClose;
  private Agreement agreement;

  WindowCheck(Agreement.Exchange exchange, int rank, int ranks) {
    this.rank = rank;
    this.ranks = ranks;
    memory = exchange.allocate(longs(ranks));
    headers = view(0, (long) ranks * HEADER_LONGS);
    long recordsAt = (long) ranks * HEADER_LONGS;
    records = view(recordsAt, (long) ranks * RECORD_LONGS);
    long stagedAt = recordsAt + (long) ranks * RECORD_LONGS;
    staged = view(stagedAt, HEADER_LONGS + RECORD_LONGS);
    stagedHeader = view(stagedAt, HEADER_LONGS);
    stagedRecords = view(stagedAt + HEADER_LONGS, RECORD_LONGS);
    gathered = new long[ranks * HEADER_LONGS];
    gatheredSegment = MemorySegment.ofArray(gathered);
  }

  /** The longs of one check's buffer: every rank's header and records, and this rank's staged ones. */
  static long longs(int ranks) {
    return (ranks + 1L) * (HEADER_LONGS + RECORD_LONGS);
  }

  private U64Buffer view(long fromLong, long longs) {
    return (U64Buffer) Buffer.view(DataType.U64, memory.memory(), memory.byteOffset() + fromLong * Long.BYTES, longs);
  }

  Buffer stagedHeader() {
    return stagedHeader;
  }

  Buffer headers() {
    return headers;
  }

  Buffer stagedRecords() {
    return stagedRecords;
  }

  Buffer records() {
    return records;
  }

  /**
   * Writes this rank's header (with the digest of its records, made here once per check) and records, in
   * one host write (the check is not in flight, {@link CheckBuffers}); the all-gathers then send them from
   * where they are staged.
   *
   * @param atClose whether this is the last check, made where the communicator closes (for the message)
   */
  void arm(long units, long[] window, int windowLength, Agreement of, boolean atClose) {
    int words = windowLength * CallRecord.LONGS;
    System.arraycopy(window, 0, mine, HEADER_LONGS, words);
    mine[0] = Agreement.MAGIC ^ units;
    mine[1] = CallRecord.digest(mine, HEADER_LONGS, HEADER_LONGS + words);
    mine[2] = windowLength;
    mine[3] = units - windowLength;
    length = windowLength;
    agreement = of;
    this.atClose = atClose;
    // the header and the window's records only: what follows them is sent (the all-gather's count is fixed, so
    // that ranks whose windows differ in length still pair) but compared by no one
    staged.memory().copyFromHost(mineSegment, 0, staged.byteOffset(), (long) (HEADER_LONGS + words) * Long.BYTES);
  }

  @Override
  public void verify() {
    Agreement of = agreement;
    try {
      if (memory.isClosed()) {
        return; // the communicator closed: nothing left to compare
      }
      headers.memory().copyToHost(headers.byteOffset(), gatheredSegment, 0, (long) gathered.length * Long.BYTES);
      List<Integer> differing = null;
      for (int r = 0; r < ranks; r++) {
        if (r != rank && !Arrays.equals(gathered, r * HEADER_LONGS, (r + 1) * HEADER_LONGS, mine, 0,
            HEADER_LONGS)) {
          differing = differing == null ? new ArrayList<>() : differing;
          differing.add(r);
        }
      }
      if (differing != null) {
        of.found();
        throw disagreement(of, differing);
      }
    } finally {
      of.release(this);
    }
  }

  /**
   * The first call at which two windows of records differ, as the exception that names it on both sides,
   * or null where they agree.
   *
   * @param where the message's start; {@code fix} its end
   * @param from the number of calls before the windows' first
   * @param mineName {@code this rank}, or the reference rank: {@code rank 0}
   * @param theirsName the other side: {@code rank 2}
   */
  static DisagreementException firstDifference(String where, String fix, long from, String mineName, long[] mine,
      int mineAt, int mineLength, String theirsName, long[] theirs, int theirsAt, int theirLength,
      PlanNames plans, List<Integer> differing) {
    for (int i = 0; i < Math.max(mineLength, theirLength); i++) {
      int m = mineAt + i * CallRecord.LONGS;
      int t = theirsAt + i * CallRecord.LONGS;
      boolean same = i < mineLength && i < theirLength
          && Arrays.equals(mine, m, m + CallRecord.LONGS, theirs, t, t + CallRecord.LONGS);
      if (same) {
        continue;
      }
      String mineText = i < mineLength ? CallRecord.text(mine, m, plans) : "no call";
      String theirsText = i < theirLength ? CallRecord.text(theirs, t, plans) : "no call";
      List<String> fields = i < mineLength && i < theirLength ? CallRecord.differences(mine, m, theirs, t)
          : List.of("call (another call at this place)");
      return new DisagreementException(where + ": call " + (from + 1 + i) + " was, on " + mineName + ", " + mineText
          + "; on " + theirsName + ", " + theirsText + " (differing: " + String.join(", ", fields) + ")" + fix,
          mineText, theirsText, differing, fields);
    }
    return null;
  }

  /** The failure, with the first differing call of the first differing rank read from the records. */
  private DisagreementException disagreement(Agreement of, List<Integer> differing) {
    int other = differing.getFirst();
    long from = mine[3];
    long to = mine[0] ^ Agreement.MAGIC;
    int at = other * HEADER_LONGS;
    String where = of.group() + ", rank " + rank + ": the ranks disagree about their " + (atClose ? "last calls" : "calls")
        + " (the agreement check " + (atClose ? "at close " : "") + "of calls " + (from + 1) + " to " + to + " on "
        + of.group() + ")";
    String fix = Agreement.callsFix(of.group());
    String ranksText = "rank " + other + (differing.size() == 1 ? "" : " (the first of the differing ranks " + differing
        + ")");
    long theirLength = gathered[at + 2];
    boolean aCheck = (gathered[at] ^ Agreement.MAGIC) >>> 48 == 0 && theirLength >= 0
        && theirLength <= Agreement.MAX_INTERVAL; // another check (of other calls), not a call of the user's
    if (!aCheck || gathered[at + 3] != from) {
      String theirs = "a call that is not this check (rank " + other + " made a different number of collective calls"
          + " before its check)";
      String mineText = length > 0 ? CallRecord.text(mine, HEADER_LONGS + (length - 1) * CallRecord.LONGS, of.plans())
          : "no call";
      return new DisagreementException(where + ": where this rank compared its calls (its last: " + mineText + "), "
          + ranksText + " made " + theirs + fix, mineText, theirs, differing, List.of("number of calls"));
    }
    long[] all = new long[(int) records.length()];
    records.copyTo(0, all, 0, all.length);
    DisagreementException found = firstDifference(where, fix, from, "this rank", mine, HEADER_LONGS, length,
        ranksText, all, other * Agreement.MAX_INTERVAL * CallRecord.LONGS, (int) theirLength, of.plans(), differing);
    if (found != null) {
      return found;
    }
    return new DisagreementException(where + ": the digests of the calls differ although the records read back"
        + " agree (memory written while the check was in flight?)" + fix, "", "", differing, List.of());
  }
}
