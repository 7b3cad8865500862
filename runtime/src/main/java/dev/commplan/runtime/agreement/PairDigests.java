package dev.commplan.runtime.agreement;

import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.Arrays;
import java.util.List;

/**
 * The sends and receives of one communicator's agreement check ({@link Agreement}). They are not units (a
 * rank takes part only in its own): per peer, each side folds each message's data type and count into a digest,
 * and keeps the record of its last. After its messages 1, 3, 7, ... to a peer, the sender sends the peer its
 * count, digest and last record ({@link PairCheck}), and the receiver receives them after its receive of the same
 * number and compares them with its own. The receiver fails; the sender learns it through the family's failure,
 * like every other failure of one rank. What no such message compared is compared on the host where the ranks
 * live in one process ({@link HostComparison}).
 */
final class PairDigests {
  private final Agreement owner;
  private final long[] sent;
  private final long[] sentDigest;
  private final long[] received;
  private final long[] receivedDigest;
  /** Per peer, the record of the last message: {@link CallRecord#LONGS} longs from {@code peer * LONGS}. */
  private final long[] lastSent;
  private final long[] lastReceived;
  private final long[] nextSendCheck;
  private final long[] nextReceiveCheck;

  PairDigests(Agreement owner, int ranks) {
    this.owner = owner;
    sent = new long[ranks];
    sentDigest = new long[ranks];
    received = new long[ranks];
    receivedDigest = new long[ranks];
    lastSent = new long[ranks * CallRecord.LONGS];
    lastReceived = new long[ranks * CallRecord.LONGS];
    nextSendCheck = new long[ranks];
    nextReceiveCheck = new long[ranks];
    Arrays.fill(nextSendCheck, 1);
    Arrays.fill(nextReceiveCheck, 1);
  }

  /** A send ({@code send}) or receive of {@code count} {@code type} with {@code peer}, enqueued on {@code stream}. */
  void add(boolean send, int peer, DataType type, long count, Stream stream) {
    StreamProgress progress = Guards.progressOf(stream);
    if (progress == null) {
      return;
    }
    long word0 = CallRecord.direct(send ? CallRecord.SEND : CallRecord.RECV, send ? Collective.SEND : Collective.RECV,
        type, null, peer);
    long[] last = send ? lastSent : lastReceived;
    int at = peer * CallRecord.LONGS;
    last[at] = word0;
    last[at + 1] = count;
    long[] counts = send ? sent : received;
    long[] digests = send ? sentDigest : receivedDigest;
    digests[peer] = CallRecord.mix(CallRecord.mix(digests[peer], type.ordinal() + 1), count);
    long n = ++counts[peer];
    long[] due = send ? nextSendCheck : nextReceiveCheck;
    if (n == due[peer]) {
      due[peer] = CallWindow.next(n);
      if (owner.exchange().isCapturing(stream)) {
        return;
      }
      PairCheck check = owner.buffers().pair(stream);
      check.arm(send, owner.rank(), peer, n, digests[peer], word0, count, owner);
      if (send) {
        owner.exchange().send(check.message(), peer, stream);
      } else {
        owner.exchange().recv(check.message(), peer, stream);
      }
      progress.afterSynchronize(check, progress.issue());
    }
  }

  /**
   * This rank's sends to {@code receiver}'s rank against that rank's receives from this one, in all (on the
   * host, once neither rank uses its communicator); null where they agree.
   *
   * @param receiver the other rank's side of the same communicator
   */
  Finding againstReceiver(PairDigests receiver) {
    int from = owner.rank();
    int to = receiver.owner.rank();
    long n = sent[to];
    long m = receiver.received[from];
    if (n == m && sentDigest[to] == receiver.receivedDigest[from]) {
      return null;
    }
    String group = owner.group();
    String mine = n == 0 ? "none" : CallRecord.text(lastSent, to * CallRecord.LONGS, owner.plans());
    String theirs = m == 0 ? "none" : CallRecord.text(receiver.lastReceived, from * CallRecord.LONGS,
        receiver.owner.plans());
    if (n != m) {
      return Disagreements.numberOfMessages(group, owner.ranks(), from, n, mine, to, m, theirs);
    }
    List<String> fields = PairCheck.lastDifferences(lastSent, to * CallRecord.LONGS, receiver.lastReceived,
        from * CallRecord.LONGS);
    if (!fields.isEmpty()) {
      return Disagreements.message(group, owner.ranks(), from, mine, to, theirs, fields, true);
    }
    return Disagreements.earlierMessage(group, owner.ranks(), from, mine, to, theirs, n);
  }
}
