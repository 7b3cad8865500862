package dev.commplan.runtime.agreement;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.U64Buffer;
import java.lang.foreign.MemorySegment;
import java.util.List;

/**
 * One message of the check of sends and receives ({@link Agreement}): the sender's count and digest of
 * its messages to a peer, and the record of the last, sent after that message; the receiver receives it
 * after its receive of the same number and, after the synchronize that covers it, compares it with its
 * own count, digest and last receive.
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

  private DisagreementException disagreement(Agreement of) {
    long n = expected[1];
    String where = of.group() + ", rank " + rank + ": rank " + peer + "'s sends to this rank and this rank's receives"
        + " from it disagree (the agreement check after receive " + n + " from rank " + peer + ")";
    String fix = ". Every send must meet a receive of the same data type and count, in the same order"
        + " (docs/reliability.md, \"Agreement check\"; CommOptions.withAgreementCheck(false) turns the check off)";
    String mine = CallRecord.text(expected, 3, of.plans());
    if (got[0] != Agreement.MAGIC) {
      String theirs = "something that is not its check (it sent a different number of messages to this rank)";
      return new DisagreementException(where + ": this rank's receive " + n + " was " + mine + "; where rank " + peer
          + "'s check should be, it sent " + theirs + fix, mine, theirs, List.of(peer), List.of("number of messages"));
    }
    String theirs = CallRecord.text(got, 3, of.plans());
    List<String> fields = new java.util.ArrayList<>();
    if ((got[3] >>> 16 & 0xff) != (expected[3] >>> 16 & 0xff)) {
      fields.add("data type");
    }
    if (got[4] != expected[4]) {
      fields.add("count");
    }
    String last = got[1] != n ? "rank " + peer + " had sent " + got[1] + " messages, its last " + theirs
        : fields.isEmpty() ? "the last messages agree (" + theirs + " against " + mine + "), an earlier one of"
            + " the " + n + " did not"
        : "rank " + peer + "'s send " + n + " was " + theirs;
    if (got[1] != n && fields.isEmpty()) {
      fields.add("number of messages");
    } else if (fields.isEmpty()) {
      fields.add("an earlier message's data type or count");
    }
    return new DisagreementException(where + ": this rank's receive " + n + " was " + mine + "; " + last
        + " (differing: " + String.join(", ", fields) + ")" + fix, mine, theirs, List.of(peer), fields);
  }
}
