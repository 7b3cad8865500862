package dev.commplan.processor.validation;

import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.parse.ParsedShape;
import dev.commplan.processor.shape.Monomial;
import dev.commplan.processor.shape.ShapeEntry;
import java.util.LinkedHashSet;
import java.util.Optional;
import java.util.Set;

/**
 * Rule 8: each {@code @Shape} entry parses and names only declared sizes ({@code ranks}, dims, and the
 * axes, rule 21); its constant fits a long.
 */
final class ShapeRules {
  private final PlanContext cx;

  ShapeRules(PlanContext cx) {
    this.cx = cx;
  }

  /** The field's count if its shape is valid; every problem with it is reported. */
  Optional<Monomial> checkShape(ParsedField f) {
    ParsedShape shape = f.shape();
    if (shape.entries().isEmpty()) {
      cx.report.add(Message.EMPTY_SHAPE, f.element(), shape.mirror(), shape.source(), f.name());
      return Optional.empty();
    }
    boolean ok = true;
    for (ParsedShape.Entry e : shape.entries()) {
      switch (e.parsed()) {
        case ShapeEntry.Invalid invalid -> {
          cx.report.add(Message.BAD_SHAPE, f.element(), shape.mirror(), e.source(), e.text(), f.name(),
              invalid.reason());
          ok = false;
        }
        case ShapeEntry.Valid valid -> {
          for (String symbol : new LinkedHashSet<>(valid.symbols())) {
            if (!known(symbol)) {
              unknown(f, shape, e, symbol);
              ok = false;
            }
          }
        }
      }
    }
    if (!ok) {
      return Optional.empty();
    }
    Monomial count = shape.count();
    if (!count.constantFitsInLong()) {
      cx.report.add(Message.COUNT_OVERFLOW, f.element(), shape.mirror(), shape.source(), shape.asWritten(), f.name(),
          count.constant());
      return Optional.empty();
    }
    return Optional.of(count);
  }

  /**
   * Whether {@code symbol} is a size of this plan: {@code ranks}, a dim, or an axis (rule 21), or an axis
   * whose declaration was rejected (reported there).
   */
  private boolean known(String symbol) {
    return symbol.equals(Monomial.RANKS) || cx.dims.contains(symbol) || cx.axes.contains(symbol)
        || cx.rejectedAxes.contains(symbol);
  }

  private void unknown(ParsedField f, ParsedShape shape, ParsedShape.Entry e, String symbol) {
    if (cx.plan.axes().isEmpty()) {
      String near = JavaNames.closest(symbol, cx.dims);
      cx.report.add(Message.UNKNOWN_DIM, f.element(), shape.mirror(), e.source(), e.text(), f.name(), symbol,
          cx.dims.isEmpty() ? "none" : PlanContext.quoted(cx.dims),
          near == null ? "" : " (did you mean \"" + near + "\"?)", symbol);
      return;
    }
    Set<String> sizes = new LinkedHashSet<>(cx.dims);
    sizes.addAll(cx.axes);
    String near = JavaNames.closest(symbol, sizes);
    cx.report.add(Message.UNKNOWN_DIM_OR_AXIS, f.element(), shape.mirror(), e.source(), e.text(), f.name(), symbol,
        cx.dims.isEmpty() ? "none" : PlanContext.quoted(cx.dims), cx.axes.isEmpty() ? "none" : PlanContext.quoted(cx.axes),
        near == null ? "" : " (did you mean \"" + near + "\"?)", symbol);
  }
}
