package dev.commplan.runtime.nccl;

import dev.commplan.model.Collective;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;

/**
 * The one place a collective is handed to NCCL, for direct calls and compiled schedules alike: the
 * arguments already resolved (device pointers, NCCL's count, {@code ncclDataType_t}, {@code ncclRedOp_t},
 * root or peer), the raw code returned for the caller to turn into an exception ({@link
 * NcclRankState#failed}).
 *
 * <p>Gather, Scatter and AllToAll go to {@code ncclGather}, {@code ncclScatter} and {@code ncclAlltoAll}
 * where the loaded NCCL has them ({@link #isNative}); otherwise {@link #viaSendRecv} says which {@code
 * ncclSend}/{@code ncclRecv} give the same result inside one group, as NVIDIA/nccl-tests does for NCCL
 * before 2.28 ({@code src/gather.cu}, {@code scatter.cu}, {@code alltoall.cu}): Gather, every rank sends
 * to the root and the root receives slice i from rank i; Scatter, the root sends slice i to rank i and
 * every rank receives from the root; AllToAll, every rank sends slice j to rank j and receives slice i
 * from rank i. In place, the root's transfer to itself is skipped (its slice already holds it).
 *
 * <p>Inside a group NCCL only records a call, so the {@code critical} downcalls are used there; outside a
 * group a call launches work and may take locks, so it gets the plain downcall.
 */
final class NcclCalls {
  private NcclCalls() {}

  /**
   * The system property that makes Gather, Scatter and AllToAll take the send/receive path even where the
   * loaded NCCL has their functions ({@code true}; read once): so that a GPU test covers both paths on one
   * NCCL.
   */
  static final String VIA_SEND_RECV_PROPERTY = "commplan.nccl.viaSendRecv";

  private static volatile boolean viaSendRecv = Boolean.getBoolean(VIA_SEND_RECV_PROPERTY);

  /** Sets what {@link #VIA_SEND_RECV_PROPERTY} set at start (for tests of both paths in one JVM). */
  static void viaSendRecv(boolean always) {
    viaSendRecv = always;
  }

  /**
   * Enqueues {@code collective}: {@code op} is the {@code ncclRedOp_t} of a reduction (else ignored),
   * {@code rootOrPeer} the root of a rooted collective or the peer of a send or receive (else ignored). A
   * send reads {@code send}, a receive writes {@code recv}. Gather, Scatter and AllToAll only where {@link
   * #isNative}.
   *
   * @return NCCL's {@code ncclResult_t}
   */
  static int enqueue(Collective collective, long send, long recv, long count, int type, int op, int rootOrPeer,
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

  /** Whether the loaded NCCL has {@code collective}'s own function (all but, before 2.28, Gather, Scatter, AllToAll). */
  static boolean isNative(Collective collective) {
    if (viaSendRecv && (collective == Collective.GATHER || collective == Collective.SCATTER
        || collective == Collective.ALL_TO_ALL)) {
      return false;
    }
    return switch (collective) {
      case GATHER -> NcclCollectives.hasGather();
      case SCATTER -> NcclCollectives.hasScatter();
      case ALL_TO_ALL -> NcclCollectives.hasAlltoAll();
      default -> true;
    };
  }

  /** How {@code collective} is issued here, for {@code Plan.describe()}: its function, or the send/receive group. */
  static String path(Collective collective) {
    return isNative(collective) ? collective.ncclFunction() : "grouped ncclSend/ncclRecv";
  }

  /** Receives the transfers {@link #viaSendRecv} lists. */
  @FunctionalInterface
  interface Transfers {
    /** A send of {@code count} elements at {@code pointer} to {@code peer} ({@code send}), or a receive into it. */
    void add(boolean send, long pointer, int peer);
  }

  /**
   * The sends and receives (in the order to issue them, inside one group) that give Gather, Scatter or
   * AllToAll's result on {@code rank} of {@code ranks} (see the class comment); {@code sliceBytes} is
   * NCCL's count times the element size.
   */
  static void viaSendRecv(Collective collective, long send, long recv, long sliceBytes, int root, int rank, int ranks,
      Transfers out) {
    switch (collective) {
      case GATHER -> {
        boolean inPlace = rank == root && send == recv + root * sliceBytes;
        if (!inPlace) {
          out.add(true, send, root);
        }
        if (rank == root) {
          for (int r = 0; r < ranks; r++) {
            if (r != root || !inPlace) {
              out.add(false, recv + r * sliceBytes, r);
            }
          }
        }
      }
      case SCATTER -> {
        boolean inPlace = rank == root && recv == send + root * sliceBytes;
        if (rank == root) {
          for (int r = 0; r < ranks; r++) {
            if (r != root || !inPlace) {
              out.add(true, send + r * sliceBytes, r);
            }
          }
        }
        if (!inPlace) {
          out.add(false, recv, root);
        }
      }
      case ALL_TO_ALL -> {
        for (int r = 0; r < ranks; r++) {
          out.add(true, send + r * sliceBytes, r);
          out.add(false, recv + r * sliceBytes, r);
        }
      }
      default -> throw new IllegalArgumentException(collective + " has its own NCCL function");
    }
  }

  /** {@code ncclGroupStart}, raw: the hot path checks the code itself. */
  static int groupStart() {
    return NcclCommunicators.ncclGroupStart();
  }

  /** {@code ncclGroupEnd}, raw and plain (it launches the group's work and may wait for peers). */
  static int groupEnd() {
    return NcclCommunicators.ncclGroupEnd();
  }
}
