package dev.commplan.processor.validation;

import dev.commplan.processor.diag.ValidationReport;
import dev.commplan.processor.shape.ShapeText;
import dev.commplan.processor.parse.Annotations;
import dev.commplan.processor.parse.FieldIndex;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.parse.ParsedPlan;
import dev.commplan.processor.parse.ParsedShape;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;
import javax.lang.model.element.AnnotationMirror;

/**
 * What the rules of one plan's validation share: the plan, the report they add to, the fields by name,
 * and what earlier rules established for later ones (the declared dims, the fixed ranks, each valid
 * shape's count). Also the few ways every rule writes counts and shapes in its messages.
 */
final class PlanContext {
  final ParsedPlan plan;
  final ValidationReport.Builder report = ValidationReport.builder();
  final Map<String, ParsedField> fields = new LinkedHashMap<>();
  final FieldIndex byName;
  /** The declared dims, as the compiler reads them; filled by {@link DimRules}. */
  final Set<String> dims = new LinkedHashSet<>();
  /** The declared axes, as the compiler reads them; filled by {@link AxisRules}. */
  final Set<String> axes = new LinkedHashSet<>();
  /** Axis names whose declaration was rejected (reported), so that their uses are not reported again. */
  final Set<String> rejectedAxes = new HashSet<>();
  /** Each field's count, for fields whose shape is valid; filled by {@link ShapeRules}. */
  final Map<String, Monomial> counts = new HashMap<>();
  private final Comparator<String> order;
  /** {@code @CommPlan(ranks)}, 0 where it is any (or negative, which is reported); set by {@link DimRules}. */
  int fixedRanks;

  PlanContext(ParsedPlan plan) {
    this.plan = plan;
    this.byName = new FieldIndex(plan.fields());
    for (ParsedField f : plan.fields()) {
      fields.put(f.name(), f);
    }
    List<String> symbols = new ArrayList<>(plan.axisNames()); // group sizes first, as ranks is
    symbols.addAll(plan.dimNames());
    this.order = Monomial.symbolOrder(symbols);
  }

  /**
   * The size of the group a collective runs over, as the size and root rules read it where they say ranks
   * (rule 21).
   *
   * @param name how messages write it: {@code ranks}, or the axis's name
   * @param factor it as a factor of a count: {@code ranks}, N where the plan fixes the ranks, or the axis
   * @param axis the axis, or {@code ""} for the whole communicator
   * @param fixed its value where known at compile time (the plan's fixed ranks), else 0
   */
  record GroupSize(String name, Monomial factor, String axis, int fixed) {
    /** How messages say which group, after a required count: {@code " with @CommPlan(ranks = 4)"}, {@code " over axis \"tp\""}. */
    String suffix() {
      return !axis.isEmpty() ? " over axis \"" + axis + "\"" : fixed > 0 ? " with @CommPlan(ranks = " + fixed + ")" : "";
    }
  }

  /**
   * The size of the group {@code c} runs over: the whole communicator's, or its axis's; empty when its
   * {@code over} names no valid axis (reported by {@link AxisRules}), and rules that need the size skip it.
   */
  Optional<GroupSize> groupOf(ParsedCollective c) {
    String axis = c.axis();
    if (c.over().value().isEmpty()) {
      return Optional.of(new GroupSize(Monomial.RANKS, ranksFactor(), "", fixedRanks));
    }
    return axes.contains(axis) ? Optional.of(new GroupSize(axis, Monomial.symbol(axis), axis, 0)) : Optional.empty();
  }

  /** {@code ranks} as a factor: the symbol, or N where the plan fixes it. */
  Monomial ranksFactor() {
    return fixedRanks > 0 ? Monomial.constant(fixedRanks) : Monomial.symbol(Monomial.RANKS);
  }

  /** The count with {@code ranks} replaced by N where the plan fixes it. */
  Monomial effective(Monomial m) {
    return fixedRanks > 0 ? m.substitute(Monomial.RANKS, fixedRanks) : m;
  }

  /** A count as messages write it: {@code ranks*hidden}, symbols in the dims' order. */
  String format(Monomial m) {
    return m.format(order);
  }

  /** A count's factors as a {@code @Shape}: {@code {"ranks", "hidden"}}. */
  String braces(Monomial m) {
    return ShapeText.braces(m.factors(order));
  }

  /** The shape with {@code size} ({@code ranks} or an axis) in front: a buffer of that many slices of it. */
  static String withSize(String size, ParsedShape shape) {
    List<String> entries = new ArrayList<>();
    entries.add(size);
    entries.addAll(shape.texts());
    return ShapeText.braces(entries);
  }

  /** {@code ", or 'field' as @Shape(...)"} where the other side could change instead, else "". */
  String alternative(String field, Optional<Monomial> shape) {
    return shape.map(m -> ", or '" + field + "' as @Shape(" + braces(m) + ")").orElse("");
  }

  static String simpleName(AnnotationMirror m) {
    String q = Annotations.nameOf(m);
    return q.substring(q.lastIndexOf('.') + 1);
  }

  static String quoted(Set<String> names) {
    return names.stream().map(n -> "\"" + n + "\"").collect(Collectors.joining(", "));
  }

  static String quotedSingle(List<String> names) {
    return names.stream().map(n -> "'" + n + "'").collect(Collectors.joining(", "));
  }
}
