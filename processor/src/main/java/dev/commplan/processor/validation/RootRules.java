package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;

/**
 * Rules 9 and 16: a root of Broadcast, Reduce, Gather or Scatter is 0 or more, and below fixed ranks. Over
 * an axis (rule 21) the root is a coordinate along it, and the axis's size comes from the mesh: the plan
 * checks root < size when built.
 */
final class RootRules {
  private final PlanContext cx;

  RootRules(PlanContext cx) {
    this.cx = cx;
  }

  void checkRoot(ParsedField f, ParsedCollective c) {
    if (!c.kind().hasRoot()) {
      return;
    }
    int root = c.root().value();
    String size = c.over().value().isEmpty() ? "ranks" : c.axis();
    if (root < 0) {
      cx.report.add(Message.NEGATIVE_ROOT, f.element(), c.mirror(), c.root().source(), c.describe(), root, size);
    } else if (c.over().value().isEmpty() && cx.fixedRanks > 0 && root >= cx.fixedRanks) {
      cx.report.add(Message.ROOT_OUT_OF_RANGE, f.element(), c.mirror(), c.root().source(), c.describe(), root,
          cx.fixedRanks, cx.fixedRanks - 1, cx.fixedRanks);
    }
  }
}
