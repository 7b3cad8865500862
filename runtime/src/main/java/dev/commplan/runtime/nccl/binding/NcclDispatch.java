package dev.commplan.runtime.nccl.binding;

import dev.commplan.model.Collective;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;

/**
 * The one place a collective is handed to NCCL, for direct calls and compiled schedules alike: the
 * arguments already resolved (device pointers, NCCL's count, {@code ncclDataType_t}, {@code ncclRedOp_t},
 * root or peer), the raw code returned for the caller to turn into an exception (the rank's state does,
 * since a fatal code aborts the communicator first). On the hot path: nothing is allocated or checked here.
 *
 * <p>Inside a group NCCL only records a call, so the {@code critical} downcalls are used there; outside a
 * group a call launches work and may take locks, so it gets the plain downcall.
 */
public final class NcclDispatch {
  private NcclDispatch() {}

  /**
   * Enqueues {@code collective}: {@code op} is the {@code ncclRedOp_t} of a reduction (else ignored),
   * {@code rootOrPeer} the root of a rooted collective or the peer of a send or receive (else ignored). A
   * send reads {@code send}, a receive writes {@code recv}. Gather, Scatter and AllToAll only where {@link
   * #hasOwnFunction}.
   *
   * @return NCCL's {@code ncclResult_t}
   */
  public static int enqueue(Collective collective, long send, long recv, long count, int type, int op, int rootOrPeer,
      long comm, long stream, boolean inGroup) {
    if (inGroup) {
      return switch (collective) {
        case ALL_REDUCE -> NcclCollectives.ncclAllReduceCritical(send, recv, count, type, op, comm, stream);
        case BROADCAST -> NcclCollectives.ncclBroadcastCritical(send, recv, count, type, rootOrPeer, comm, stream);
        case ALL_GATHER -> NcclCollectives.ncclAllGatherCritical(send, recv, count, type, comm, stream);
        case REDUCE_SCATTER -> NcclCollectives.ncclReduceScatterCritical(send, recv, count, type, op, comm, stream);
        case REDUCE -> NcclCollectives.ncclReduceCritical(send, recv, count, type, op, rootOrPeer, comm, stream);
        case GATHER -> NcclCollectives.ncclGatherCritical(send, recv, count, type, rootOrPeer, comm, stream);
        case SCATTER -> NcclCollectives.ncclScatterCritical(send, recv, count, type, rootOrPeer, comm, stream);
        case ALL_TO_ALL -> NcclCollectives.ncclAlltoAllCritical(send, recv, count, type, comm, stream);
        case SEND -> NcclCollectives.ncclSendCritical(send, count, type, rootOrPeer, comm, stream);
        case RECV -> NcclCollectives.ncclRecvCritical(recv, count, type, rootOrPeer, comm, stream);
      };
    }
    return switch (collective) {
      case ALL_REDUCE -> NcclCollectives.ncclAllReduce(send, recv, count, type, op, comm, stream);
      case BROADCAST -> NcclCollectives.ncclBroadcast(send, recv, count, type, rootOrPeer, comm, stream);
      case ALL_GATHER -> NcclCollectives.ncclAllGather(send, recv, count, type, comm, stream);
      case REDUCE_SCATTER -> NcclCollectives.ncclReduceScatter(send, recv, count, type, op, comm, stream);
      case REDUCE -> NcclCollectives.ncclReduce(send, recv, count, type, op, rootOrPeer, comm, stream);
      case GATHER -> NcclCollectives.ncclGather(send, recv, count, type, rootOrPeer, comm, stream);
      case SCATTER -> NcclCollectives.ncclScatter(send, recv, count, type, rootOrPeer, comm, stream);
      case ALL_TO_ALL -> NcclCollectives.ncclAlltoAll(send, recv, count, type, comm, stream);
      case SEND -> NcclCollectives.ncclSend(send, count, type, rootOrPeer, comm, stream);
      case RECV -> NcclCollectives.ncclRecv(recv, count, type, rootOrPeer, comm, stream);
    };
  }

  /**
   * Whether the loaded NCCL has {@code collective}'s own function: all but, before 2.28, Gather, Scatter and
   * AllToAll (then {@code calls.SendRecvStandIns} issues their sends and receives instead).
   */
  public static boolean hasOwnFunction(Collective collective) {
    return switch (collective) {
      case GATHER -> NcclCollectives.hasGather();
      case SCATTER -> NcclCollectives.hasScatter();
      case ALL_TO_ALL -> NcclCollectives.hasAlltoAll();
      default -> true;
    };
  }

  /** {@code ncclGroupStart}, raw: the hot path checks the code itself. */
  public static int groupStart() {
    return NcclCommunicators.ncclGroupStart();
  }

  /** {@code ncclGroupEnd}, raw and plain (it launches the group's work and may wait for peers). */
  public static int groupEnd() {
    return NcclCommunicators.ncclGroupEnd();
  }
}
