package dev.commplan.runtime.nccl.calls;

import dev.commplan.model.Collective;
import dev.commplan.runtime.nccl.binding.NcclDispatch;

/**
 * Gather, Scatter and AllToAll on an NCCL without {@code ncclGather}, {@code ncclScatter} and {@code
 * ncclAlltoAll} (before 2.28, {@link #isNative}): {@link #viaSendRecv} says which {@code ncclSend}/{@code
 * ncclRecv} give the same result inside one group, as NVIDIA/nccl-tests does for NCCL before 2.28 ({@code
 * src/gather.cu}, {@code scatter.cu}, {@code alltoall.cu}): Gather, every rank sends to the root and the root
 * receives slice i from rank i; Scatter, the root sends slice i to rank i and every rank receives from the
 * root; AllToAll, every rank sends slice j to rank j and receives slice i from rank i. In place, the root's
 * transfer to itself is skipped (its slice already holds it). Direct calls and compiled schedules both
 * issue them through {@link NcclDispatch}, like any other call.
 */
public final class SendRecvStandIns {
  private SendRecvStandIns() {}

  /**
   * The system property that makes Gather, Scatter and AllToAll take the send/receive path even where the
   * loaded NCCL has their functions ({@code true}; read once): so that a GPU test covers both paths on one
   * NCCL.
   */
  public static final String VIA_SEND_RECV_PROPERTY = "commplan.nccl.viaSendRecv";

  private static volatile boolean viaSendRecv = Boolean.getBoolean(VIA_SEND_RECV_PROPERTY);

  /** Sets what {@link #VIA_SEND_RECV_PROPERTY} set at start (for tests of both paths in one JVM). */
  public static void viaSendRecv(boolean always) {
    viaSendRecv = always;
  }

  /**
   * Whether {@code collective} is issued as its own NCCL function: where the loaded NCCL has it ({@link
   * NcclDispatch#hasOwnFunction}: all but, before 2.28, Gather, Scatter, AllToAll) and {@link
   * #VIA_SEND_RECV_PROPERTY} does not ask for the stand-ins.
   */
  public static boolean isNative(Collective collective) {
    if (viaSendRecv && (collective == Collective.GATHER || collective == Collective.SCATTER
        || collective == Collective.ALL_TO_ALL)) {
      return false;
    }
    return NcclDispatch.hasOwnFunction(collective);
  }

  /** How {@code collective} is issued here, for {@code Plan.describe()}: its function, or the send/receive group. */
  public static String path(Collective collective) {
    return isNative(collective) ? collective.ncclFunction() : "grouped ncclSend/ncclRecv";
  }

  /** Receives the transfers {@link #viaSendRecv} lists. */
  @FunctionalInterface
  public interface Transfers {
    /** A send of {@code count} elements at {@code pointer} to {@code peer} ({@code send}), or a receive into it. */
    void add(boolean send, long pointer, int peer);
  }

  /**
   * The sends and receives (in the order to issue them, inside one group) that give Gather, Scatter or
   * AllToAll's result on {@code rank} of {@code ranks} (see the class comment); {@code sliceBytes} is
   * NCCL's count times the element size.
   */
  public static void viaSendRecv(Collective collective, long send, long recv, long sliceBytes, int root, int rank,
      int ranks, Transfers out) {
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
}
