package dev.commplan.processor.generator;

import static dev.commplan.processor.generator.GeneratedTypes.BUFFER;
import static dev.commplan.processor.generator.GeneratedTypes.CAPTURED_PLAN;
import static dev.commplan.processor.generator.GeneratedTypes.COMMUNICATOR;
import static dev.commplan.processor.generator.GeneratedTypes.GENERATED;
import static dev.commplan.processor.generator.GeneratedTypes.MESH;
import static dev.commplan.processor.generator.GeneratedTypes.PLAN;
import static dev.commplan.processor.generator.GeneratedTypes.SCHEDULE;
import static dev.commplan.processor.generator.GeneratedTypes.STREAM;
import static dev.commplan.processor.generator.GeneratedTypes.bufferClass;

import com.palantir.javapoet.AnnotationSpec;
import com.palantir.javapoet.ArrayTypeName;
import com.palantir.javapoet.FieldSpec;
import com.palantir.javapoet.JavaFile;
import com.palantir.javapoet.MethodSpec;
import com.palantir.javapoet.TypeSpec;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.PlanModel;
import java.util.List;
import javax.lang.model.element.Modifier;

/**
 * {@link PlanModel} to the generated plan class (docs/dev/generated-code.md): a thin typed facade over the
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
 * neither a constructor nor a field initializer grows with the plan either. The one exception is a
 * bucketed plan's {@code enum Field}, whose static initializer has a constant per sent field: the
 * processor refuses a plan of more than the enum can hold (rule 23, {@code BucketRules}); its fields'
 * handles come from {@code build} as one array, like the buffers'.
 *
 * <p>This class writes the plan class itself (its accessors and the methods that hand on to the {@code
 * Plan}); {@link BucketMethods} a bucketed plan's {@code enum Field} and methods; {@link BuilderType} the
 * Builder, {@link BuildMethod} its {@code build} and the parts, {@link DeclarationCode} each declaration's
 * code, {@link Layout} where the declarations go, {@link PlanJavadoc} the class's Javadoc, and {@link
 * GeneratedTypes} the types the code names.
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

  private PlanGenerator() {}

  /** The generated source file of {@code plan}. */
  public static JavaFile generate(PlanModel plan) {
    return generate(plan, Limits.DEFAULT);
  }

  /** The generated source file of {@code plan}, its methods kept within {@code limits}. */
  public static JavaFile generate(PlanModel plan, Limits limits) {
    return generate(new Generation(plan, limits));
  }

  private static JavaFile generate(Generation g) {
    PlanModel plan = g.plan;
    List<BufferSpec> buffers = g.buffers;
    TypeSpec.Builder type = TypeSpec.classBuilder(g.self)
        .addJavadoc(PlanJavadoc.of(plan))
        .addAnnotation(AnnotationSpec.builder(GENERATED).addMember("value", "$S", PROCESSOR).build())
        .addModifiers(Modifier.PUBLIC, Modifier.FINAL)
        .addSuperinterface(AutoCloseable.class);

    // The Plan, and its buffers by field (declaration order), each accessor casting its own. The
    // constructor takes the handles as one array: it has at most 255 parameter slots, and it does not
    // grow with the plan.
    Names names = new Names(g.reserved);
    String planField = names.claim("plan");
    String buffersField = names.claim("buffers");
    String handles = names.claim("handles");
    String i = names.claim("i");
    // A bucketed plan's handles of its Field constants' buffers, by ordinal (claimed last: the other names
    // stay as in a plan without buckets).
    String fieldHandles = plan.bucketed() ? names.claim("fieldHandles") : null;
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
    if (plan.bucketed()) {
      type.addField(FieldSpec.builder(int[].class, fieldHandles, Modifier.PRIVATE, Modifier.FINAL).build());
      ctor.addParameter(int[].class, fieldHandles).addStatement("this.$N = $N", fieldHandles, fieldHandles);
    }
    type.addMethod(ctor.build());

    type.addMethod(MethodSpec.methodBuilder("builder")
        .addJavadoc("Returns a new builder: set every dim, optionally bind buffers you own, then call\n"
            + "{@link $T#build($T)}.\n", g.builder, plan.overMesh() ? MESH : COMMUNICATOR)
        .addModifiers(Modifier.PUBLIC, Modifier.STATIC)
        .returns(g.builder)
        .addStatement("return new $T()", g.builder)
        .build());

    for (BufferSpec b : buffers) {
      type.addMethod(MethodSpec.methodBuilder(b.accessor())
          .addJavadoc("Returns the buffer of field {@code $L}: $L, {@code @Shape($L)},\n"
              + "$L elements. The plan allocated it unless it was bound with {@link $T#$L}.\n",
              b.field(), b.type().name(), b.shapeAsWritten(), g.format(b.count()), g.builder, b.bindMethod())
          .addModifiers(Modifier.PUBLIC)
          .returns(bufferClass(b.type()))
          .addStatement("return ($T) $N[$L]", bufferClass(b.type()), buffersField, g.index.get(b.field()))
          .build());
    }

    type.addMethod(MethodSpec.methodBuilder("execute")
        .addJavadoc("Enqueues the whole plan on {@code stream}, step by step, and returns without waiting, as\n"
            + "NCCL does: call {@code stream.synchronize()} before reading the results.\n"
            + (plan.bucketed() ? BucketMethods.EXECUTE : ""))
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
    if (plan.bucketed()) {
      BucketMethods.add(type, g, planField, fieldHandles);
    }
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
        .addJavadoc(plan.overMesh() ? "Returns the communicator this plan was built for: its mesh's world.\n"
            : "Returns the communicator this plan was built for.\n")
        .addModifiers(Modifier.PUBLIC)
        .returns(COMMUNICATOR)
        .addStatement("return $N.communicator()", planField)
        .build());
    type.addMethod(MethodSpec.methodBuilder("close")
        .addJavadoc("Frees the buffers the plan allocated (bound buffers stay yours); idempotent.\n"
            + (plan.bucketed() ? BucketMethods.CLOSE : ""))
        .addAnnotation(Override.class)
        .addModifiers(Modifier.PUBLIC)
        .addStatement("$N.close()", planField)
        .build());

    if (plan.bucketed()) {
      type.addType(BucketMethods.fieldEnum(g));
    }
    type.addType(new BuilderType(g).type());
    if (!g.layout.inline()) {
      BuildMethod build = new BuildMethod(g);
      List<List<Declaration>> parts = g.layout.parts();
      for (int p = 0; p < parts.size(); p++) {
        type.addType(build.part(p, parts.size(), parts.get(p)));
      }
    }
    return JavaFile.builder(plan.packageName(), type.build()).indent("  ").build();
  }
}
