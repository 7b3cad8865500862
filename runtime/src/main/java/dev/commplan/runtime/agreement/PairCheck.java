package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;

/**
 * One message of the check of sends and receives ({@link PairDigests}): the sender's count and digest of
 * its messages to a peer, and the record of the last, sent after that message; the receiver receives it
 * after its receive of the same number and, after the synchronize that covers it, compares it with its
 * own count, digest and last receive, naming what differs as every comparison of messages does ({@link
 * Disagreements}).
 */
final class PairCheck extends CheckBuffers.Pooled {
  /** Longs of a message: magic, count, digest, the last message's record. */
  static final int MESSAGE_LONGS = 3 + CallRecord.LONGS;

  private final U64Buffer message;
  private final long[] expected = new long[MESSAGE_LONGS];
  private final long[] got = new long[MESSAGE_LONGS];
  /** The arrays above as memory segments, made once: {@code MemorySegment.ofArray} per copy would allocate. */
  private final MemorySegment expectedSegment = MemorySegment.ofArray(expected);
  private final MemorySegment gotSegment = MemorySegment.ofArray(got);
  private boolean receiving;
  private int peer;
  private int rank;
  private Agreement agreement;

  PairCheck(Agreement.Exchange exchange) {
    message = exchange.allocate(MESSAGE_LONGS);
  }

  Buffer message() {
    return message;
  }

  /**
   * Arms the check of message {@code count} between this rank and {@code peer}: a sender writes its
   * message now (the check is not in flight, {@link CheckBuffers}); a receiver keeps what it expects.
   */
  void arm(boolean send, int rank, int peer, long count, long digest, long word0, long elements, Agreement of) {
    expected[0] = Agreement.MAGIC;
    expected[1] = count;
    expected[2] = digest;
    expected[3] = word0;
    expected[4] = elements;
    expected[5] = 0;
    expected[6] = 0;
    this.receiving = !send;
    this.rank = rank;
    this.peer = peer;
    this.agreement = of;
    if (send) {
      message.memory().copyFromHost(expectedSegment, 0, message.byteOffset(), MESSAGE_LONGS * Long.BYTES);
    }
  }

  @Override
  public void verify() {
    Agreement of = agreement;
    try {
      if (!receiving || message.isClosed()) {
        return; // a sender compares nothing: its peer does
      }
      message.memory().copyToHost(message.byteOffset(), gotSegment, 0, MESSAGE_LONGS * Long.BYTES);
      if (got[0] == Agreement.MAGIC && got[1] == expected[1] && got[2] == expected[2]) {
        return;
      }
      of.found();
      throw disagreement(of);
    } finally {
      of.release(this);
    }
  }

  /** The receiver's finding, worded as every check of messages words it ({@link Disagreements}). */
  private DisagreementException disagreement(Agreement of) {
    long n = expected[1];
    String mine = CallRecord.text(expected, 3, of.plans());
    if (got[0] != Agreement.MAGIC) {
      return Disagreements.notTheCheck(of.group(), of.ranks(), peer, rank, n, mine).of(rank);
    }
    String theirs = CallRecord.text(got, 3, of.plans());
    if (got[1] != n) {
      return Disagreements.numberOfMessages(of.group(), of.ranks(), peer, got[1], theirs, rank, n, mine).of(rank);
    }
    List<String> fields = lastDifferences(got, 3, expected, 3);
    if (!fields.isEmpty()) {
      return Disagreements.message(of.group(), of.ranks(), peer, theirs, rank, mine, fields, true).of(rank);
    }
    return Disagreements.earlierMessage(of.group(), of.ranks(), peer, theirs, rank, mine, n).of(rank);
  }

  /**
   * What differs between a send's record ({@code send} from {@code s}) and a receive's ({@code receive} from
   * {@code r}): the data type, the count; the peers are each other, by construction.
   */
  static List<String> lastDifferences(long[] send, int s, long[] receive, int r) {
    List<String> fields = new ArrayList<>();
    if ((send[s] >>> 16 & 0xff) != (receive[r] >>> 16 & 0xff)) {
      fields.add("data type");
    }
    if (send[s + 1] != receive[r + 1]) {
      fields.add("count");
    }
    return fields;
  }
}
