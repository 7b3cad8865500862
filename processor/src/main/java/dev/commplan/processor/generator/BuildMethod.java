package dev.commplan.processor.generator;

import static dev.commplan.processor.generator.GeneratedTypes.BUFFER_BINDING_EXCEPTION;
import static dev.commplan.processor.generator.GeneratedTypes.COMMUNICATOR;
import static dev.commplan.processor.generator.GeneratedTypes.MESH;
import static dev.commplan.processor.generator.GeneratedTypes.PLAN;
import static dev.commplan.processor.generator.GeneratedTypes.PLAN_BUILDER;
import static dev.commplan.processor.generator.GeneratedTypes.PLAN_BUILD_EXCEPTION;
import static dev.commplan.processor.generator.GeneratedTypes.javadocName;

import com.palantir.javapoet.CodeBlock;
import com.palantir.javapoet.MethodSpec;
import com.palantir.javapoet.TypeSpec;
import dev.commplan.processor.generator.Declaration.BufferDeclaration;
import dev.commplan.processor.generator.Declaration.CollectiveDeclaration;
import dev.commplan.processor.generator.Declaration.DimCheck;
import dev.commplan.processor.generator.DeclarationCode.Refs;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.PlanModel;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.lang.model.element.Modifier;

/**
 * The Builder's {@code build} method, and, for a plan too large for one method, the parts it calls: the
 * PlanBuilder, the switches, then the declarations of {@link Layout} (inline, with a local per dim and
 * buffer; or in parts, with the dims' values and the handles in arrays).
 */
final class BuildMethod {
  private final Generation g;
  private final DeclarationCode code;

  BuildMethod(Generation g) {
    this.g = g;
    this.code = new DeclarationCode(g);
  }

