package dev.commplan.model;

/**
 * How a collective's receive count follows from its send count: the size rule the processor proves with
 * symbols and the runtime checks with numbers. Each names the {@link RuleId} its violation reports.
 */
public enum CountRule {
  /** count(recv) = count(send): AllReduce, Broadcast, Reduce (and Send, Recv: one buffer). */
  SAME(RuleId.COUNT_MISMATCH),
  /** count(recv) = ranks × count(send): AllGather, Gather. */
  RECV_IS_RANKS_TIMES_SEND(RuleId.GATHER_SIZE),
  /** count(send) = ranks × count(recv): ReduceScatter, Scatter. */
  SEND_IS_RANKS_TIMES_RECV(RuleId.SCATTER_SIZE),
  /** count(recv) = count(send), divisible by ranks (one slice per rank on both sides): AllToAll. */
  SAME_DIVISIBLE(RuleId.ALL_TO_ALL_SIZE);

  private final RuleId violation;

  CountRule(RuleId violation) {
    this.violation = violation;
  }

  /** {@return the id a violation is reported under} */
  public RuleId violation() {
    return violation;
  }

  /**
   * Whether the counts satisfy the rule on {@code ranks} ranks (exactly: no overflow can make it hold).
   *
   * @param send the send count, in elements
   * @param recv the receive count, in elements
   * @param ranks the number of ranks, positive
   * @return true if the rule holds
   */
  public boolean holds(long send, long recv, long ranks) {
    return switch (this) {
      case SAME -> send == recv;
      case RECV_IS_RANKS_TIMES_SEND -> recv % ranks == 0 && recv / ranks == send;
      case SEND_IS_RANKS_TIMES_RECV -> send % ranks == 0 && send / ranks == recv;
      case SAME_DIVISIBLE -> send == recv && send % ranks == 0;
    };
  }

  /**
   * The receive count the rule requires for {@code send} elements sent.
   *
   * @param send the send count, in elements, positive
   * @param ranks the number of ranks, positive
   * @return the receive count, or -1 if there is none (not divisible, or beyond a long)
   */
  public long requiredRecv(long send, long ranks) {
    return switch (this) {
      case SAME -> send;
      case RECV_IS_RANKS_TIMES_SEND -> send <= Long.MAX_VALUE / ranks ? send * ranks : -1;
      case SEND_IS_RANKS_TIMES_RECV -> send % ranks == 0 ? send / ranks : -1;
      case SAME_DIVISIBLE -> send % ranks == 0 ? send : -1;
    };
  }

  /**
   * NCCL's {@code count} argument: the send count, except ReduceScatter's and Scatter's, which is the
   * receive count. AllToAll's is the count per peer, which needs the ranks: {@link #ncclCount(long, long,
   * long)}.
   *
   * @param send the send count, in elements
   * @param recv the receive count, in elements
   * @return the count to pass to NCCL
   * @throws IllegalStateException for {@link #SAME_DIVISIBLE}
   */
  public long ncclCount(long send, long recv) {
    if (this == SAME_DIVISIBLE) {
      throw new IllegalStateException("AllToAll's count is per peer: use ncclCount(send, recv, ranks)");
    }
    return this == SEND_IS_RANKS_TIMES_RECV ? recv : send;
  }

  /**
   * NCCL's {@code count} argument on {@code ranks} ranks (the counts satisfy the rule).
   *
   * @param send the send count, in elements
   * @param recv the receive count, in elements
   * @param ranks the number of ranks, positive
   * @return the count to pass to NCCL
   */
  public long ncclCount(long send, long recv, long ranks) {
    return this == SAME_DIVISIBLE ? send / ranks : ncclCount(send, recv);
  }

  /**
   * How many times NCCL's count the send side holds: {@code ranks} for ReduceScatter, Scatter, AllToAll; else
   * 1.
   *
   * @param ranks the number of ranks
   * @return the multiplier
   */
  public long sendCounts(long ranks) {
    return this == SEND_IS_RANKS_TIMES_RECV || this == SAME_DIVISIBLE ? ranks : 1;
  }

  /**
   * How many times NCCL's count the receive side holds: {@code ranks} for AllGather, Gather, AllToAll; else
   * 1.
   *
   * @param ranks the number of ranks
   * @return the multiplier
   */
  public long recvCounts(long ranks) {
    return this == RECV_IS_RANKS_TIMES_SEND || this == SAME_DIVISIBLE ? ranks : 1;
  }
}
