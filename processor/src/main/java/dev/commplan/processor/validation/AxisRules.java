package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.diag.ValidationReport;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.parse.Attr;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.shape.Monomial;
import java.util.HashMap;
import java.util.Map;
import javax.lang.model.element.AnnotationValue;

/**
 * Rule 20: {@code @CommPlan(axes)} names Java identifiers, each once, none reserved ({@code rank},
 * {@code ranks}) or also a dim; and an annotation's {@code over} names one of them, in a plan that has
 * axes. Records the axes for the rules that read their sizes (21) and pair per axis (22).
 */
final class AxisRules {
  /** The names an axis cannot have: {@code ranks} is the whole communicator's size, {@code rank} this rank in a peer. */
  private static final String RANK = "rank";

  private final PlanContext cx;

  AxisRules(PlanContext cx) {
    this.cx = cx;
  }

  /** Axes are compared as the compiler reads them, as dims are ({@link DimRules#checkDims}). */
  void checkAxes() {
    Map<String, String> written = new HashMap<>();
    for (Attr<String> axis : cx.plan.axes()) {
      String a = axis.value();
      String name = Identifiers.canonical(a);
      if (reservedBecause(name) != null) {
        report(Message.RESERVED_AXIS, axis, Identifiers.visible(a), reservedBecause(name), name + "Axis");
        cx.rejectedAxes.add(name);
      } else if (!JavaNames.isIdentifier(a)) {
        report(Message.INVALID_AXIS, axis, Identifiers.visible(a), JavaNames.sanitize(a, "axis"));
        cx.rejectedAxes.add(name);
      } else if (cx.dims.contains(name)) {
        report(Message.AXIS_IS_DIM, axis, Identifiers.visible(a), name + "Axis");
        cx.rejectedAxes.add(name);
      } else if (!cx.axes.add(name)) {
        String first = written.get(name);
        if (first.equals(a)) {
          report(Message.DUPLICATE_AXIS, axis, Identifiers.visible(a), Identifiers.visible(a));
        } else {
          report(Message.DUPLICATE_AXIS_IGNORABLE, axis, Identifiers.visible(a), Identifiers.visible(first),
              Identifiers.ignorables(a + first), Identifiers.visible(a));
        }
      } else {
        written.put(name, a);
      }
    }
  }

  /**
   * Reports on the entry {@code axis}, in {@code axes}: named so, since {@code dims} may hold an equal
   * entry ({@link ValidationReport.Builder#addOnEntry}).
   */
  private void report(Message message, Attr<String> axis, Object... args) {
    AnnotationValue entry = axis.source() != null ? axis.source() : cx.plan.axesSource();
    cx.report.addOnEntry(message, cx.plan.element(), cx.plan.mirror(), entry, cx.plan.axesSource(), args);
  }

  /** Why no axis may have this name (as the compiler reads it), or null where one may. */
  private static String reservedBecause(String name) {
    return switch (name) {
      case Monomial.RANKS -> "ranks always means the whole communicator's size";
      case RANK -> "rank is this rank's coordinate in a peer expression";
      default -> null;
    };
  }

  /**
   * {@code over} is empty or a declared axis. An {@code over} naming an axis whose declaration was
   * rejected is left to that error.
   */
  void checkOver(ParsedField f, ParsedCollective c) {
    if (c.over().value().isEmpty()) {
      return;
    }
    String over = c.axis();
    if (cx.axes.contains(over) || cx.rejectedAxes.contains(over)) {
      return;
    }
    String shown = Identifiers.visible(c.over().value());
    if (reservedBecause(over) != null) { // adding it to axes would fail too: the fix is the whole communicator
      String declared = cx.axes.isEmpty() ? "" : ", or use a declared axis (" + PlanContext.quoted(cx.axes) + ")";
      cx.report.add(Message.OVER_RESERVED, f.element(), c.mirror(), c.over().source(), c.describe(), shown, shown,
          reservedBecause(over), declared);
      return;
    }
    if (cx.plan.axes().isEmpty()) {
      cx.report.add(Message.OVER_WITHOUT_AXES, f.element(), c.mirror(), c.over().source(), c.describe(), shown,
          JavaNames.isIdentifier(c.over().value()) ? over : JavaNames.sanitize(c.over().value(), "axis"));
      return;
    }
    String near = JavaNames.closest(over, cx.axes);
    cx.report.add(Message.UNKNOWN_AXIS, f.element(), c.mirror(), c.over().source(), c.describe(), shown,
        cx.axes.isEmpty() ? "none valid" : PlanContext.quoted(cx.axes),
        near == null ? "" : " (did you mean \"" + near + "\"?)", shown);
  }
}
