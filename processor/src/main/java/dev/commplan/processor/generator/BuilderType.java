package dev.commplan.processor.generator;

import static dev.commplan.processor.generator.GeneratedTypes.BUFFER;
import static dev.commplan.processor.generator.GeneratedTypes.BUFFER_IN_FLIGHT_EXCEPTION;
import static dev.commplan.processor.generator.GeneratedTypes.OBJECTS;
import static dev.commplan.processor.generator.GeneratedTypes.bufferClass;
import static dev.commplan.processor.generator.GeneratedTypes.javadocName;

import com.palantir.javapoet.ArrayTypeName;
import com.palantir.javapoet.FieldSpec;
import com.palantir.javapoet.MethodSpec;
import com.palantir.javapoet.ParameterSpec;
import com.palantir.javapoet.TypeSpec;
import dev.commplan.processor.lang.Identifiers;
import dev.commplan.processor.model.BufferSpec;
import dev.commplan.processor.model.PlanModel;
import javax.lang.model.element.Modifier;

/**
 * The generated plan's nested {@code Builder}: a value and a "set" flag per dim with its setter, a slot
 * per buffer with its bind method, the runtime's per-plan switches, and {@link BuildMethod build}.
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

    t.addMethod(new BuildMethod(g).build());
    return t.build();
  }
}
