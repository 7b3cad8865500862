package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.plan.RuleSubject.CallSubject;
import dev.commplan.runtime.plan.RuleSubject.Direct;

/**
 * {@link RuleId#FP8_AVERAGE}, one of {@link PlanRules}' rules: no AVG on the fp8 types, on any backend.
 * NCCL (every version with fp8, 2.24.3 to 2.30.7) computes ncclAvg on ncclFloat8e4m3 and ncclFloat8e5m2
 * as a sum pre-multiplied by 1/ranks rounded to fp8 (for 3 ranks 0.34375 or 0.3125, not 1/3), and fails
 * on a one-rank communicator with ncclInvalidArgument. The local and MPI backends must not compute what
 * the NCCL backend refuses, so every backend refuses it here, with the processor's id.
 */
final class Fp8Average {
  private Fp8Average() {}

  /**
   * Throws if {@code op} is AVG on an fp8 {@code type}: a plan's declaration with the subject's exception
   * ({@link dev.commplan.runtime.PlanBuildException}), a direct call with an {@link IllegalArgumentException}.
   */
  static void check(CallSubject s, Collective c, Communicator comm, DataType type, ReduceOp op) {
    if (c.hasOp() && op == ReduceOp.AVG && type.isFloat8()) {
      String message = RuleId.FP8_AVERAGE.tag() + " " + s.where(c, comm) + ": AVG on " + type + " is not offered:"
          + " NCCL multiplies the sum by 1/ranks rounded to fp8 (for 3 ranks 0.34375 or 0.3125, not 1/3), and"
          + " fails on one rank. Fix: reduce with SUM and scale the result, or use a wider type (F16, BF16 or F32)";
      throw s instanceof Direct ? new IllegalArgumentException(message) : s.reject(RuleId.FP8_AVERAGE, message);
    }
  }
}
