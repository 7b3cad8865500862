package dev.commplan.processor.validation;

import dev.commplan.processor.diag.ValidationReport;
import dev.commplan.processor.model.ShapeText;
import dev.commplan.processor.parse.Annotations;
import dev.commplan.processor.parse.FieldIndex;
import dev.commplan.processor.parse.ParsedField;
import dev.commplan.processor.parse.ParsedPlan;
import dev.commplan.processor.parse.ParsedShape;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
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
    this.order = Monomial.symbolOrder(plan.dimNames());
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

  /** The shape with {@code ranks} in front: what a buffer of ranks slices of it is declared as. */
  static String withRanks(ParsedShape shape) {
    List<String> entries = new ArrayList<>();
    entries.add(Monomial.RANKS);
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
