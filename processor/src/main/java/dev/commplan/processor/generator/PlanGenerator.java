package dev.commplan.processor.generator;

import com.palantir.javapoet.AnnotationSpec;
import com.palantir.javapoet.ArrayTypeName;
import com.palantir.javapoet.ClassName;
import com.palantir.javapoet.CodeBlock;
import com.palantir.javapoet.FieldSpec;
import com.palantir.javapoet.JavaFile;
import com.palantir.javapoet.MethodSpec;
import com.palantir.javapoet.ParameterSpec;
import com.palantir.javapoet.TypeSpec;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.BufferType;
import dev.commplan.model.Collective;
import dev.commplan.processor.model.CollectiveSpec;
import dev.commplan.processor.model.PlanModel;
import dev.commplan.processor.shape.Monomial;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import javax.lang.model.element.Modifier;

/**
 * {@link PlanModel} to the generated plan class (docs/architecture.md): a thin typed facade over the
 * runtime's {@code PlanBuilder} and {@code Plan}. Sees only the model, never an {@code Element}; the caller
 * adds the originating element.
 *
 * <p><b>Size.</b> The generated source grows linearly with the plan: per buffer field, one accessor, one
 * bind method and one declaration in {@code build}; per dim, two builder fields, a setter and a check; per
 * collective, one call. No method grows with the plan except {@code build}, whose declarations are the
 * one thing a method must hold: the JVM allows 64 KB of bytecode per method and a class's constant pool
 * 65,535 entries. A plan whose declarations fit in {@link Limits#methodBytes} (by a conservative
 * estimate) declares them in {@code build}, with a local per dim and per buffer, which reads best; a larger
 * one declares them in parts, private nested classes {@code Part0}, {@code Part1}, ... of at most that
 * size each (each class has its own constant pool), which keep the dims' values and the buffers' handles
 * in arrays. The plan class keeps its buffers in an array, and the builder its bound buffers, so that
 * neither a constructor nor a field initializer grows with the plan either.
 */
public final class PlanGenerator {
  /** The processor's name in {@code @Generated}. */
  public static final String PROCESSOR = "dev.commplan.processor.CommPlanProcessor";

  /**
   * How large the generator lets a method grow.
   *
   * @param methodBytes the most bytecode one method may take, by the generator's estimate, an upper bound
   *     (the JVM's limit is 65,535 bytes; the estimate is about 1.7 times the real size)
   */
  public record Limits(int methodBytes) {
    /** Half the JVM's limit: room for the estimate to be off by a factor of two. */
    public static final Limits DEFAULT = new Limits(32_000);
  }

  private static final String RUNTIME = "dev.commplan.runtime";
  private static final String RUNTIME_PLAN = "dev.commplan.runtime.plan";
  private static final ClassName PLAN = ClassName.get(RUNTIME_PLAN, "Plan");
  private static final ClassName PLAN_BUILDER = ClassName.get(RUNTIME_PLAN, "PlanBuilder");
  private static final ClassName SCHEDULE = ClassName.get(RUNTIME_PLAN, "Schedule");
  private static final ClassName COMMUNICATOR = ClassName.get(RUNTIME, "Communicator");
  private static final ClassName STREAM = ClassName.get(RUNTIME, "Stream");
  private static final ClassName CAPTURED_PLAN = ClassName.get(RUNTIME, "CapturedPlan");
  private static final ClassName DATA_TYPE = ClassName.get(RUNTIME, "DataType");
  private static final ClassName BUFFER = ClassName.get(RUNTIME, "Buffer");
  // Named in Javadoc only, so written out in full there (see javadocName): an import that only Javadoc
  // uses is an unused import to ecj, which does not read Javadoc unless told to.
  private static final ClassName PLAN_BUILD_EXCEPTION = ClassName.get(RUNTIME, "PlanBuildException");
  private static final ClassName BUFFER_BINDING_EXCEPTION = ClassName.get(RUNTIME, "BufferBindingException");
  private static final ClassName BUFFER_IN_FLIGHT_EXCEPTION = ClassName.get(RUNTIME, "BufferInFlightException");
  private static final ClassName REDUCE_OP = ClassName.get("dev.commplan.annotations", "ReduceOp");
  private static final ClassName COLLECTIVE = ClassName.get("dev.commplan.model", "Collective");
  private static final ClassName GENERATED = ClassName.get("javax.annotation.processing", "Generated");
  private static final ClassName OBJECTS = ClassName.get("java.util", "Objects");

