package dev.commplan.processor.generator;

import com.palantir.javapoet.AnnotationSpec;
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
import dev.commplan.processor.model.CollectiveKind;
import dev.commplan.processor.model.CollectiveSpec;
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
 * {@link PlanModel} to the generated plan class (docs/architecture.md): a thin typed facade over the
 * runtime's {@code PlanBuilder} and {@code Plan}. Sees only the model, never an {@code Element}; the caller
 * adds the originating element.
 */
public final class PlanGenerator {
  /** The processor's name in {@code @Generated}. */
  public static final String PROCESSOR = "dev.commplan.processor.CommPlanProcessor";

  private static final String RUNTIME = "dev.commplan.runtime";
  private static final String RUNTIME_PLAN = "dev.commplan.runtime.plan";
  private static final ClassName PLAN = ClassName.get(RUNTIME_PLAN, "Plan");
  private static final ClassName PLAN_BUILDER = ClassName.get(RUNTIME_PLAN, "PlanBuilder");
  private static final ClassName SCHEDULE = ClassName.get(RUNTIME_PLAN, "Schedule");
  private static final ClassName COMMUNICATOR = ClassName.get(RUNTIME, "Communicator");
  private static final ClassName STREAM = ClassName.get(RUNTIME, "Stream");
  private static final ClassName DATA_TYPE = ClassName.get(RUNTIME, "DataType");
  // Named in Javadoc only, so written out in full there (see javadocName): an import that only Javadoc
  // uses is an unused import to ecj, which does not read Javadoc unless told to.
  private static final ClassName PLAN_BUILD_EXCEPTION = ClassName.get(RUNTIME, "PlanBuildException");
  private static final ClassName BUFFER_BINDING_EXCEPTION = ClassName.get(RUNTIME, "BufferBindingException");
  private static final ClassName BUFFER_IN_FLIGHT_EXCEPTION = ClassName.get(RUNTIME, "BufferInFlightException");
  private static final ClassName REDUCE_OP = ClassName.get("dev.commplan.annotations", "ReduceOp");
  private static final ClassName GENERATED = ClassName.get("javax.annotation.processing", "Generated");
  private static final ClassName OBJECTS = ClassName.get("java.util", "Objects");

  /**
   * Every type the generated code names, in code or in Javadoc (and the buffer types, added in reserved()).
   * Add a type here when the generator starts to use it: {@link #RESERVED} comes from this list.
   */
  private static final List<ClassName> TYPES = List.of(
      PLAN, PLAN_BUILDER, SCHEDULE, COMMUNICATOR, STREAM, DATA_TYPE, PLAN_BUILD_EXCEPTION, BUFFER_BINDING_EXCEPTION,
      BUFFER_IN_FLIGHT_EXCEPTION, REDUCE_OP, GENERATED, OBJECTS,
      ClassName.get(String.class), ClassName.get(Boolean.class), ClassName.get(Override.class),
      ClassName.get(AutoCloseable.class));

