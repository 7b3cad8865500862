package dev.commplan.runtime.agreement;

import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The exchange of the comparisons made once, at build (a plan's fingerprint, a mesh): every rank's text,
 * through the agreement check's own calls ({@link Agreement.Exchange}), so that neither is a unit of the
 * check and both work alike on every backend. First one all-gather of each rank's SHA-256 and byte length
 * (5 longs); only where a digest differs, a second of every text, padded to the longest. Collective: every
 * rank of the communicator calls it at the same point of its calls; one rank alone has no one to differ
 * from and sends nothing.
 */
final class TextExchange {
  /** Longs of the first all-gather's record: SHA-256, then the text's length in bytes. */
  static final int HEADER_LONGS = 5;

  private TextExchange() {}

  /**
   * Every rank's text, indexed by rank, or null where every rank's is this rank's (or there is one rank). A timeout in either all-gather is thrown
   * saying what was compared: {@code timedOut + ", and ranks [2] " + missed + " (" + the wait's summary + ")"}
   * ({@link #whoMissed}).
   *
   * @param agreement the check of the communicator the ranks compare over
   * @param text this rank's text
   * @param planName the plan compared, for the timeout, or null
   * @param timedOut the timeout message's start: {@code mesh [dp=2, tp=2]: building it timed out; every rank ...}
   * @param missed what the missing ranks did not do: {@code did not get to this one}
   */
  static List<String> differing(Agreement agreement, String text, String planName, String timedOut,
      String missed) {
    try {
      return differing(agreement, text);
    } catch (CommTimeoutException e) { // the usual cause: a rank that never came to this comparison
      throw new CommTimeoutException(timedOut + ", and " + whoMissed(e.missingRanks()) + " " + missed + " (" + e.summary()
          + ")", planName, -1, e.collective(), List.of(), e.rank(), e.timeout(), e.missingRanks(), e.flightRecord(), e);
    }
  }

  /**
   * The ranks a timeout names as missing, for the message: {@code "ranks [1, 2]"}, or, where the backend
   * cannot tell (NCCL's wait knows only that its own call is pending), {@code "a rank (which one, this
   * backend cannot tell)"} rather than an empty list that reads as "every rank came".
   */
  static String whoMissed(List<Integer> missing) {
    return missing.isEmpty() ? "a rank (which one, this backend cannot tell)" : "ranks " + missing;
  }

  private static List<String> differing(Agreement agreement, String text) {
    int ranks = agreement.ranks();
    if (ranks == 1) {
      return null;
    }
    byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
    long[] header = new long[HEADER_LONGS];
    byte[] digest = sha256(bytes);
    for (int i = 0; i < 4; i++) {
      header[i] = bytesToLong(digest, 8 * i);
    }
    header[4] = bytes.length;
    long[] headers = gather(agreement, header);
    boolean same = true;
    long longest = 0;
    for (int r = 0; r < ranks; r++) {
      same &= Arrays.equals(headers, r * HEADER_LONGS, r * HEADER_LONGS + 4, header, 0, 4);
      longest = Math.max(longest, headers[r * HEADER_LONGS + 4]);
    }
    if (same) {
      return null;
    }
    int longs = (int) Math.max(1, (longest + 7) / 8);
    long[] mine = new long[longs];
    for (int i = 0; i < bytes.length; i++) {
      mine[i / 8] |= (bytes[i] & 0xffL) << (8 * (i % 8));
    }
    long[] all = gather(agreement, mine);
    List<String> texts = new ArrayList<>(ranks);
    for (int r = 0; r < ranks; r++) {
      int length = (int) Math.clamp(headers[r * HEADER_LONGS + 4], 0, (long) longs * 8);
      byte[] theirs = new byte[length];
      for (int i = 0; i < length; i++) {
        theirs[i] = (byte) (all[r * longs + i / 8] >>> (8 * (i % 8)));
      }
      texts.add(new String(theirs, StandardCharsets.UTF_8));
    }
    return texts;
  }

  /** One all-gather of {@code mine} over the communicator, waited for; its buffers freed after. */
  private static long[] gather(Agreement agreement, long[] mine) {
    Agreement.Exchange exchange = agreement.exchange();
    try (U64Buffer own = exchange.allocate(mine.length);
        U64Buffer all = exchange.allocate((long) mine.length * agreement.ranks())) {
      own.copyFrom(mine);
      Stream stream = exchange.allGather(own, all);
      stream.synchronize();
      return all.toArray();
    }
  }

  private static long bytesToLong(byte[] b, int from) {
    long v = 0;
    for (int i = 0; i < 8; i++) {
      v |= (b[from + i] & 0xffL) << (8 * i);
    }
    return v;
  }

  /** SHA-256 of {@code bytes}. */
  static byte[] sha256(byte[] bytes) {
    try {
      return MessageDigest.getInstance("SHA-256").digest(bytes);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is required of every Java platform", e);
    }
  }
}