  /**
   * Every type the generated code names, in code or in Javadoc (and the buffer types, added in reserved()).
   * Add a type here when the generator starts to use it: {@link #RESERVED} comes from this list.
   */
  private static final List<ClassName> TYPES = List.of(
      PLAN, PLAN_BUILDER, SCHEDULE, COMMUNICATOR, STREAM, DATA_TYPE, BUFFER, PLAN_BUILD_EXCEPTION,
      BUFFER_BINDING_EXCEPTION, BUFFER_IN_FLIGHT_EXCEPTION, REDUCE_OP, COLLECTIVE, GENERATED, OBJECTS,
      ClassName.get(String.class), ClassName.get(Boolean.class), ClassName.get(Override.class),
      ClassName.get(AutoCloseable.class));

  /**
   * Names no field, parameter or local of the generated code may have, since it would obscure a type the
   * code names in an expression ({@code DataType.F32}, {@code Objects.requireNonNull(...)}): each type's
   * simple name, and the first part of its package. The latter matters when the generated class has the
   * name of a type it uses ({@code @CommPlan(name = "DataType")}): that type is then written in full,
   * {@code dev.commplan.runtime.DataType.F32}, and a variable {@code dev} would make {@code dev.commplan}
   * a field access on it. The generated class's own name and its nested classes' (Builder, the parts)
   * are added per plan.
   */
  private static final Set<String> RESERVED = reserved();

  private static Set<String> reserved() {
    Set<String> names = new HashSet<>();
    List<ClassName> all = new ArrayList<>(TYPES);
    for (BufferType t : BufferType.values()) {
      all.add(ClassName.get(RUNTIME, t.simpleName()));
    }
    for (ClassName type : all) {
      names.add(type.simpleName());
      String pkg = type.packageName();
      names.add(pkg.contains(".") ? pkg.substring(0, pkg.indexOf('.')) : pkg);
    }
    return Set.copyOf(names);
  }

  private PlanGenerator() {}

  /** The generated source file of {@code plan}. */
  public static JavaFile generate(PlanModel plan) {
    return generate(plan, Limits.DEFAULT);
  }

  /** The generated source file of {@code plan}, its methods kept within {@code limits}. */
  public static JavaFile generate(PlanModel plan, Limits limits) {
    return new Run(plan, limits).generate();
  }

  private static final class Run {
    private final PlanModel plan;
    private final Limits limits;
    private final ClassName self;
    private final ClassName builder;
    private final List<BufferSpec> buffers;
    private final Map<String, Integer> index = new HashMap<>();
    private final Set<String> reserved;
    private final Layout layout;
    /** The Builder's fields: per dim its value and whether it was set; the bound buffers; the switches. */
    private final Map<String, String> dimValue = new HashMap<>();
    private final Map<String, String> dimSet = new HashMap<>();
    private String bound;
    private String guard;
    private String fingerprint;
    private String order;

    Run(PlanModel plan, Limits limits) {
      this.plan = plan;
      this.limits = limits;
      this.self = ClassName.get(plan.packageName(), plan.className());
      this.builder = self.nestedClass("Builder");
      this.reserved = new HashSet<>(RESERVED);
      reserved.add(self.simpleName());
      reserved.add(builder.simpleName());
      this.buffers = plan.buffers();
      for (int i = 0; i < buffers.size(); i++) {
        index.put(buffers.get(i).field(), i);
      }
      this.layout = layout();
      if (!layout.inline()) {
        // build() names the parts in expressions (Part0.declare(...)): no variable may obscure them
        for (int p = 0; p < layout.parts().size(); p++) {
          reserved.add(part(p).simpleName());
        }
      }
    }

