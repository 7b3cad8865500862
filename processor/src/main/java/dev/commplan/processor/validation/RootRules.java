package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;

/** Rules 9 and 16: a root of Broadcast, Reduce, Gather or Scatter is 0 or more, and below fixed ranks. */
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
    if (root < 0) {
      cx.report.add(Message.NEGATIVE_ROOT, f.element(), c.mirror(), c.root().source(), c.describe(), root);
    } else if (cx.fixedRanks > 0 && root >= cx.fixedRanks) {
      cx.report.add(Message.ROOT_OUT_OF_RANGE, f.element(), c.mirror(), c.root().source(), c.describe(), root,
          cx.fixedRanks, cx.fixedRanks - 1, cx.fixedRanks);
    }
  }
}
