package dev.commplan.runtime.nccl.calls;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.binding.NcclDispatch;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.nccl.binding.NcclTypeSupport;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.rank.StepEvents;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.EnumMap;
import java.util.Map;

/**
 * One communicator's direct path: a collective called on it ({@code comm.allReduce(...)}), already
 * checked by {@code AbstractCommunicator}, and a user's group ({@code groupStart()} .. {@code groupEnd()}),
 * handed to NCCL through {@link NcclDispatch}, recorded in the flight record, failures turned into
 * exceptions by the rank's state. The communicator's one thread uses it (the gate sees to that).
 */
public final class NcclDirectCalls {
  private static final Map<Collective, OperationLabel> LABELS = new EnumMap<>(Collective.class);
  private static final Map<Collective, OperationLabel> CHECK_LABELS = new EnumMap<>(Collective.class);

  static {
    for (Collective c : Collective.values()) {
      LABELS.put(c, OperationLabel.direct(c.label()));
      CHECK_LABELS.put(c, OperationLabel.agreementCheck(c.label()));
    }
  }

  private final NcclRank rank;
  private final NcclRankState state;
  private final StepEvents events;
  /** The stream of the last direct collective (for the event after a user's group). */
  private long lastStream;
  private int groupDepth;

  /** The direct path of the communicator whose rank is {@code rank}. */
  public NcclDirectCalls(NcclRank rank) {
    this.rank = rank;
    this.state = rank.state();
    this.events = rank.events();
  }

  /**
   * Enqueues one checked direct collective on the {@code cudaStream_t} {@code s}; outside a group NCCL
   * may wait in the call for its peers to connect, which the cluster's watchdog times. Records it (with
   * an event when not in a group) or fails. Gather, Scatter and AllToAll on an NCCL without their
   * functions are their sends and receives in a group of their own (nested in the caller's, if one is
   * open). {@code agreementCheck}: the call is the agreement check's own (its label says so).
   */
  public void enqueue(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op, int root, long s,
      boolean agreementCheck) {
    NcclTypeSupport.require(rank.version(), send.dataType(), op, false);
    int type = NcclEnums.dataType(send.dataType());
    int ncclOp = op == null ? 0 : NcclEnums.op(op);
    OperationLabel label = (agreementCheck ? CHECK_LABELS : LABELS).get(collective);
    long handle = rank.comm();
    long fenced = 0; // how long this rank waited at the fence, for the flight record
    if (groupDepth == 0 && !collective.pointToPoint()) {
      fenced = rank.meetGroup(); // every rank of the group makes this launch: no kernel before all are enqueued
    }
    state.watchdog().enter(label);
    int rc;
    if (SendRecvStandIns.isNative(collective)) {
      rc = NcclDispatch.enqueue(collective, NcclMemory.pointer(send), NcclMemory.pointer(recv), count, type,
          ncclOp, root, handle, s, groupDepth > 0);
    } else {
      rc = viaSendRecv(collective, NcclMemory.pointer(send), NcclMemory.pointer(recv), count,
          send.dataType(), type, root, handle, s);
    }
    state.watchdog().leave();
    if (rc != 0) {
      throw state.failed(SendRecvStandIns.isNative(collective) ? collective.ncclFunction()
          : collective.ncclFunction() + " (missing; as " + SendRecvStandIns.path(collective) + ")", rc);
    }
    lastStream = s;
    events.recordDirect(collective, send.dataType(), op, count, root, agreementCheck ? OperationLabel.Kind.CHECK
        : collective.pointToPoint() ? OperationLabel.Kind.P2P : OperationLabel.Kind.COLLECTIVE, groupDepth == 0 ? s : 0,
        fenced);
  }

  /** Gather, Scatter or AllToAll as sends and receives in one group; the first failing code, or 0. */
  private int viaSendRecv(Collective collective, long send, long recv, long count, DataType dataType, int type,
      int root, long handle, long s) {
    int rc = NcclDispatch.groupStart();
    if (rc != 0) {
      return rc;
    }
    int[] failed = new int[1];
    SendRecvStandIns.viaSendRecv(collective, send, recv, count * dataType.byteSize(), root, rank.rank(), rank.size(),
        (isSend, p, peer) -> {
          if (failed[0] == 0) {
            failed[0] = NcclDispatch.enqueue(isSend ? Collective.SEND : Collective.RECV, p, p, count, type, 0, peer,
                handle, s, true);
          }
        });
    int end = NcclDispatch.groupEnd(); // always close the group
    return failed[0] != 0 ? failed[0] : end;
  }

  /** {@code ncclGroupStart} of a user's group (groups nest). */
  public void openGroup() {
    int rc = NcclDispatch.groupStart();
    if (rc != 0) {
      throw state.failed("ncclGroupStart", rc);
    }
    groupDepth++;
  }

  /** {@code ncclGroupEnd} of the innermost user's group; the outermost launches the group's calls. */
  public void closeGroup() {
    if (groupDepth == 0) {
      throw new IllegalStateException("groupEnd() without a matching groupStart() on " + rank);
    }
    groupDepth--;
    state.watchdog().enter(null);
    int rc = NcclDispatch.groupEnd();
    state.watchdog().leave();
    if (rc != 0) {
      throw state.failed("ncclGroupEnd", rc);
    }
    if (groupDepth == 0) {
      events.markLast(lastStream); // the group's calls are launched now: one event covers them
    }
  }

  /** Whether a user's group is open. */
  public boolean inGroup() {
    return groupDepth > 0;
  }
}
