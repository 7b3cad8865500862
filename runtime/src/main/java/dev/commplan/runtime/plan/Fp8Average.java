package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.ElementType;
import dev.commplan.model.Fp8AverageRule;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.plan.RuleSubject.CallSubject;
import dev.commplan.runtime.plan.RuleSubject.Direct;

/**
 * {@link RuleId#FP8_AVERAGE}, one of {@link PlanRules}' rules: no AVG on the fp8 types, on any backend
 * ({@link Fp8AverageRule}, which the processor checks too, says why). Every backend refuses it here.
 */
final class Fp8Average {
  private Fp8Average() {}

  /**
   * Throws if {@code op} is AVG on an fp8 {@code type}: a plan's declaration with the subject's exception
   * ({@link dev.commplan.runtime.PlanBuildException}), a direct call with an {@link IllegalArgumentException}.
   */
  static void check(CallSubject s, Collective c, Communicator comm, DataType type, ReduceOp op) {
    if (Fp8AverageRule.refuses(c, op == null ? null : op.name(), ElementType.valueOf(type.name()))) {
      String message = RuleId.FP8_AVERAGE.tag() + " " + s.where(c, comm) + ": AVG on " + type + " is not offered:"
          + " NCCL multiplies the sum by 1/ranks rounded to fp8 (for 3 ranks 0.34375 or 0.3125, not 1/3), and"
          + " fails on one rank. Fix: reduce with SUM and scale the result, or use a wider type (F16, BF16 or F32)";
      throw s instanceof Direct ? new IllegalArgumentException(message) : s.reject(RuleId.FP8_AVERAGE, message);
    }
  }
}
