package dev.commplan.processor.generator;

import static dev.commplan.processor.generator.GeneratedTypes.BUFFER;
import static dev.commplan.processor.generator.GeneratedTypes.BUFFER_IN_FLIGHT_EXCEPTION;
import static dev.commplan.processor.generator.GeneratedTypes.ILLEGAL_ARGUMENT;
import static dev.commplan.processor.generator.GeneratedTypes.OBJECTS;
import static dev.commplan.processor.generator.GeneratedTypes.STREAM;
import static dev.commplan.processor.generator.GeneratedTypes.bufferClass;
import static dev.commplan.processor.generator.GeneratedTypes.javadocName;

import com.palantir.javapoet.ArrayTypeName;
import com.palantir.javapoet.FieldSpec;
import com.palantir.javapoet.MethodSpec;
import com.palantir.javapoet.ParameterSpec;
import com.palantir.javapoet.TypeSpec;
import dev.commplan.model.RuleId;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.PlanModel;
import javax.lang.model.element.Modifier;

/**
 * The generated plan's nested {@code Builder}: a value and a "set" flag per dim with its setter, a slot
 * per buffer with its bind method, the runtime's per-plan switches, a bucketed plan's bucket size and
 * communication stream, and {@link BuildMethod build}.
 */
final class BuilderType {
  private final Generation g;

  BuilderType(Generation g) {
    this.g = g;
  }

