package dev.commplan.processor.validation;

import dev.commplan.model.Fp8AverageRule;
import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;

/**
 * CommPlan's own rule on a reduction's {@code op} ({@link Fp8AverageRule}, which says why): no AVG on the
 * fp8 types. The runtime refuses it too, with the same rule.
 */
final class ReduceOpRules {
  private final PlanContext cx;

  ReduceOpRules(PlanContext cx) {
    this.cx = cx;
  }

  void checkOp(ParsedField f, ParsedCollective c) {
    if (!f.isBuffer() || c.op() == null || !Fp8AverageRule.refuses(c.kind(), c.op().value(), f.bufferType())) {
      return;
    }
    String into = c.inPlace() ? "" : " and '" + cx.byName.find(c.into().value()).map(ParsedField::name)
        .orElse(c.into().value()) + "'";
    cx.report.add(Message.FP8_AVERAGE, f.element(), c.mirror(), c.op().source(), c.describe(), f.name(),
        "an " + f.bufferType().bufferSimpleName(), f.name(), into);
  }
}