    JavaFile generate() {
      TypeSpec.Builder type = TypeSpec.classBuilder(self)
          .addJavadoc(classJavadoc())
          .addAnnotation(AnnotationSpec.builder(GENERATED).addMember("value", "$S", PROCESSOR).build())
          .addModifiers(Modifier.PUBLIC, Modifier.FINAL)
          .addSuperinterface(AutoCloseable.class);

      // The Plan, and its buffers by field (declaration order), each accessor casting its own. The
      // constructor takes the handles as one array: it has at most 255 parameter slots, and it does not
      // grow with the plan.
      Names names = new Names(reserved);
      String planField = names.claim("plan");
      String buffersField = names.claim("buffers");
      String handles = names.claim("handles");
      String i = names.claim("i");
      type.addField(FieldSpec.builder(PLAN, planField, Modifier.PRIVATE, Modifier.FINAL).build());
      MethodSpec.Builder ctor = MethodSpec.constructorBuilder()
          .addModifiers(Modifier.PRIVATE)
          .addParameter(PLAN, planField)
          .addParameter(int[].class, handles)
          .addStatement("this.$N = $N", planField, planField);
      if (!buffers.isEmpty()) { // (a field no accessor reads would be an ecj warning)
        type.addField(FieldSpec.builder(ArrayTypeName.of(BUFFER), buffersField, Modifier.PRIVATE, Modifier.FINAL).build());
        ctor.addStatement("this.$N = new $T[$N.length]", buffersField, BUFFER, handles)
            .beginControlFlow("for (int $N = 0; $N < $N.length; $N++)", i, i, handles, i)
            .addStatement("this.$N[$N] = $N.buffer($N[$N])", buffersField, i, planField, handles, i)
            .endControlFlow();
      }
      type.addMethod(ctor.build());

      type.addMethod(MethodSpec.methodBuilder("builder")
          .addJavadoc("Returns a new builder: set every dim, optionally bind buffers you own, then call\n"
              + "{@link $T#build($T)}.\n", builder, COMMUNICATOR)
          .addModifiers(Modifier.PUBLIC, Modifier.STATIC)
          .returns(builder)
          .addStatement("return new $T()", builder)
          .build());

      for (BufferSpec b : buffers) {
        type.addMethod(MethodSpec.methodBuilder(b.accessor())
            .addJavadoc("Returns the buffer of field {@code $L}: $L, {@code @Shape($L)},\n"
                + "$L elements. The plan allocated it unless it was bound with {@link $T#$L}.\n",
                b.field(), b.type().dataType(), b.shapeAsWritten(), format(b.count()), builder, b.bindMethod())
            .addModifiers(Modifier.PUBLIC)
            .returns(bufferClass(b))
            .addStatement("return ($T) $N[$L]", bufferClass(b), buffersField, index.get(b.field()))
            .build());
      }

      type.addMethod(MethodSpec.methodBuilder("execute")
          .addJavadoc("Enqueues the whole plan on {@code stream}, step by step, and returns without waiting, as\n"
              + "NCCL does: call {@code stream.synchronize()} before reading the results.\n")
          .addModifiers(Modifier.PUBLIC)
          .addParameter(STREAM, "stream")
          .addStatement("$N.execute(stream)", planField)
          .build());
      type.addMethod(MethodSpec.methodBuilder("executeStep")
          .addJavadoc("Enqueues only step {@code step} (the annotations' {@code step} value), inside one group, and\n"
              + "returns without waiting: for host work between steps. Every rank must issue the same steps in\n"
              + "the same order.\n"
              + "\n"
              + "@throws IllegalArgumentException if the plan has no such step\n")
          .addModifiers(Modifier.PUBLIC)
          .addParameter(int.class, "step")
          .addParameter(STREAM, "stream")
          .addStatement("$N.executeStep(step, stream)", planField)
          .build());
      type.addMethod(MethodSpec.methodBuilder("capture")
          .addJavadoc("Records the whole plan once for {@code stream}, to be launched again and again: on the NCCL\n"
              + "backend one CUDA graph, whose {@code launch()} costs one graph launch; elsewhere a\n"
              + "{@code launch()} that executes the plan. Every rank captures where the others do. Closing this\n"
              + "plan closes its captured plans.\n")
          .addModifiers(Modifier.PUBLIC)
          .addParameter(STREAM, "stream")
          .returns(CAPTURED_PLAN)
          .addStatement("return $N.capture(stream)", planField)
          .build());
      type.addMethod(MethodSpec.methodBuilder("schedule")
          .addJavadoc("Returns what {@link #execute} issues: the steps and their NCCL calls.\n")
          .addModifiers(Modifier.PUBLIC)
          .returns(SCHEDULE)
          .addStatement("return $N.schedule()", planField)
          .build());
      type.addMethod(MethodSpec.methodBuilder("describe")
          .addJavadoc("Returns the schedule as text, for people.\n")
          .addModifiers(Modifier.PUBLIC)
          .returns(String.class)
          .addStatement("return $N.describe()", planField)
          .build());
      type.addMethod(MethodSpec.methodBuilder("communicator")
          .addJavadoc("Returns the communicator this plan was built for.\n")
          .addModifiers(Modifier.PUBLIC)
          .returns(COMMUNICATOR)
          .addStatement("return $N.communicator()", planField)
          .build());
      type.addMethod(MethodSpec.methodBuilder("close")
          .addJavadoc("Frees the buffers the plan allocated (bound buffers stay yours); idempotent.\n")
          .addAnnotation(Override.class)
          .addModifiers(Modifier.PUBLIC)
          .addStatement("$N.close()", planField)
          .build());

      type.addType(builderType(layout));
      if (!layout.inline()) {
        for (int p = 0; p < layout.parts().size(); p++) {
          type.addType(partType(p, layout.parts().size(), layout.parts().get(p)));
        }
      }
      return JavaFile.builder(plan.packageName(), type.build()).indent("  ").build();
    }

