package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.parse.Attr;
import dev.commplan.processor.parse.ParsedPlan;
import dev.commplan.processor.shape.Monomial;
import java.util.HashMap;
import java.util.Map;
import javax.lang.model.element.AnnotationValue;

/** Rule 14: {@code @CommPlan(dims)} and {@code @CommPlan(ranks)}; records the dims and the fixed ranks. */
final class DimRules {
  private final PlanContext cx;

  DimRules(PlanContext cx) {
    this.cx = cx;
  }

  void checkRanks() {
    ParsedPlan plan = cx.plan;
    int ranks = plan.ranks().value();
    if (ranks < 0) {
      cx.report.add(Message.NEGATIVE_RANKS, plan.element(), plan.mirror(), plan.ranks().source(), ranks);
    }
    cx.fixedRanks = Math.max(ranks, 0);
  }

  /** Dims are compared as the compiler reads them: "n" and "n\u005Cu200B" are one name to javac. */
  void checkDims() {
    ParsedPlan plan = cx.plan;
    Map<String, String> written = new HashMap<>();
    for (Attr<String> dim : plan.dims()) {
      String d = dim.value();
      String name = Identifiers.canonical(d);
      if (name.equals(Monomial.RANKS)) {
        cx.report.add(Message.RESERVED_DIM, plan.element(), plan.mirror(), source(dim));
      } else if (!JavaNames.isIdentifier(d)) {
        cx.report.add(Message.INVALID_DIM, plan.element(), plan.mirror(), source(dim), Identifiers.visible(d),
            JavaNames.sanitize(d));
      } else if (!cx.dims.add(name)) {
        String first = written.get(name);
        if (first.equals(d)) {
          cx.report.add(Message.DUPLICATE_DIM, plan.element(), plan.mirror(), source(dim), Identifiers.visible(d),
              Identifiers.visible(d));
        } else {
          cx.report.add(Message.DUPLICATE_DIM_IGNORABLE, plan.element(), plan.mirror(), source(dim),
              Identifiers.visible(d), Identifiers.visible(first), Identifiers.ignorables(d + first),
              Identifiers.visible(d));
        }
      } else {
        written.put(name, d);
      }
    }
  }

  private AnnotationValue source(Attr<String> dim) {
    return dim.source() != null ? dim.source() : cx.plan.dimsSource();
  }
}
