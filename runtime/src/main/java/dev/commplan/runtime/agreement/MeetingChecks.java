package dev.commplan.runtime.agreement;

import dev.commplan.runtime.DisagreementException;
import java.util.List;

/**
 * What this package decides and words for the layers above it where ranks meet outside the agreement check's own
 * comparisons, so that a disagreement is decided and worded here whoever meets it ({@link Disagreements}): a
 * backend's rendezvous and mailboxes in one process (the local backend's, through {@code spi.MetCalls}), a
 * library's report that a message was longer than a call's count (MPI's truncation), and the operations of the TCP
 * rendezvous of one rank per process ({@code bootstrap}).
 */
public final class MeetingChecks {
  private MeetingChecks() {}

  /**
   * Where the ranks of a group that all live in this process met for one collective (a backend's rendezvous):
   * whether their calls there agree, and where they do not, the exception each rank throws, naming the first call
   * at which the ranks' records differ (as the window check would) or, without such records, the calls met there
   * ({@link HostComparison#collective}). The backend asks {@link MetCall#agreesWith} first, which allocates
   * nothing. Called by the thread that found all the calls there, while the ranks
   * wait; it may wait a little for a rank's record of its call.
   *
   * @param group the group's label: {@code world}
   * @param checks rank r's check of the group's communicator ({@link Agreement#of}), or null where it has none
   * @param calls rank r's call there
   * @param sequence the collective's number on the group, from 0
   * @return rank r's exception at index r, each with the same message; null where the calls agree
   */
  public static List<DisagreementException> compareCollective(String group, List<Agreement> checks,
      List<MetCall> calls, long sequence) {
    return HostComparison.collective(group, checks.toArray(Agreement[]::new), calls.toArray(MetCall[]::new),
        sequence);
  }

  /**
   * Where a send met its receive in this process (a backend's mailbox): whether they agree, and where they do
   * not, each side's exception, with the same message.
   *
   * @param group the group's label: {@code world}
   * @param ranks the group's size
   * @param sender the sending rank, {@code send} its call
   * @param send the send
   * @param receiver the receiving rank, {@code receive} its call
   * @param receive the receive
   * @param senderCheck the sender's check of the group's communicator ({@link Agreement#of}), or null where it has none
   * @param receiverCheck the receiver's, or null
   * @return the exception of rank r at index r (null for a rank outside the pair), or null where they agree
   */
  public static List<DisagreementException> compareTransfer(String group, int ranks, int sender, MetCall send,
      int receiver, MetCall receive, Agreement senderCheck, Agreement receiverCheck) {
    return HostComparison.transfer(group, ranks, sender, send, receiver, receive, senderCheck, receiverCheck);
  }

  /**
   * Where the ranks of a rendezvous (the TCP rendezvous of one rank per process, {@code bootstrap}) call its
   * numbered operations, whether the operation this rank is in and the one another rank sent agree.
   *
   * @param rank this rank
   * @param kind the operation this rank is in: {@code allGather}
   * @param op its number, from 1
   * @param other the rank whose operation arrived
   * @param theirKind that rank's operation: {@code broadcast}
   * @param theirOp its number
   * @return null where they agree, else what is wrong: {@code the ranks call different rendezvous operations: rank 0
   *     is in allGather #1, rank 2 in broadcast #1; every rank must ...}
   */
  public static String differingRendezvousOperations(int rank, String kind, int op, int other, String theirKind,
      int theirOp) {
    return Disagreements.differingOperations(rank, kind, op, other, theirKind, theirOp);
  }

  /**
   * What a message longer than a call's count (MPI's {@code MPI_ERR_TRUNCATE}) says about the ranks, for a
   * backend whose library found it before any check compared the calls ({@link Disagreements#truncated}).
   *
   * @param group the communicator's label: {@code world}
   * @param receive whether the call was a receive (else a collective)
   * @return the reading, to follow the library's own words: {@code so the ranks passed it different counts
   *     (differing: count). Every rank of world must ...}
   */
  public static String truncationReading(String group, boolean receive) {
    return Disagreements.truncated(group, receive);
  }
}
