package dev.commplan.runtime.local;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.List;

/**
 * A group of sends and receives of one rank, run as one piece of stream work, with NCCL's group meaning:
 * every send is posted first, then every receive waits for its send and copies it, then the group waits
 * until its sends were taken ({@link LocalMailboxes}). So a ring exchange, where every rank sends to the
 * next and receives from the previous in one step, cannot deadlock, and a rank's send buffer is not
 * touched by later work before its receiver has copied it. A plan's step issues its transfers as one such
 * group (after the step's collectives); direct calls issue one per call, or one per group they were made
 * in. Transfers whose peer is none on this rank are not in it.
 */
final class LocalTransfers implements LocalStream.Work {
  private final LocalMailboxes.Transfer[] sends;
  private final LocalMailboxes.Transfer[] recvs;
  private final OperationLabel label;

  /** Transfers of one rank; each meets its peer in the mailboxes of the group it runs over (its call's communicator's). */
  LocalTransfers(List<LocalMailboxes.Transfer> sends, List<LocalMailboxes.Transfer> recvs, OperationLabel label) {
    this.sends = sends.toArray(LocalMailboxes.Transfer[]::new);
    this.recvs = recvs.toArray(LocalMailboxes.Transfer[]::new);
    this.label = label;
  }

  @Override
  public OperationLabel label() {
    return label;
  }

  @Override
  public void run(LocalStream stream, long sequence) {
    for (LocalMailboxes.Transfer send : sends) {
      if (send.call.send.isClosed()) {
        throw new CommPlanException("rank " + send.call.comm.rank() + ": " + send.describe() + " cannot run: its"
            + " buffer was freed after the call was enqueued");
      }
      send.call.comm.group().mailboxes.post(send);
    }
    for (LocalMailboxes.Transfer recv : recvs) {
      recv.call.comm.group().mailboxes.receive(recv, stream);
    }
    for (LocalMailboxes.Transfer send : sends) {
      send.call.comm.group().mailboxes.awaitTaken(send, stream);
    }
  }

  /**
   * The label of a user's group of direct sends and receives, issued together at its {@code groupEnd()}: {@code
   * send F32 to rank 1, count 16 + recv F32 from rank 3, count 16 (one group)}, with their calls.
   */
  static OperationLabel groupLabel(List<LocalMailboxes.Transfer> sends, List<LocalMailboxes.Transfer> recvs) {
    List<OperationLabel.Call> calls = new java.util.ArrayList<>();
    for (List<LocalMailboxes.Transfer> side : List.of(sends, recvs)) {
      for (LocalMailboxes.Transfer t : side) {
        calls.addAll(t.call.label.calls());
      }
    }
    return new OperationLabel(null, -1, -1, describe(sends, recvs) + " (one group)", List.of(), calls);
  }

  /** {@code send F32 to rank 1, count 16 + recv F32 from rank 3, count 16}: what the flight record calls it. */
  static String describe(List<LocalMailboxes.Transfer> sends, List<LocalMailboxes.Transfer> recvs) {
    StringBuilder s = new StringBuilder();
    for (List<LocalMailboxes.Transfer> side : List.of(sends, recvs)) {
      for (LocalMailboxes.Transfer t : side) {
        s.append(s.isEmpty() ? "" : " + ").append(t.call.describe());
      }
    }
    return s.toString();
  }
}
