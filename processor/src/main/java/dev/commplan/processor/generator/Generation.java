package dev.commplan.processor.generator;

import com.palantir.javapoet.ClassName;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.PlanModel;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * What the pieces of one plan's generation share: the model, the generated class and its Builder, the
 * buffers by field, the names no variable may take, the layout of the declarations, and the Builder's
 * field names.
 */
final class Generation {
  final PlanModel plan;
  final ClassName self;
  final ClassName builder;
  final List<BufferSpec> buffers;
  /** Each buffer's index in {@link #buffers}, by field name. */
  final Map<String, Integer> index = new HashMap<>();
  /** {@link GeneratedTypes#RESERVED}, the generated class's name and its nested classes'. */
  final Set<String> reserved;
  final Layout layout;
  final BuilderFields fields;
  /** A bucketed plan's nested {@code enum Field}; null for a plan without buckets. */
  final ClassName fieldEnum;
  /** Each field constant's ordinal in {@link #fieldEnum}, by field name (the buffers with one only). */
  final Map<String, Integer> fieldOrdinal = new HashMap<>();

  /**
   * The Builder's fields: per dim its value and whether it was set; the bound buffers; the runtime's
   * per-plan switches (null leaves PlanBuilder's default, its system property); a bucketed plan's bucket
   * size and communication stream (null names for a plan without buckets).
   */
  record BuilderFields(
      Map<String, String> dimValue, Map<String, String> dimSet, String bound, String guard, String fingerprint,
      String order, String bucketBytes, String commStream) {}

  Generation(PlanModel plan, PlanGenerator.Limits limits) {
    this.plan = plan;
    this.self = ClassName.get(plan.packageName(), plan.className());
    this.builder = self.nestedClass("Builder");
    this.reserved = new HashSet<>(GeneratedTypes.RESERVED);
    reserved.add(self.simpleName());
    reserved.add(builder.simpleName());
    this.buffers = plan.buffers();
    for (int i = 0; i < buffers.size(); i++) {
      index.put(buffers.get(i).field(), i);
    }
    this.fieldEnum = plan.bucketed() ? self.nestedClass("Field") : null;
    List<BufferSpec> constants = plan.fieldConstants();
    for (int i = 0; i < constants.size(); i++) {
      fieldOrdinal.put(constants.get(i).field(), i);
    }
    this.layout = Layout.of(plan, limits);
    if (!layout.inline()) {
      // build() names the parts in expressions (Part0.declare(...)): no variable may obscure them
      for (int p = 0; p < layout.parts().size(); p++) {
        reserved.add(part(p).simpleName());
      }
    }
    this.fields = builderFields();
  }

  private BuilderFields builderFields() {
    Names names = new Names(reserved);
    Map<String, String> dimValue = new HashMap<>();
    Map<String, String> dimSet = new HashMap<>();
    for (PlanModel.Dim d : plan.dims()) {
      dimValue.put(d.name(), names.claim(d.name()));
    }
    for (PlanModel.Dim d : plan.dims()) {
      dimSet.put(d.name(), names.claim(d.name() + "Set"));
    }
    String bound = names.claim("bound");
    String guard = names.claim("hostAccessGuard");
    String fingerprint = names.claim("fingerprintCheck");
    String order = names.claim("orderCheck");
    // claimed last, so that the other fields keep the names they have in a plan without buckets
    String bucketBytes = plan.bucketed() ? names.claim("bucketBytes") : null;
    String commStream = plan.bucketed() ? names.claim("commStream") : null;
    return new BuilderFields(dimValue, dimSet, bound, guard, fingerprint, order, bucketBytes, commStream);
  }

  /** Part {@code p}'s class: {@code Part<p>}, with {@code _} appended while the plan has that name. */
  ClassName part(int p) {
    String prefix = "Part";
    while (self.simpleName().matches(Pattern.quote(prefix) + "\\d+")) {
      prefix += "_";
    }
    return self.nestedClass(prefix + p);
  }

  /** Symbols by the axes' then the dims' order, {@code ranks} first (group sizes first, as the processor writes them). */
  Comparator<String> symbolOrder() {
    List<String> symbols = new ArrayList<>(plan.axes());
    plan.dims().forEach(d -> symbols.add(d.name()));
    return Monomial.symbolOrder(symbols);
  }

  /** The axes some buffer's count uses, in declaration order: each needs its size in build. */
  List<String> axesInCounts() {
    Set<String> used = new HashSet<>();
    for (BufferSpec b : buffers) {
      used.addAll(b.count().powers().keySet());
    }
    return plan.axes().stream().filter(used::contains).toList();
  }

  /** The count as written in messages: {@code 4*hidden}. */
  String format(Monomial count) {
    return count.format(symbolOrder());
  }
}