    private TypeSpec builderType(Layout layout) {
      TypeSpec.Builder t = TypeSpec.classBuilder(builder)
          .addJavadoc("Collects the dims and bound buffers of a {@link $T}; {@link #build} checks and builds it.\n", self)
          .addModifiers(Modifier.PUBLIC, Modifier.STATIC, Modifier.FINAL);

      // A value and a "set" flag per dim; the bound buffers by field; the runtime's per-plan switches
      // (null leaves PlanBuilder's default, its system property).
      Names fields = new Names(reserved);
      for (PlanModel.Dim d : plan.dims()) {
        dimValue.put(d.name(), fields.claim(d.name()));
      }
      for (PlanModel.Dim d : plan.dims()) {
        dimSet.put(d.name(), fields.claim(d.name() + "Set"));
      }
      bound = fields.claim("bound");
      guard = fields.claim("hostAccessGuard");
      fingerprint = fields.claim("fingerprintCheck");
      order = fields.claim("orderCheck");
      for (PlanModel.Dim d : plan.dims()) {
        t.addField(FieldSpec.builder(long.class, dimValue.get(d.name()), Modifier.PRIVATE).build());
        t.addField(FieldSpec.builder(boolean.class, dimSet.get(d.name()), Modifier.PRIVATE).build());
      }
      if (!buffers.isEmpty()) {
        t.addField(FieldSpec.builder(ArrayTypeName.of(BUFFER), bound, Modifier.PRIVATE, Modifier.FINAL)
            .initializer("new $T[$L]", BUFFER, buffers.size())
            .build());
      }
      t.addField(FieldSpec.builder(Boolean.class, guard, Modifier.PRIVATE).build());
      t.addField(FieldSpec.builder(Boolean.class, fingerprint, Modifier.PRIVATE).build());
      t.addField(FieldSpec.builder(Boolean.class, order, Modifier.PRIVATE).build());

      t.addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PRIVATE).build());

      for (PlanModel.Dim d : plan.dims()) {
        String param = new Names(reserved).claim(d.name());
        t.addMethod(MethodSpec.methodBuilder(d.setter())
            .addJavadoc("Sets the dim {@code $L}, which must be greater than 0 (checked by {@link #build}).\n", d.name())
            .addModifiers(Modifier.PUBLIC)
            .addParameter(long.class, param)
            .returns(builder)
            .addStatement("this.$N = $N", dimValue.get(d.name()), param)
            .addStatement("this.$N = true", dimSet.get(d.name()))
            .addStatement("return this")
            .build());
      }

      for (BufferSpec b : buffers) {
        String param = new Names(reserved).claim(Identifiers.canonical(b.field()));
        t.addMethod(MethodSpec.methodBuilder(b.bindMethod())
            .addJavadoc("Uses {@code $N}, a buffer you own, as {@code $L} instead of one the plan allocates: {@link #build}\n"
                + "checks that it is $L, {@code @Shape($L)} = $L elements, open and on the plan's communicator.\n",
                param, b.field(), b.type().dataType(), b.shapeAsWritten(), format(b.count()))
            .addModifiers(Modifier.PUBLIC)
            .addParameter(ParameterSpec.builder(bufferClass(b), param).build())
            .returns(builder)
            .addStatement("this.$N[$L] = $T.requireNonNull($N, $S)", bound, index.get(b.field()), OBJECTS, param,
                b.field())
            .addStatement("return this")
            .build());
      }