  MethodSpec build() {
    PlanModel plan = g.plan;
    Names locals = new Names(g.reserved);
    // A plan over axes is built on a mesh, and its communicator is the mesh's world.
    String source = locals.claim(plan.overMesh() ? "mesh" : "comm");
    String pb = locals.claim("b");
    MethodSpec.Builder m = MethodSpec.methodBuilder("build")
        .addJavadoc(plan.overMesh() ? meshJavadoc(source) : communicatorJavadoc(source, plan.bucketed()))
        .addModifiers(Modifier.PUBLIC)
        .addParameter(plan.overMesh() ? MESH : COMMUNICATOR, source)
        .returns(g.self);
    if (plan.overMesh()) {
      CodeBlock.Builder axes = CodeBlock.builder();
      for (String axis : plan.axes()) {
        axes.add(", $S", axis);
      }
      m.addStatement("$T $N = new $T($S, $N, $L$L)", PLAN_BUILDER, pb, PLAN_BUILDER, plan.planName(), source,
          plan.fixedRanks(), axes.build());
    } else {
      m.addStatement("$T $N = new $T($S, $N, $L)", PLAN_BUILDER, pb, PLAN_BUILDER, plan.planName(), source,
          plan.fixedRanks());
    }
    CodeBlock worldSize = plan.overMesh() ? CodeBlock.of("$N.world().size()", source) : CodeBlock.of("$N.size()", source);
    List<BufferSpec> buffers = g.buffers;
    List<String> axes = g.axesInCounts();
    Generation.BuilderFields f = g.fields;
    if (plan.bucketed()) {
      m.addStatement("$N.bucketBytes(this.$N)", pb, f.bucketBytes());
      m.beginControlFlow("if (this.$N != null)", f.commStream())
          .addStatement("$N.commStream(this.$N)", pb, f.commStream()).endControlFlow();
    }
    m.beginControlFlow("if (this.$N != null)", f.guard())
        .addStatement("$N.hostAccessGuard(this.$N)", pb, f.guard()).endControlFlow();
    m.beginControlFlow("if (this.$N != null)", f.fingerprint())
        .addStatement("$N.fingerprintCheck(this.$N)", pb, f.fingerprint()).endControlFlow();
    m.beginControlFlow("if (this.$N != null)", f.order())
        .addStatement("$N.orderCheck(this.$N)", pb, f.order()).endControlFlow();
    if (plan.checkFinite()) { // only where on: plans without it generate what they did before
      m.addStatement("$N.checkFinite(true)", pb);
    }
    boolean usesRanks = buffers.stream().anyMatch(b -> b.count().powers().containsKey(Monomial.RANKS));

    if (g.layout.inline()) {
      // A local per dim (then ranks) and per buffer handle.
      Map<String, String> symbol = new HashMap<>();
      for (PlanModel.Dim d : plan.dims()) {
        symbol.put(d.name(), locals.claim(d.name()));
      }
      if (usesRanks) {
        symbol.put(Monomial.RANKS, locals.claim(Monomial.RANKS));
      }
      for (String axis : axes) {
        symbol.put(axis, locals.claim(axis));
      }
      List<String> handle = new ArrayList<>();
      for (BufferSpec b : buffers) {
        handle.add(locals.claim(Identifiers.canonical(b.field())));
      }
      String built = locals.claim("plan");
      Refs refs = new Refs(pb, "this", symbol, handle);
      List<Declaration> all = g.layout.parts().getFirst();
      Set<String> used = new HashSet<>();
      for (BufferSpec b : buffers) {
        used.addAll(b.count().powers().keySet());
      }
      for (Declaration d : all) {
        if (d instanceof DimCheck c) {
          String dim = plan.dims().get(c.dim()).name();
          if (used.contains(dim)) {
            m.addStatement("long $N = $L", symbol.get(dim), code.dimCheck(c, refs));
          } else {
            m.addStatement("$L", code.dimCheck(c, refs)); // checked, though no shape uses it (a local would be unused)
          }
        }
      }
      if (usesRanks) {
        m.addStatement("long $N = $L", symbol.get(Monomial.RANKS), worldSize);
      }
      for (String axis : axes) {
        m.addStatement("long $N = $N.axisSize($S)", symbol.get(axis), pb, axis);
      }
      for (Declaration d : all) {
        switch (d) {
          case DimCheck c -> { }
          case BufferDeclaration b ->
              m.addStatement("int $N = $L", handle.get(b.buffer()), code.bufferDeclaration(b, refs));
          case CollectiveDeclaration c -> m.addStatement(code.collective(c.collective(), refs));
        }
      }
      m.addStatement("$T $N = $N.build()", PLAN, built, pb);
      CodeBlock handles = list(handle);
      if (plan.bucketed()) {
        List<String> sent = plan.fieldConstants().stream().map(b -> handle.get(g.index.get(b.field()))).toList();
        m.addStatement("return new $T($N, new int[] {$L}, new int[] {$L})", g.self, built, handles, list(sent));
      } else {
        m.addStatement("return new $T($N, new int[] {$L})", g.self, built, handles);
      }
      return m.build();
    }

    // In parts: the dims' values (then ranks, then the axes' sizes) and the buffers' handles in arrays.
    String dims = locals.claim("dims");
    String handles = locals.claim("handles");
    m.addStatement("long[] $N = new long[$L]", dims, plan.dims().size() + 1 + plan.axes().size());
    if (usesRanks) {
      m.addStatement("$N[$L] = $L", dims, plan.dims().size(), worldSize);
    }
    for (String axis : axes) {
      m.addStatement("$N[$L] = $N.axisSize($S)", dims, axisSlot(axis), pb, axis);
    }
    m.addStatement("int[] $N = new int[$L]", handles, buffers.size());
    if (plan.bucketed()) {
      String fieldHandles = locals.claim("fieldHandles");
      m.addStatement("int[] $N = new int[$L]", fieldHandles, plan.fieldConstants().size());
      for (int p = 0; p < g.layout.parts().size(); p++) {
        m.addStatement("$T.declare(this, $N, $N, $N, $N)", g.part(p), pb, dims, handles, fieldHandles);
      }
      m.addStatement("return new $T($N.build(), $N, $N)", g.self, pb, handles, fieldHandles);
      return m.build();
    }
    for (int p = 0; p < g.layout.parts().size(); p++) {
      m.addStatement("$T.declare(this, $N, $N, $N)", g.part(p), pb, dims, handles);
    }
    m.addStatement("return new $T($N.build(), $N)", g.self, pb, handles);
    return m.build();
  }

  /** The names as an array initializer's elements: {@code w, part, all}. */
  private static CodeBlock list(List<String> names) {
    CodeBlock.Builder out = CodeBlock.builder();
    for (int i = 0; i < names.size(); i++) {
      out.add(i == 0 ? "$N" : ",$W$N", names.get(i));
    }
    return out.build();
  }