  TypeSpec type() {
    PlanModel plan = g.plan;
    Generation.BuilderFields f = g.fields;
    TypeSpec.Builder t = TypeSpec.classBuilder(g.builder)
        .addJavadoc("Collects the dims and bound buffers of a {@link $T}; {@link #build} checks and builds it.\n", g.self)
        .addModifiers(Modifier.PUBLIC, Modifier.STATIC, Modifier.FINAL);

    for (PlanModel.Dim d : plan.dims()) {
      t.addField(FieldSpec.builder(long.class, f.dimValue().get(d.name()), Modifier.PRIVATE).build());
      t.addField(FieldSpec.builder(boolean.class, f.dimSet().get(d.name()), Modifier.PRIVATE).build());
    }
    if (!g.buffers.isEmpty()) {
      t.addField(FieldSpec.builder(ArrayTypeName.of(BUFFER), f.bound(), Modifier.PRIVATE, Modifier.FINAL)
          .initializer("new $T[$L]", BUFFER, g.buffers.size())
          .build());
    }
    t.addField(FieldSpec.builder(Boolean.class, f.guard(), Modifier.PRIVATE).build());
    t.addField(FieldSpec.builder(Boolean.class, f.fingerprint(), Modifier.PRIVATE).build());
    t.addField(FieldSpec.builder(Boolean.class, f.order(), Modifier.PRIVATE).build());
    if (plan.bucketed()) {
      t.addField(FieldSpec.builder(long.class, f.bucketBytes(), Modifier.PRIVATE)
          .initializer("$LL", plan.bucketBytes())
          .build());
      t.addField(FieldSpec.builder(STREAM, f.commStream(), Modifier.PRIVATE).build());
    }

    t.addMethod(MethodSpec.constructorBuilder().addModifiers(Modifier.PRIVATE).build());

    for (PlanModel.Dim d : plan.dims()) {
      String param = new Names(g.reserved).claim(d.name());
      t.addMethod(MethodSpec.methodBuilder(d.setter())
          .addJavadoc("Sets the dim {@code $L}, which must be greater than 0 (checked by {@link #build}).\n", d.name())
          .addModifiers(Modifier.PUBLIC)
          .addParameter(long.class, param)
          .returns(g.builder)
          .addStatement("this.$N = $N", f.dimValue().get(d.name()), param)
          .addStatement("this.$N = true", f.dimSet().get(d.name()))
          .addStatement("return this")
          .build());
    }

    for (BufferSpec b : g.buffers) {
      String param = new Names(g.reserved).claim(Identifiers.canonical(b.field()));
      t.addMethod(MethodSpec.methodBuilder(b.bindMethod())
          .addJavadoc("Uses {@code $N}, a buffer you own, as {@code $L} instead of one the plan allocates: {@link #build}\n"
              + "checks that it is $L, {@code @Shape($L)} = $L elements, open and on the plan's communicator.\n",
              param, b.field(), b.type().name(), b.shapeAsWritten(), g.format(b.count()))
          .addModifiers(Modifier.PUBLIC)
          .addParameter(ParameterSpec.builder(bufferClass(b.type()), param).build())
          .returns(g.builder)
          .addStatement("this.$N[$L] = $T.requireNonNull($N, $S)", f.bound(), g.index.get(b.field()), OBJECTS, param,
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
        .returns(g.builder)
        .addStatement("this.$N = enabled", f.guard())
        .addStatement("return this")
        .build());
    t.addMethod(MethodSpec.methodBuilder("fingerprintCheck")
        .addJavadoc("Turns off (or on) the check, in {@link #build}, that every rank built the same plan\n"
            + "(default: on, unless {@code -D$L=false}). The check is a collective: with it on,\n"
            + "every rank must build; turn it off only where some do not.\n", "commplan.plan.fingerprint")
        .addModifiers(Modifier.PUBLIC)
        .addParameter(boolean.class, "check")
        .returns(g.builder)
        .addStatement("this.$N = check", f.fingerprint())
        .addStatement("return this")
        .build());

    t.addMethod(MethodSpec.methodBuilder("orderCheck")
        .addJavadoc("Turns on (or off) the check that every rank executes this plan where the others do\n"
            + "(default: off, unless {@code -D$L=true}): the ranks' calls are then compared right\n"
            + "after each execute, and a synchronize after ranks executed other plans (or another\n"
            + "instance of this one) there throws {@code DisagreementException} on every rank.\n",
            "commplan.orderCheck")
        .addModifiers(Modifier.PUBLIC)
        .addParameter(boolean.class, "check")
        .returns(g.builder)
        .addStatement("this.$N = check", f.order())
        .addStatement("return this")
        .build());

    if (plan.bucketed()) {
      t.addMethod(bucketBytes());
      t.addMethod(commStream());
    }
    t.addMethod(new BuildMethod(g).build());
    return t.build();
  }

  /** A bucketed plan's {@code bucketBytes(long)}: the annotation's N is the field's initial value. */
  private MethodSpec bucketBytes() {
    return MethodSpec.methodBuilder("bucketBytes")
        .addJavadoc("Sets the most bytes of one bucket for this build, instead of the $L bytes of\n"
            + "{@code @CommPlan(bucketBytes)} (the default): for trying several sizes on your hardware, as the\n"
            + "{@code overlap} sample's sweep does. Every rank must build with the same size: the buckets are\n"
            + "part of the plan's fingerprint, which {@link #build} compares.\n"
            + "\n"
            + "@throws IllegalArgumentException if {@code bytes} is not greater than 0 (a plan generated with\n"
            + "    {@code bucketBytes} is always built with buckets; to run it whole, call\n"
            + "    {@link $T#execute})\n", g.plan.bucketBytes(), g.self)
        .addModifiers(Modifier.PUBLIC)
        .addParameter(long.class, "bytes")
        .returns(g.builder)
        .beginControlFlow("if (bytes <= 0)")
        .addStatement("throw new $T($S + bytes$W+ $S$W+ $S)", ILLEGAL_ARGUMENT,
            RuleId.BAD_BUCKET.tag() + " plan " + g.plan.planName() + ": bucketBytes(",
            ") is not greater than 0, but a plan generated with @CommPlan(bucketBytes) is built with buckets.",
            " Fix: pass the most bytes of one bucket, N > 0; to run the plan whole, call execute")
        .endControlFlow()
        .addStatement("this.$N = bytes", g.fields.bucketBytes())
        .addStatement("return this")
        .build();
  }

  /** A bucketed plan's {@code commStream(Stream)}. */
  private MethodSpec commStream() {
    return MethodSpec.methodBuilder("commStream")
        .addJavadoc("Sets the stream the plan enqueues its buckets on (optional): a stream of the plan's\n"
            + "communicator$L, such as one from {@code newStream()}, which stays yours to close after the\n"
            + "plan. Without it, {@link #build} makes one with {@code newStream()}, and the plan closes it with\n"
            + "itself. {@link #build} throws {@code IllegalArgumentException} for a stream of another\n"
            + "communicator.\n",
            g.plan.overMesh() ? " (of {@code mesh.world()})" : "")
        .addModifiers(Modifier.PUBLIC)
        .addParameter(STREAM, "stream")
        .returns(g.builder)
        .addStatement("this.$N = $T.requireNonNull(stream, $S)", g.fields.commStream(), OBJECTS, "stream")
        .addStatement("return this")
        .build();
  }
}
