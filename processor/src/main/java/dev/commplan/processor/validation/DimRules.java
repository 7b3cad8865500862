package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.diag.ValidationReport;
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
    Map<String, String> written = new HashMap<>();
    for (Attr<String> dim : cx.plan.dims()) {
      String d = dim.value();
      String name = Identifiers.canonical(d);
      if (name.equals(Monomial.RANKS)) {
        report(Message.RESERVED_DIM, dim);
      } else if (!JavaNames.isIdentifier(d)) {
        report(Message.INVALID_DIM, dim, Identifiers.visible(d), JavaNames.sanitize(d));
      } else if (!cx.dims.add(name)) {
        String first = written.get(name);
        if (first.equals(d)) {
          report(Message.DUPLICATE_DIM, dim, Identifiers.visible(d), Identifiers.visible(d));
        } else {
          report(Message.DUPLICATE_DIM_IGNORABLE, dim, Identifiers.visible(d), Identifiers.visible(first),
              Identifiers.ignorables(d + first), Identifiers.visible(d));
        }
      } else {
        written.put(name, d);
      }
    }
  }

  /**
   * Reports on the entry {@code dim}, in {@code dims}: named so, since {@code axes} may hold an equal
   * entry ({@link ValidationReport.Builder#addOnEntry}).
   */
  private void report(Message message, Attr<String> dim, Object... args) {
    AnnotationValue entry = dim.source() != null ? dim.source() : cx.plan.dimsSource();
    cx.report.addOnEntry(message, cx.plan.element(), cx.plan.mirror(), entry, cx.plan.dimsSource(), args);
  }
}