  /** Part {@code p} of {@code count}: a private nested class with one method, which declares {@code part}. */
  TypeSpec part(int p, int count, List<Declaration> part) {
    PlanModel plan = g.plan;
    Map<String, String> symbol = new HashMap<>();
    for (int d = 0; d < plan.dims().size(); d++) {
      symbol.put(plan.dims().get(d).name(), "d[" + d + "]");
    }
    symbol.put(Monomial.RANKS, "d[" + plan.dims().size() + "]");
    for (String axis : plan.axes()) {
      symbol.put(axis, "d[" + axisSlot(axis) + "]");
    }
    List<String> handle = new ArrayList<>();
    for (int i = 0; i < g.buffers.size(); i++) {
      handle.add("h[" + i + "]");
    }
    Refs refs = new Refs("b", "s", symbol, handle);
    MethodSpec.Builder m = MethodSpec.methodBuilder("declare")
        .addModifiers(Modifier.STATIC)
        .addParameter(g.builder, "s")
        .addParameter(PLAN_BUILDER, "b")
        .addParameter(long[].class, "d")
        .addParameter(int[].class, "h");
    if (plan.bucketed()) {
      m.addParameter(int[].class, "f");
    }
    for (Declaration d : part) {
      switch (d) {
        case DimCheck c -> m.addStatement("d[$L] = $L", c.dim(), code.dimCheck(c, refs));
        case BufferDeclaration b when g.buffers.get(b.buffer()).hasFieldConstant() ->
            m.addStatement("h[$L] = f[$L] = $L", b.buffer(), g.fieldOrdinal.get(g.buffers.get(b.buffer()).field()),
                code.bufferDeclaration(b, refs));
        case BufferDeclaration b -> m.addStatement("h[$L] = $L", b.buffer(), code.bufferDeclaration(b, refs));
        case CollectiveDeclaration c -> m.addStatement(code.collective(c.collective(), refs));
      }
    }
    return TypeSpec.classBuilder(g.part(p))
        .addJavadoc("Part $L of $L of {@link $T#build} (in one method, a plan this large would pass the JVM's limit\n"
            + "of 64 KB per method): declares $L, in order, to {@code b}. {@code d} holds the dims' values,\n"
            + "then the ranks$L; {@code h} receives the buffers' handles$L.\n",
            p + 1, count, g.builder, describe(part), plan.overMesh() ? ", then the axes' sizes" : "",
            plan.bucketed() ? CodeBlock.of(", {@code f} those of the {@link $T} constants", g.fieldEnum) : "")
        .addModifiers(Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
        .addMethod(m.build())
        .build();
  }

  /** Where {@code axis}'s size is in the parts' {@code d}: after the dims and the ranks, in the axes' order. */
  private int axisSlot(String axis) {
    return g.plan.dims().size() + 1 + g.plan.axes().indexOf(axis);
  }

  private static CodeBlock communicatorJavadoc(String comm, boolean bucketed) {
    return CodeBlock.of("Builds the plan on {@code $N}: checks the dims and the bound buffers, allocates the\n"
        + "other buffers, and prepares the schedule once. Build one per rank, on its communicator.\n"
        + (bucketed ? BUCKETS_AT_BUILD : "")
        + "\n"
        + "@throws $L if a dim is unset or not greater than 0, the communicator's\n"
        + "    size differs from the plan's fixed ranks, a root is out of range, or a count is not\n"
        + "    divisible by the number of ranks\n"
        + "@throws $L if a bound buffer has the wrong count or type, is closed,\n"
        + "    or belongs to another communicator\n", comm, javadocName(PLAN_BUILD_EXCEPTION),
        javadocName(BUFFER_BINDING_EXCEPTION));
  }

  private CodeBlock meshJavadoc(String mesh) {
    return CodeBlock.of("Builds the plan on {@code $N}: the plan runs on {@code $N.world()}, and each collective\n"
        + "declared {@code over} an axis runs on that axis's group ({@code $N.axis(name)}), where its sizes,\n"
        + "root and peers are along the axis. Checks the dims and the bound buffers, allocates the other\n"
        + "buffers, and prepares the schedule once. Build one per rank, on its mesh; every rank's mesh must\n"
        + "have the axes $L (it may have more).\n"
        + (g.plan.bucketed() ? BUCKETS_AT_BUILD : "")
        + "\n"
        + "@throws $L if the mesh lacks one of those axes, a dim is unset or not\n"
        + "    greater than 0, the world's size differs from the plan's fixed ranks, a root is out of\n"
        + "    range of its group, or a count is not divisible by its group's size\n"
        + "@throws $L if a bound buffer has the wrong count or type, is closed,\n"
        + "    or belongs to another communicator\n", mesh, mesh, mesh,
        String.join(", ", g.plan.axes().stream().map(a -> "{@code " + a + "}").toList()),
        javadocName(PLAN_BUILD_EXCEPTION), javadocName(BUFFER_BINDING_EXCEPTION));
  }

  /** What build does for a bucketed plan, in its Javadoc. */
  private static final String BUCKETS_AT_BUILD =
      "Cuts the collectives into buckets of at most {@link #bucketBytes} bytes, and makes the plan's\n"
      + "communication stream with {@code newStream()} unless {@link #commStream} gave one.\n";

  private static String describe(List<Declaration> part) {
    List<String> what = new ArrayList<>();
    long dims = part.stream().filter(d -> d instanceof DimCheck).count();
    List<Integer> bufs = part.stream().filter(d -> d instanceof BufferDeclaration)
        .map(d -> ((BufferDeclaration) d).buffer()).toList();
    long collectives = part.stream().filter(d -> d instanceof CollectiveDeclaration).count();
    if (dims > 0) {
      what.add(dims == 1 ? "1 dim" : dims + " dims");
    }
    if (!bufs.isEmpty()) {
      what.add(bufs.size() == 1 ? "buffer " + bufs.getFirst() : "buffers " + bufs.getFirst() + " to " + bufs.getLast());
    }
    if (collectives > 0) {
      what.add(collectives == 1 ? "1 collective" : collectives + " collectives");
    }
    return what.size() < 2 ? String.join("", what)
        : String.join(", ", what.subList(0, what.size() - 1)) + " and " + what.getLast();
  }
}