  /**
   * Names no field, parameter or local of the generated code may have, since it would obscure a type the
   * code names in an expression ({@code DataType.F32}, {@code Objects.requireNonNull(...)}): each type's
   * simple name, and the first part of its package. The latter matters when the generated class has the
   * name of a type it uses ({@code @CommPlan(name = "DataType")}): that type is then written in full,
   * {@code dev.commplan.runtime.DataType.F32}, and a variable {@code dev} would make {@code dev.commplan}
   * a field access on it. The generated class's own name and {@code Builder} are added per plan.
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
    return new Run(plan).generate();
  }

  private static final class Run {
    private final PlanModel plan;
    private final ClassName self;
    private final ClassName builder;
    private final List<BufferSpec> buffers;
    private final Map<String, BufferSpec> byField = new HashMap<>();
    private final Set<String> reserved;

    Run(PlanModel plan) {
      this.plan = plan;
      this.self = ClassName.get(plan.packageName(), plan.className());
      this.builder = self.nestedClass("Builder");
      this.reserved = new HashSet<>(RESERVED);
      reserved.add(self.simpleName());
      reserved.add(builder.simpleName());
      this.buffers = plan.buffers();
      for (BufferSpec b : buffers) {
        byField.put(b.field(), b);
      }
    }

    JavaFile generate() {
      // Private fields of the plan class: the Plan, then one per buffer.
      Names planFields = new Names(reserved);
      String planField = planFields.claim("plan");
      Map<String, String> bufferFields = new HashMap<>();
      for (BufferSpec b : buffers) {
        bufferFields.put(b.field(), planFields.claim(Identifiers.canonical(b.field())));
      }

      TypeSpec.Builder type = TypeSpec.classBuilder(self)
          .addJavadoc(classJavadoc())
          .addAnnotation(AnnotationSpec.builder(GENERATED).addMember("value", "$S", PROCESSOR).build())
          .addModifiers(Modifier.PUBLIC, Modifier.FINAL)
          .addSuperinterface(AutoCloseable.class);

      type.addField(FieldSpec.builder(PLAN, planField, Modifier.PRIVATE, Modifier.FINAL).build());
      // The buffers come as handles, not one parameter each: a constructor has at most 255 parameter
      // slots, and a plan may have more fields than that.
      String handlesParam = planFields.claim("handles");
      MethodSpec.Builder ctor = MethodSpec.constructorBuilder()
          .addModifiers(Modifier.PRIVATE)
          .addParameter(PLAN, planField)
          .addParameter(int[].class, handlesParam)
          .addStatement("this.$N = $N", planField, planField);
      int index = 0;
      for (BufferSpec b : buffers) {
        String f = bufferFields.get(b.field());
        type.addField(FieldSpec.builder(bufferClass(b), f, Modifier.PRIVATE, Modifier.FINAL).build());
        ctor.addStatement("this.$N = ($T) $N.buffer($N[$L])", f, bufferClass(b), planField, handlesParam, index++);
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
            .addStatement("return $N", bufferFields.get(b.field()))
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

      type.addType(builderType(bufferFields));
      return JavaFile.builder(plan.packageName(), type.build()).indent("  ").build();
    }

    private TypeSpec builderType(Map<String, String> planFieldOf) {
      TypeSpec.Builder t = TypeSpec.classBuilder(builder)
          .addJavadoc("Collects the dims and bound buffers of a {@link $T}; {@link #build} checks and builds it.\n", self)
          .addModifiers(Modifier.PUBLIC, Modifier.STATIC, Modifier.FINAL);

      // Builder fields: a value and a "set" flag per dim, a bound buffer per field.
      Names fields = new Names(reserved);
      Map<String, String> dimValue = new HashMap<>();
      Map<String, String> dimSet = new HashMap<>();
      for (PlanModel.Dim d : plan.dims()) {
        dimValue.put(d.name(), fields.claim(d.name()));
      }
      for (PlanModel.Dim d : plan.dims()) {
        dimSet.put(d.name(), fields.claim(d.name() + "Set"));
      }
      Map<String, String> bound = new HashMap<>();
      for (BufferSpec b : buffers) {
        bound.put(b.field(), fields.claim(Identifiers.canonical(b.field())));
      }
      // The runtime's per-plan switches; null leaves PlanBuilder's default (its system property).
      String guard = fields.claim("hostAccessGuard");
      String fingerprint = fields.claim("fingerprintCheck");
      for (PlanModel.Dim d : plan.dims()) {
        t.addField(FieldSpec.builder(long.class, dimValue.get(d.name()), Modifier.PRIVATE).build());
        t.addField(FieldSpec.builder(boolean.class, dimSet.get(d.name()), Modifier.PRIVATE).build());
      }
      for (BufferSpec b : buffers) {
        t.addField(FieldSpec.builder(bufferClass(b), bound.get(b.field()), Modifier.PRIVATE).build());
      }
      t.addField(FieldSpec.builder(Boolean.class, guard, Modifier.PRIVATE).build());
      t.addField(FieldSpec.builder(Boolean.class, fingerprint, Modifier.PRIVATE).build());

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
            .addJavadoc("Uses {@code $N}, a buffer you own, as {@code $L} instead of one the plan allocates.\n"
                + "{@link #build} checks that it is $L, {@code @Shape($L)} = $L elements,\n"
                + "on the plan's communicator and not closed.\n",
                param, b.field(), b.type().dataType(), b.shapeAsWritten(), format(b.count()))
            .addModifiers(Modifier.PUBLIC)
            .addParameter(ParameterSpec.builder(bufferClass(b), param).build())
            .returns(builder)
            .addStatement("this.$N = $T.requireNonNull($N, $S)", bound.get(b.field()), OBJECTS, param, b.field())
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

      t.addMethod(buildMethod(dimValue, dimSet, bound, planFieldOf, guard, fingerprint));
      return t.build();
    }

    private MethodSpec buildMethod(
        Map<String, String> dimValue, Map<String, String> dimSet, Map<String, String> bound,
        Map<String, String> planFieldOf, String guard, String fingerprint) {
      Names locals = new Names(reserved);
      String comm = locals.claim("comm");
      Map<String, String> symbol = new HashMap<>();
      for (PlanModel.Dim d : plan.dims()) {
        symbol.put(d.name(), locals.claim(d.name()));
      }
      boolean usesRanks = buffers.stream().anyMatch(b -> b.count().powers().containsKey(Monomial.RANKS));
      if (usesRanks) {
        symbol.put(Monomial.RANKS, locals.claim(Monomial.RANKS));
      }
      String pb = locals.claim("b");
      Map<String, String> handle = new HashMap<>();
      for (BufferSpec b : buffers) {
        handle.put(b.field(), locals.claim(Identifiers.canonical(b.field())));
      }
      String built = locals.claim("plan");

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
      for (PlanModel.Dim d : plan.dims()) {
        m.addStatement("long $N = $T.requireDim($S, this.$N, this.$N)", symbol.get(d.name()), PLAN_BUILDER, d.name(),
            dimValue.get(d.name()), dimSet.get(d.name()));
      }
      if (usesRanks) {
        m.addStatement("long $N = $N.size()", symbol.get(Monomial.RANKS), comm);
      }
      for (BufferSpec b : buffers) {
        m.addStatement("int $N = $N.buffer($S,$W$T.$L,$W$L,$W$S,$Wthis.$N)", handle.get(b.field()), pb, b.field(), DATA_TYPE,
            b.type().dataType(), count(b, symbol), b.shapeAsWritten(), bound.get(b.field()));
      }
      for (CollectiveSpec c : plan.collectives()) {
        CodeBlock.Builder call = CodeBlock.builder().add("$N.$L($L, $N, $N", pb, c.kind().builderMethod(), c.step(),
            handle.get(c.send()), handle.get(c.recv()));
        if (c.kind().hasOp()) {
          call.add(", $T.$L", REDUCE_OP, c.op());
        }
        if (c.kind().hasRoot()) {
          call.add(", $L", c.root());
        }
        m.addStatement(call.add(")").build());
      }
      m.addStatement("$T $N = $N.build()", PLAN, built, pb);
      CodeBlock.Builder handles = CodeBlock.builder();
      for (int i = 0; i < buffers.size(); i++) {
        handles.add(i == 0 ? "$N" : ",$W$N", handle.get(buffers.get(i).field()));
      }
      m.addStatement("return new $T($N, new int[] {$L})", self, built, handles.build());
      return m.build();
    }

    /**
     * The count as a long expression of the dims' locals: {@code hidden} or {@code 4L} for one factor,
     * {@code PlanBuilder.count("w", "{\"4\", \"hidden\"}", 4L, hidden)} for more, which multiplies
     * exactly and, on overflow, fails with a PlanBuildException naming the field and its shape.
     */
    private CodeBlock count(BufferSpec b, Map<String, String> symbol) {
      List<CodeBlock> factors = new ArrayList<>();
      for (String factor : b.count().factors(symbolOrder())) {
        factors.add(symbol.containsKey(factor) ? CodeBlock.of("$N", symbol.get(factor)) : CodeBlock.of("$LL", factor));
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

    private java.util.Comparator<String> symbolOrder() {
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
          doc.add("  <li>step $L: $L {@code $L}$L$L\n", c.step(), label(c.kind()), c.send(),
              c.inPlace() ? " in place" : " into {@code " + c.recv() + "}",
              c.op() != null ? ", " + c.op() : c.kind() == CollectiveKind.BROADCAST ? ", root " + c.root() : "");
        }
        doc.add("</ul>\n");
      }
      return doc.build();
    }

    private static String label(CollectiveKind kind) {
      return switch (kind) {
        case ALL_REDUCE -> "all-reduce";
        case BROADCAST -> "broadcast";
        case ALL_GATHER -> "all-gather";
        case REDUCE_SCATTER -> "reduce-scatter";
      };
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
   * reserved ({@link #RESERVED}, the generated class's name, {@code Builder}).
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
