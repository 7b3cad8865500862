package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;

/**
 * CommPlan's own rule on a reduction's {@code op} (Fp8Average): no AVG on the fp8 types. NCCL (2.24.3 to
 * 2.30.7) computes ncclAvg on ncclFloat8e4m3 and ncclFloat8e5m2 as a sum multiplied by 1/ranks rounded to
 * fp8, and fails on one rank; so no backend offers it, and the runtime refuses it too ({@code CallRules}).
 */
final class ReduceOpRules {
  private final PlanContext cx;

  ReduceOpRules(PlanContext cx) {
    this.cx = cx;
  }

  void checkOp(ParsedField f, ParsedCollective c) {
    if (!c.kind().hasOp() || !c.op().value().equals("AVG") || !f.isBuffer() || !f.bufferType().isFloat8()) {
      return;
    }
    String into = c.inPlace() ? "" : " and '" + cx.byName.find(c.into().value()).map(ParsedField::name)
        .orElse(c.into().value()) + "'";
    cx.report.add(Message.FP8_AVERAGE, f.element(), c.mirror(), c.op().source(), c.describe(), f.name(),
        "an " + f.bufferType().simpleName(), f.name(), into);
  }
}
