package dev.commplan.model;

/**
 * {@link RuleId#FP8_AVERAGE}, CommPlan's own rule: no AVG on the fp8 types, on any backend. NCCL (every
 * version with fp8, 2.24.3 to 2.30.7) computes ncclAvg on ncclFloat8e4m3 and ncclFloat8e5m2 as a sum
 * pre-multiplied by 1/ranks rounded to fp8 (for 3 ranks 0.34375 or 0.3125, not 1/3), and fails on a
 * one-rank communicator with ncclInvalidArgument. The local and MPI backends must not compute what the
 * NCCL backend refuses, so the processor rejects it at compile time and the runtime when a plan is built
 * or a collective is called, each with its own message and this id.
 */
public final class Fp8AverageRule {
  /** The name of the {@code ReduceOp} constant the rule is about. */
  private static final String AVG = "AVG";

  private Fp8AverageRule() {}

  /**
   * Whether the rule refuses {@code op} on {@code type} in {@code collective}.
   *
   * @param collective the collective
   * @param op the name of its {@code ReduceOp} constant, such as {@code AVG}; ignored where it takes none
   * @param type the element type of its buffers
   * @return true for AVG on F8E4M3 or F8E5M2 in a collective that reduces
   */
  public static boolean refuses(Collective collective, String op, ElementType type) {
    return collective.hasOp() && AVG.equals(op) && type.isFloat8();
  }
}