      t.addMethod(MethodSpec.methodBuilder("hostAccessGuard")
          .addJavadoc("Turns the read-before-sync guard on or off for this plan (default: on, unless\n"
              + "{@code -D$L=false}): with it on, reading a buffer the plan writes, or writing one it\n"
              + "uses, before {@code stream.synchronize()} throws {@link $L}.\n",
              "commplan.hostAccessGuard", javadocName(BUFFER_IN_FLIGHT_EXCEPTION))
          .addModifiers(Modifier.PUBLIC)
          .addParameter(boolean.class, "enabled")
          .returns(builder)
          .addStatement("this.$N = enabled", guard)
          .addStatement("return this")
          .build());
      t.addMethod(MethodSpec.methodBuilder("fingerprintCheck")
          .addJavadoc("Turns off (or on) the check, in {@link #build}, that every rank built the same plan\n"
              + "(default: on, unless {@code -D$L=false}). The check is a collective: with it on,\n"
              + "every rank must build; turn it off only where some do not.\n", "commplan.plan.fingerprint")
          .addModifiers(Modifier.PUBLIC)
          .addParameter(boolean.class, "check")
          .returns(builder)
          .addStatement("this.$N = check", fingerprint)
          .addStatement("return this")
          .build());

      t.addMethod(MethodSpec.methodBuilder("orderCheck")
          .addJavadoc("Turns on (or off) the check that every rank executes this plan's steps where the others do\n"
              + "(default: off, unless {@code -D$L=true}): each step then carries one more small\n"
              + "all-gather, and a synchronize after ranks executed plans in different orders throws\n"
              + "{@code PlanOrderException} on every rank. The local backend checks this anyway, for free.\n",
              "commplan.orderCheck")
          .addModifiers(Modifier.PUBLIC)
          .addParameter(boolean.class, "check")
          .returns(builder)
          .addStatement("this.$N = check", order)
          .addStatement("return this")
          .build());

