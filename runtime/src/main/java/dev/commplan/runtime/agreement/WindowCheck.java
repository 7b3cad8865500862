package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.List;

/**
 * One comparison of a window of units ({@link CallWindow}): this rank's header (the units it covers and a
 * digest of their records) and records are staged side by side (one host write) and all-gathered into every
 * rank's headers and every rank's records; after the synchronize that covers it, the headers are read and
 * compared with this rank's, and only where they differ are the records read, to name the first differing call
 * ({@link Disagreements}). Every rank reads the same headers and records, so every rank that finds it says the
 * same.
 *
 * <p>The header's last two longs are not compared: they carry this rank's timed collectives and the sum of its
 * waits in them ({@link Agreement.Exchange#addWaits}), from which, where the ranks agree, every rank reckons
 * which rank the others wait for ({@link LatenessWindows}).
 */
final class WindowCheck extends CheckBuffers.Pooled {
  static final int HEADER_LONGS = 6;
  /** The header's longs that the ranks must agree on; the rest carry this rank's waits. */
  private static final int COMPARED_LONGS = 4;
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
  /** What {@link #staged} holds: the header, then the window's records (the header's third long counts them). */
  private final long[] mine = new long[HEADER_LONGS + RECORD_LONGS];
  private final long[] gathered;
  /** The arrays above as memory segments, made once: {@code MemorySegment.ofArray} per copy would allocate. */
  private final MemorySegment mineSegment = MemorySegment.ofArray(mine);
  private final MemorySegment gatheredSegment;
  /** This rank's timed collectives and the sum of its waits, read at each arm. */
  private final long[] waits = new long[2];
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
   * Writes this rank's header (with the digest of its records, made here once per check) and the records of
   * {@code window}, in one host write (the check is not in flight, {@link CheckBuffers}); the all-gathers then
   * send them from where they are staged.
   */
  void arm(CallWindow window, Agreement of) {
    int windowLength = window.length();
    long units = window.units();
    int words = windowLength * CallRecord.LONGS;
    window.copyWindow(mine, HEADER_LONGS);
    mine[0] = Agreement.MAGIC ^ units;
    mine[1] = CallRecord.digest(mine, HEADER_LONGS, HEADER_LONGS + words);
    mine[2] = windowLength;
    mine[3] = units - windowLength;
    waits[0] = 0;
    waits[1] = 0;
    of.exchange().addWaits(waits);
    mine[4] = waits[0];
    mine[5] = waits[1];
    agreement = of;
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
      for (int r = 0; r < ranks; r++) {
        if (r != rank && !sameHeader(r, rank)) {
          of.found();
          throw disagreement(of).of(rank);
        }
      }
      of.latenessWindows().window(gathered, HEADER_LONGS, COMPARED_LONGS);
    } finally {
      of.release(this);
    }
  }

  private boolean sameHeader(int a, int b) {
    return Arrays.equals(gathered, a * HEADER_LONGS, a * HEADER_LONGS + COMPARED_LONGS, gathered, b * HEADER_LONGS,
        b * HEADER_LONGS + COMPARED_LONGS);
  }

  /** Whether rank {@code r}'s gathered header is a check's (of other calls, perhaps), not a call of the user's. */
  private boolean isCheck(int r) {
    int at = r * HEADER_LONGS;
    long units = gathered[at] ^ Agreement.MAGIC;
    long length = gathered[at + 2];
    return units >>> 48 == 0 && length >= 0 && length <= Agreement.MAX_INTERVAL && gathered[at + 3] == units - length;
  }

  /**
   * What the ranks' windows say, read from every rank's header and records, which every rank gathered alike: the
   * first call at which they differ, or, where they do not cover the same calls, what each compared.
   */
  private Finding disagreement(Agreement of) {
    long[] all = new long[(int) records.length()];
    records.copyTo(0, all, 0, all.length);
    boolean sameCalls = true;
    for (int r = 0; r < ranks; r++) {
      sameCalls &= isCheck(r) && gathered[r * HEADER_LONGS + 2] == gathered[2] && gathered[r * HEADER_LONGS + 3]
          == gathered[3];
    }
    long[][] byRank = new long[ranks][];
    int[] lengths = new int[ranks];
    PlanNames[] plans = new PlanNames[ranks];
    for (int r = 0; r < ranks; r++) {
      lengths[r] = isCheck(r) ? (int) gathered[r * HEADER_LONGS + 2] : 0;
      int from = r * RECORD_LONGS;
      byRank[r] = Arrays.copyOfRange(all, from, from + lengths[r] * CallRecord.LONGS);
      plans[r] = of.plans(); // every rank built the same plans, in the same order
    }
    if (!sameCalls) {
      String[] did = new String[ranks];
      for (int r = 0; r < ranks; r++) {
        int at = r * HEADER_LONGS;
        did[r] = !isCheck(r) ? "made a call that is not the agreement check (a different number of collective calls"
            + " and plan executes before it)"
            : "compared its calls " + (gathered[at + 3] + 1) + " to " + (gathered[at] ^ Agreement.MAGIC)
                + " (its last: " + (lengths[r] == 0 ? "no call" : CallRecord.text(byRank[r], (lengths[r] - 1)
                    * CallRecord.LONGS, of.plans())) + ")";
      }
      return Disagreements.numberOfCalls(of.group(), did, new Finding.Sides() {
        @Override
        public boolean differ(int a, int b) {
          return !sameHeader(a, b);
        }

        @Override
        public List<String> fields(int a, int b) {
          return List.of(Disagreements.NUMBER_OF_CALLS);
        }
      });
    }
    Finding found = Disagreements.firstDifferingCall(of.group(), gathered[3] + 1, byRank, lengths, plans);
    return found != null ? found : Disagreements.digestsOnly(of.group(), ranks, gathered[3] + 1,
        gathered[0] ^ Agreement.MAGIC);
  }
}
