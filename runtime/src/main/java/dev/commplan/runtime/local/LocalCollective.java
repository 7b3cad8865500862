package dev.commplan.runtime.local;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DataType;
import dev.commplan.model.Collective;
import dev.commplan.runtime.spi.MetCalls;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.List;
import java.util.Objects;

/**
 * One rank's side of one collective, resolved to memory blocks and byte offsets (NCCL's arguments, with
 * in-place offsets already applied). It is the work item the stream runs; compiled schedules make them
 * once and enqueue the same objects on every execute.
 */
final class LocalCollective implements LocalStream.Work {
  final LocalCommunicator comm;
  final Collective collective;
  final DataType type;
  final ReduceOp op;
  /** The root of a rooted collective; the peer of a send or receive. */
  final int root;
  final long count;
  final LocalMemory send;
  final long sendOffset;
  final LocalMemory recv;
  final long recvOffset;
  /** What this call is (plan, step, fields), made once: timeouts and the flight record name it. */
  final OperationLabel label;
  /** This call as the agreement check compares it where the ranks meet, made once. */
  final MetCalls.Call met;

  /** A collective called directly on the communicator. */
  LocalCollective(LocalCommunicator comm, Collective collective, DataType type, ReduceOp op, int root, long count,
      LocalMemory send, long sendOffset, LocalMemory recv, long recvOffset) {
    this(comm, collective, type, op, root, count, send, sendOffset, recv, recvOffset, null);
  }

  /**
   * A call of a compiled schedule; {@code label} names its plan, step and fields (null: called directly,
   * labelled with its description).
   */
  LocalCollective(LocalCommunicator comm, Collective collective, DataType type, ReduceOp op, int root, long count,
      LocalMemory send, long sendOffset, LocalMemory recv, long recvOffset, OperationLabel label) {
    this.comm = comm;
    this.collective = Objects.requireNonNull(collective);
    this.type = Objects.requireNonNull(type);
    this.op = op;
    this.root = root;
    this.count = count;
    this.send = send;
    this.sendOffset = sendOffset;
    this.recv = recv;
    this.recvOffset = recvOffset;
    this.label = label != null ? label
        : OperationLabel.direct(OperationLabel.Call.of(collective, type, op, count, root, null, List.of()));
    this.met = new MetCalls.Call(comm, collective, type, op, root, count, this.label);
  }

  @Override
  public OperationLabel label() {
    return label;
  }

  /** Its communicator's: a collective takes the next number of its sequence when enqueued. */
  @Override
  public LocalCommunicator sequencedBy() {
    return comm;
  }

  @Override
  public void run(LocalStream stream, long sequence) {
    if (send.isClosed() || recv.isClosed()) {
      throw new CommPlanException(
          "rank " + comm.rank() + ": " + describe() + " (#" + sequence + ") cannot run: its "
              + (send.isClosed() ? "send" : "receive") + " buffer was freed after the call was enqueued");
    }
    stream.waited(comm.group().rendezvous.perform(comm.rank(), sequence, this, stream));
  }

  /** For messages: {@code all-reduce F32 SUM, count 16}. */
  String describe() {
    return describe(collective, type, op, root, count);
  }

  /** {@code all-reduce F32 SUM, count 16}, {@code send F32 to rank 1, count 4}. */
  static String describe(Collective collective, DataType type, ReduceOp op, int root, long count) {
    StringBuilder s = new StringBuilder(collective.label()).append(' ').append(type);
    if (op != null) {
      s.append(' ').append(op);
    }
    if (collective.hasRoot()) {
      s.append(" root ").append(root);
    }
    if (collective.pointToPoint()) {
      s.append(collective == Collective.SEND ? " to rank " : " from rank ").append(root);
    }
    return s.append(", count ").append(count).toString();
  }

  @Override
  public String toString() {
    return "LocalCollective[rank " + comm.rank() + ": " + describe() + "]";
  }
}
