package dev.commplan.model;

/**
 * What "in place" means for a collective, as NCCL defines it: which buffer holds what, and where the
 * other side's pointer points. A plan declares an in-place collective with one field, the whole buffer.
 */
public enum InPlace {
  /** One buffer is both sides: AllReduce, Broadcast, Reduce. */
  SAME_BUFFER,
  /**
   * The buffer holds the whole result; this rank's input is its rank-th slice (send = recv + rank·count):
   * AllGather, Gather.
   */
  SEND_IS_RANK_SLICE_OF_RECV,
  /**
   * The buffer holds the whole input; the result lands in its rank-th slice (recv = send + rank·count):
   * ReduceScatter, Scatter.
   */
  RECV_IS_RANK_SLICE_OF_SEND,
  /** Not allowed: the collective needs two buffers (AllToAll: {@code into} is required). */
  NOT_ALLOWED,
  /** Point-to-point (Send, Recv): there is only one buffer, the field itself, and never an {@code into}. */
  ONE_BUFFER;

  /**
   * {@return whether the one buffer holds one slice per rank, so its count must be divisible by the ranks}
   */
  public boolean sliced() {
    return this == SEND_IS_RANK_SLICE_OF_RECV || this == RECV_IS_RANK_SLICE_OF_SEND;
  }
}
