package dev.commplan.model;

/**
 * What "in place" means for a collective, as NCCL defines it: which buffer holds what, and where the
 * other side's pointer points. A plan declares an in-place collective with one field, the whole buffer.
 */
public enum InPlace {
  /** One buffer is both sides: AllReduce, Broadcast. */
  SAME_BUFFER,
  /** The buffer holds the whole result; this rank's input is its rank-th slice (send = recv + rank·count): AllGather. */
  SEND_IS_RANK_SLICE_OF_RECV,
  /** The buffer holds the whole input; the result lands in its rank-th slice (recv = send + rank·count): ReduceScatter. */
  RECV_IS_RANK_SLICE_OF_SEND;

  /** Whether the one buffer holds one slice per rank, so its count must be divisible by the ranks. */
  public boolean sliced() {
    return this != SAME_BUFFER;
  }
}
