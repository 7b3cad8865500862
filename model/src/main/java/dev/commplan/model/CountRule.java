package dev.commplan.model;

/**
 * How a collective's receive count follows from its send count: the size rule the processor proves with
 * symbols and the runtime checks with numbers. Each names the {@link RuleId} its violation reports.
 */
public enum CountRule {
  /** count(recv) = count(send): AllReduce, Broadcast. */
  SAME(RuleId.COUNT_MISMATCH),
  /** count(recv) = ranks × count(send): AllGather. */
  RECV_IS_RANKS_TIMES_SEND(RuleId.GATHER_SIZE),
  /** count(send) = ranks × count(recv): ReduceScatter. */
  SEND_IS_RANKS_TIMES_RECV(RuleId.SCATTER_SIZE);

  private final RuleId violation;

  CountRule(RuleId violation) {
    this.violation = violation;
  }

  /** The id a violation is reported under. */
  public RuleId violation() {
    return violation;
  }

  /** Whether the counts satisfy the rule on {@code ranks} ranks (exactly: no overflow can make it hold). */
  public boolean holds(long send, long recv, long ranks) {
    return switch (this) {
      case SAME -> send == recv;
      case RECV_IS_RANKS_TIMES_SEND -> recv % ranks == 0 && recv / ranks == send;
      case SEND_IS_RANKS_TIMES_RECV -> send % ranks == 0 && send / ranks == recv;
    };
  }

  /** The receive count the rule requires for {@code send} elements sent ({@code send, ranks > 0}), or -1 if there is none (not divisible, or beyond a long). */
  public long requiredRecv(long send, long ranks) {
    return switch (this) {
      case SAME -> send;
      case RECV_IS_RANKS_TIMES_SEND -> send <= Long.MAX_VALUE / ranks ? send * ranks : -1;
      case SEND_IS_RANKS_TIMES_RECV -> send % ranks == 0 ? send / ranks : -1;
    };
  }

  /** NCCL's {@code count} argument: the send count, except ReduceScatter's, which is the receive count. */
  public long ncclCount(long send, long recv) {
    return this == SEND_IS_RANKS_TIMES_RECV ? recv : send;
  }
}