      t.addMethod(buildMethod(layout));
      return t.build();
    }

    // ---- build(): the declarations -----------------------------------------------------------------

    /** What build declares to the PlanBuilder, in order: the dims' checks, the buffers, the collectives. */
    private sealed interface Declaration {}

    private record DimCheck(int dim) implements Declaration {}

    private record BufferDeclaration(int buffer) implements Declaration {}

    private record CollectiveDeclaration(CollectiveSpec collective) implements Declaration {}

    private List<Declaration> declarations() {
      List<Declaration> all = new ArrayList<>();
      for (int d = 0; d < plan.dims().size(); d++) {
        all.add(new DimCheck(d));
      }
      for (int b = 0; b < buffers.size(); b++) {
        all.add(new BufferDeclaration(b));
      }
      for (CollectiveSpec c : plan.collectives()) {
        all.add(new CollectiveDeclaration(c));
      }
      return all;
    }

    /**
     * Where the declarations go: {@code inline}, all in build (one part), when they, the rest of build
     * and its locals fit in {@link Limits#methodBytes}; otherwise in parts of at most that size each.
     */
    private record Layout(boolean inline, List<List<Declaration>> parts) {}

    private Layout layout() {
      List<Declaration> all = declarations();
      long inline = 400 + 8L * buffers.size(); // build's own statements, and the handles' array
      for (Declaration d : all) {
        inline += estimate(d) + 2; // a local's store may take a wide index
      }
      if (inline <= limits.methodBytes()) {
        return new Layout(true, List.of(all));
      }
      List<List<Declaration>> parts = new ArrayList<>();
      List<Declaration> part = new ArrayList<>();
      long size = 0;
      for (Declaration d : all) {
        int bytes = estimate(d);
        if (!part.isEmpty() && size + bytes > limits.methodBytes()) {
          parts.add(part);
          part = new ArrayList<>();
          size = 0;
        }
        part.add(d);
        size += bytes;
      }
      parts.add(part);
      return new Layout(false, parts);
    }

    /**
     * An upper bound of a declaration's bytecode in a part (array indexes up to 5 bytes, constants 3,
     * calls 3): a dim check 24; a buffer 44, plus for a count of several factors 16 and 12 per factor; a
     * collective 30, or 40 through {@code PlanBuilder.collective} (a Collective, an op or null, and a root).
     */
    private int estimate(Declaration d) {
      return switch (d) {
        case DimCheck c -> 24;
        case BufferDeclaration b -> {
          int factors = factors(buffers.get(b.buffer())).size();
          yield 44 + (factors > 1 ? 16 + 12 * factors : 0);
        }
        case CollectiveDeclaration c -> switch (c.collective().kind()) {
          case ALL_REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER, SEND, RECV -> 30;
          case REDUCE, GATHER, SCATTER, ALL_TO_ALL -> 40;
        };
      };
    }

    private MethodSpec buildMethod(Layout layout) {
      Names locals = new Names(reserved);
      String comm = locals.claim("comm");
      String pb = locals.claim("b");
      MethodSpec.Builder m = MethodSpec.methodBuilder("build")
          .addJavadoc("Builds the plan on {@code $N}: checks the dims and the bound buffers, allocates the\n"
              + "other buffers, and prepares the schedule once. Build one per rank, on its communicator.\n"
              + "\n"
              + "@throws $L if a dim is unset or not greater than 0, the communicator's\n"
              + "    size differs from the plan's fixed ranks, a root is out of range, or a count is not\n"
              + "    divisible by the number of ranks\n"
              + "@throws $L if a bound buffer has the wrong count or type, is closed,\n"
              + "    or belongs to another communicator\n", comm, javadocName(PLAN_BUILD_EXCEPTION),
              javadocName(BUFFER_BINDING_EXCEPTION))
          .addModifiers(Modifier.PUBLIC)
          .addParameter(COMMUNICATOR, comm)
          .returns(self);
      m.addStatement("$T $N = new $T($S, $N, $L)", PLAN_BUILDER, pb, PLAN_BUILDER, plan.planName(), comm, plan.fixedRanks());
      m.beginControlFlow("if (this.$N != null)", guard).addStatement("$N.hostAccessGuard(this.$N)", pb, guard).endControlFlow();
      m.beginControlFlow("if (this.$N != null)", fingerprint)
          .addStatement("$N.fingerprintCheck(this.$N)", pb, fingerprint).endControlFlow();
      m.beginControlFlow("if (this.$N != null)", order)
          .addStatement("$N.orderCheck(this.$N)", pb, order).endControlFlow();
      boolean usesRanks = buffers.stream().anyMatch(b -> b.count().powers().containsKey(Monomial.RANKS));

      if (layout.inline()) {
        // A local per dim (then ranks) and per buffer handle.
        Map<String, String> symbol = new HashMap<>();
        for (PlanModel.Dim d : plan.dims()) {
          symbol.put(d.name(), locals.claim(d.name()));
        }
        if (usesRanks) {
          symbol.put(Monomial.RANKS, locals.claim(Monomial.RANKS));
        }
        List<String> handle = new ArrayList<>();
        for (BufferSpec b : buffers) {
          handle.add(locals.claim(Identifiers.canonical(b.field())));
        }
        String built = locals.claim("plan");
        Refs refs = new Refs(pb, "this", symbol, handle);
        List<Declaration> all = layout.parts().getFirst();
        Set<String> used = new HashSet<>();
        for (BufferSpec b : buffers) {
          used.addAll(b.count().powers().keySet());
        }
        for (Declaration d : all) {
          if (d instanceof DimCheck c) {
            String dim = plan.dims().get(c.dim()).name();
            if (used.contains(dim)) {
              m.addStatement("long $N = $L", symbol.get(dim), dimCheck(c, refs));
            } else {
              m.addStatement("$L", dimCheck(c, refs)); // checked, though no shape uses it (a local would be unused)
            }
          }
        }
        if (usesRanks) {
          m.addStatement("long $N = $N.size()", symbol.get(Monomial.RANKS), comm);
        }
        for (Declaration d : all) {
          switch (d) {
            case DimCheck c -> { }
            case BufferDeclaration b -> m.addStatement("int $N = $L", handle.get(b.buffer()), bufferDeclaration(b, refs));
            case CollectiveDeclaration c -> m.addStatement(collective(c.collective(), refs));
          }
        }
        m.addStatement("$T $N = $N.build()", PLAN, built, pb);
        CodeBlock.Builder handles = CodeBlock.builder();
        for (int i = 0; i < handle.size(); i++) {
          handles.add(i == 0 ? "$N" : ",$W$N", handle.get(i));
        }
        m.addStatement("return new $T($N, new int[] {$L})", self, built, handles.build());
        return m.build();
      }

      // In parts: the dims' values (then ranks) and the buffers' handles in arrays.
      String dims = locals.claim("dims");
      String handles = locals.claim("handles");
      m.addStatement("long[] $N = new long[$L]", dims, plan.dims().size() + 1);
      if (usesRanks) {
        m.addStatement("$N[$L] = $N.size()", dims, plan.dims().size(), comm);
      }
      m.addStatement("int[] $N = new int[$L]", handles, buffers.size());
      for (int p = 0; p < layout.parts().size(); p++) {
        m.addStatement("$T.declare(this, $N, $N, $N)", part(p), pb, dims, handles);
      }
      m.addStatement("return new $T($N.build(), $N)", self, pb, handles);
      return m.build();
    }

    /** Part {@code p} of {@code count}: a private nested class with one method, which declares {@code part}. */
    private TypeSpec partType(int p, int count, List<Declaration> part) {
      Map<String, String> symbol = new HashMap<>();
      for (int d = 0; d < plan.dims().size(); d++) {
        symbol.put(plan.dims().get(d).name(), "d[" + d + "]");
      }
      symbol.put(Monomial.RANKS, "d[" + plan.dims().size() + "]");
      List<String> handle = new ArrayList<>();
      for (int i = 0; i < buffers.size(); i++) {
        handle.add("h[" + i + "]");
      }
      Refs refs = new Refs("b", "s", symbol, handle);
      MethodSpec.Builder m = MethodSpec.methodBuilder("declare")
          .addModifiers(Modifier.STATIC)
          .addParameter(builder, "s")
          .addParameter(PLAN_BUILDER, "b")
          .addParameter(long[].class, "d")
          .addParameter(int[].class, "h");
      for (Declaration d : part) {
        switch (d) {
          case DimCheck c -> m.addStatement("d[$L] = $L", c.dim(), dimCheck(c, refs));
          case BufferDeclaration b -> m.addStatement("h[$L] = $L", b.buffer(), bufferDeclaration(b, refs));
          case CollectiveDeclaration c -> m.addStatement(collective(c.collective(), refs));
        }
      }
      return TypeSpec.classBuilder(part(p))
          .addJavadoc("Part $L of $L of {@link $T#build} (in one method, a plan this large would pass the JVM's limit\n"
              + "of 64 KB per method): declares $L, in order, to {@code b}. {@code d} holds the dims' values,\n"
              + "then the ranks; {@code h} receives the buffers' handles.\n",
              p + 1, count, builder, describe(part))
          .addModifiers(Modifier.PRIVATE, Modifier.STATIC, Modifier.FINAL)
          .addMethod(m.build())
          .build();
    }

    /** Part {@code p}'s class: {@code Part<p>}, with {@code _} appended while the plan has that name. */
    private ClassName part(int p) {
      String prefix = "Part";
      while (self.simpleName().matches(java.util.regex.Pattern.quote(prefix) + "\\d+")) {
        prefix += "_";
      }
      return self.nestedClass(prefix + p);
    }

    private String describe(List<Declaration> part) {
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

    /**
     * How declarations name things: the PlanBuilder, the Builder ({@code this} in build, {@code s} in a
     * part), each symbol's value and each buffer's handle (locals in build, array elements in a part).
     */
    private record Refs(String planBuilder, String source, Map<String, String> symbol, List<String> handle) {}

    private CodeBlock dimCheck(DimCheck c, Refs in) {
      PlanModel.Dim d = plan.dims().get(c.dim());
      return CodeBlock.of("$T.requireDim($S, $L.$N, $L.$N)", PLAN_BUILDER, d.name(), in.source(), dimValue.get(d.name()),
          in.source(), dimSet.get(d.name()));
    }

    private CodeBlock bufferDeclaration(BufferDeclaration d, Refs in) {
      BufferSpec b = buffers.get(d.buffer());
      return CodeBlock.of("$N.buffer($S,$W$T.$L,$W$L,$W$S,$W$L.$N[$L])", in.planBuilder(), b.field(), DATA_TYPE,
          b.type().dataType(), count(b, in.symbol()), b.shapeAsWritten(), in.source(), bound, d.buffer());
    }

    /**
     * The PlanBuilder call that declares {@code c}: the four first collectives by their own methods
     * ({@code b.allReduce(0, w, w, ReduceOp.SUM)}), the others through {@code b.collective(step,
     * Collective.REDUCE, send, recv, op, root)} (op null and root -1 where they take none), and Send and
     * Recv with their peer in canonical form ({@code b.send(0, act, "rank + 1")}).
     */
    private CodeBlock collective(CollectiveSpec c, Refs in) {
      String send = in.handle().get(index.get(c.send()));
      String recv = in.handle().get(index.get(c.recv()));
      return switch (c.kind()) {
        case ALL_REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER -> {
          CodeBlock.Builder call = CodeBlock.builder()
              .add("$N.$L($L, $L, $L", in.planBuilder(), c.kind().methodName(), c.step(), send, recv);
          if (c.kind().hasOp()) {
            call.add(", $T.$L", REDUCE_OP, c.op());
          }
          if (c.kind().hasRoot()) {
            call.add(", $L", c.root());
          }
          yield call.add(")").build();
        }
        case REDUCE, GATHER, SCATTER, ALL_TO_ALL -> CodeBlock.of("$N.collective($L, $T.$L, $L, $L, $L, $L)",
            in.planBuilder(), c.step(), COLLECTIVE, c.kind().name(), send, recv,
            c.kind().hasOp() ? CodeBlock.of("$T.$L", REDUCE_OP, c.op()) : CodeBlock.of("null"),
            c.kind().hasRoot() ? c.root() : -1);
        case SEND, RECV -> CodeBlock.of("$N.$L($L, $L, $S)", in.planBuilder(), c.kind().methodName(), c.step(), send,
            c.peer().toString());
      };
    }

    /** The factors of a buffer's count, symbols by the dims' order then literals: {@code [4, hidden]}. */
    private List<String> factors(BufferSpec b) {
      return b.count().factors(symbolOrder());
    }

    /**
     * The count as a long expression of the symbols' values: {@code hidden} or {@code 4L} for one factor,
     * {@code PlanBuilder.count("w", "{\"4\", \"hidden\"}", 4L, hidden)} for more, which multiplies
     * exactly and, on overflow, fails with a PlanBuildException naming the field and its shape.
     */
    private CodeBlock count(BufferSpec b, Map<String, String> symbol) {
      List<CodeBlock> factors = new ArrayList<>();
      for (String factor : factors(b)) {
        factors.add(symbol.containsKey(factor) ? CodeBlock.of("$L", symbol.get(factor)) : CodeBlock.of("$LL", factor));
      }
      if (factors.size() == 1) {
        return factors.getFirst();
      }
      CodeBlock.Builder out = CodeBlock.builder().add("$T.count($S, $S", PLAN_BUILDER, b.field(), b.shapeAsWritten());
      for (CodeBlock factor : factors) {
        out.add(",$W$L", factor);
      }
      return out.add(")").build();
    }

    private Comparator<String> symbolOrder() {
      return Monomial.symbolOrder(plan.dims().stream().map(PlanModel.Dim::name).toList());
    }

    /** The count as written in messages: {@code 4*hidden}. */
    private String format(Monomial count) {
      return count.format(symbolOrder());
    }

    private CodeBlock classJavadoc() {
      CodeBlock.Builder doc = CodeBlock.builder()
          .add("The communication plan of {@code $L}, generated by the CommPlan processor.\n", plan.planName())
          .add("\n")
          .add("<p>Build one per rank with {@link #builder()}, run it with {@link #execute}, close it when done.\n");
      if (plan.fixedRanks() > 0) {
        doc.add("It is written for exactly $L ranks.\n", plan.fixedRanks());
      }
      if (!plan.collectives().isEmpty()) {
        doc.add("\n<ul>\n");
        for (CollectiveSpec c : plan.collectives()) {
          doc.add("  <li>step $L: $L {@code $L}$L$L\n", c.step(), c.kind().label(), c.send(), where(c), operands(c));
        }
        doc.add("</ul>\n");
      }
      return doc.build();
    }

    /** Where the result goes, for the class Javadoc: {@code in place}, {@code into {@code all}}, {@code to {@code rank + 1}}. */
    private static String where(CollectiveSpec c) {
      if (c.kind().hasPeer()) {
        return (c.kind() == Collective.SEND ? " to" : " from") + " {@code " + c.peer() + "}";
      }
      return c.inPlace() ? " in place" : " into {@code " + c.recv() + "}";
    }

    /** Its op and root, for the class Javadoc: {@code , MAX}, {@code , root 2}, {@code , SUM, root 0}. */
    private static String operands(CollectiveSpec c) {
      String out = c.kind().hasOp() ? ", " + c.op() : "";
      return c.kind().hasRoot() ? out + ", root " + c.root() : out;
    }

    /**
     * A type that only Javadoc names, written out in full: {@code $T} would import it, and ecj reports an
     * import that only Javadoc uses as unused.
     */
    private static String javadocName(ClassName type) {
      return type.canonicalName();
    }

    private static ClassName bufferClass(BufferSpec b) {
      return ClassName.get(RUNTIME, b.type().simpleName()); // a type of RESERVED
    }
  }

  /**
   * Allocates variable names in one scope: the wanted name, with {@code _} appended while it is taken or
   * reserved ({@link #RESERVED}, the generated class's name and its nested classes').
   */
  private static final class Names {
    private final Set<String> taken;

    Names(Set<String> reserved) {
      this.taken = new HashSet<>(reserved);
    }

    String claim(String wanted) {
      String name = wanted;
      while (!taken.add(name)) {
        name += "_";
      }
      return name;
    }
  }
}
