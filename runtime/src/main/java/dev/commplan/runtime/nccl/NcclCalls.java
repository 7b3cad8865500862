package dev.commplan.runtime.nccl;

import dev.commplan.model.Collective;
import dev.commplan.runtime.nccl.internal.Nccl;

/**
 * The one place a collective is handed to NCCL, for direct calls and compiled schedules alike: the
 * arguments already resolved (device pointers, NCCL's count, {@code ncclDataType_t}, {@code ncclRedOp_t}
 * or root), the raw code returned for the caller to turn into an exception ({@link NcclRankState#failed}).
 *
 * <p>Inside a group NCCL only records a call, so the {@code critical} downcalls are used there; outside a
 * group a call launches work and may take locks, so it gets the plain downcall.
 */
final class NcclCalls {
  private NcclCalls() {}

  /**
   * Enqueues {@code collective}; {@code opOrRoot} is the {@code ncclRedOp_t} of a reduction, the root of a
   * rooted collective, and ignored otherwise.
   *
   * @return NCCL's {@code ncclResult_t}
   */
  static int enqueue(Collective collective, long send, long recv, long count, int type, int opOrRoot, long comm,
      long stream, boolean inGroup) {
    if (inGroup) {
      return switch (collective) {
        case ALL_REDUCE -> Nccl.ncclAllReduceCritical(send, recv, count, type, opOrRoot, comm, stream);
        case BROADCAST -> Nccl.ncclBroadcastCritical(send, recv, count, type, opOrRoot, comm, stream);
        case ALL_GATHER -> Nccl.ncclAllGatherCritical(send, recv, count, type, comm, stream);
        case REDUCE_SCATTER -> Nccl.ncclReduceScatterCritical(send, recv, count, type, opOrRoot, comm, stream);
      };
    }
    return switch (collective) {
      case ALL_REDUCE -> Nccl.ncclAllReduce(send, recv, count, type, opOrRoot, comm, stream);
      case BROADCAST -> Nccl.ncclBroadcast(send, recv, count, type, opOrRoot, comm, stream);
      case ALL_GATHER -> Nccl.ncclAllGather(send, recv, count, type, comm, stream);
      case REDUCE_SCATTER -> Nccl.ncclReduceScatter(send, recv, count, type, opOrRoot, comm, stream);
    };
  }

  /** {@code ncclGroupStart}, raw: the hot path checks the code itself. */
  static int groupStart() {
    return Nccl.ncclGroupStart();
  }

  /** {@code ncclGroupEnd}, raw and plain (it launches the group's work and may wait for peers). */
  static int groupEnd() {
    return Nccl.ncclGroupEnd();
  }
}
