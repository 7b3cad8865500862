package dev.commplan.processor.generator;

import static dev.commplan.processor.generator.GeneratedTypes.STREAM;

import com.palantir.javapoet.MethodSpec;
import com.palantir.javapoet.TypeSpec;
import dev.commplan.processor.model.BufferSpec;
import javax.lang.model.element.Modifier;

/**
 * What a bucketed plan's class has beside the others' ({@code @CommPlan(bucketBytes > 0)}): the nested
 * {@code enum Field}, {@code ready}, {@code finish} and {@code buckets()}, each handing on to the {@code
 * Plan}, and the sentences its {@code execute} and {@code close} add to their Javadoc.
 */
final class BucketMethods {
  /** What {@code execute} adds to its Javadoc in a bucketed plan. */
  static final String EXECUTE = "\n"
      + "<p>It issues every bucket, as one plan. While a round of {@link #ready} calls is open (before its\n"
      + "{@link #finish}), it throws {@code IllegalStateException} naming the fields marked ready.\n";

  /** What {@code close} adds to its Javadoc in a bucketed plan. */
  static final String CLOSE = "\n"
      + "<p>It also closes the communication stream that {@code build} made (one given to the builder's\n"
      + "{@code commStream} stays yours). With a round of {@link #ready} calls open, it first enqueues the\n"
      + "buckets not yet enqueued (so that no other rank is left waiting in a collective) and waits for the\n"
      + "communication stream, frees, and then throws {@code IllegalStateException} naming the fields that\n"
      + "were not marked ready.\n";

  private BucketMethods() {}

  /** The nested {@code enum Field}: one constant per field a collective sends, in declaration order. */
  static TypeSpec fieldEnum(Generation g) {
    TypeSpec.Builder type = TypeSpec.enumBuilder(g.fieldEnum)
        .addJavadoc("The fields of {@code $L} that a collective sends, in declaration order, each named as the\n"
            + "field: what {@link $T#ready} takes. The plan cuts them into buckets of at most\n"
            + "{@code bucketBytes} bytes, last-declared first, within each step$L.\n",
            g.plan.planName(), g.self, g.plan.overMesh() ? " and axis" : "")
        .addModifiers(Modifier.PUBLIC);
    for (BufferSpec b : g.plan.fieldConstants()) {
      type.addEnumConstant(b.fieldConstant(), TypeSpec.anonymousClassBuilder("")
          .addJavadoc("The field {@code $L}: $L, {@code @Shape($L)}, $L elements.\n", b.field(), b.type().name(),
              b.shapeAsWritten(), g.format(b.count()))
          .build());
    }
    return type.build();
  }

  /** Adds {@code ready}, {@code finish} and {@code buckets()}, which call the {@code Plan} in {@code plan}. */
  static void add(TypeSpec.Builder type, Generation g, String plan, String fieldHandles) {
    type.addMethod(MethodSpec.methodBuilder("ready")
        .addJavadoc("Marks {@code field} ready: the work enqueued on {@code producer} so far writes it (in a\n"
            + "backward pass, call this as soon as the kernels that produce the field's gradient are\n"
            + "enqueued). When every field of a bucket is ready, the bucket's calls are enqueued on the\n"
            + "plan's communication stream, after the producers' work. Buckets are enqueued in the same\n"
            + "order on every rank, so a complete bucket waits until every earlier one has been enqueued.\n"
            + "Returns without waiting. Mark every field once, then call {@link #finish}.\n"
            + "\n"
            + "@param field the field, a constant of {@link $T}\n"
            + "@param producer the stream whose work so far writes {@code field}\n"
            + "@throws IllegalStateException if {@code field} was already marked ready since the last\n"
            + "    {@link #finish}, naming it (nothing else changes)\n"
            + "@throws IllegalArgumentException if {@code producer} is a stream of another device or\n"
            + "    backend, which the communication stream cannot wait for\n", g.fieldEnum)
        .addModifiers(Modifier.PUBLIC)
        .addParameter(g.fieldEnum, "field")
        .addParameter(STREAM, "producer")
        .addStatement("$N.ready($N[field.ordinal()], producer)", plan, fieldHandles)
        .build());
    type.addMethod(MethodSpec.methodBuilder("finish")
        .addJavadoc("Ends a round of {@link #ready} calls: work enqueued on {@code consumer} afterwards (the\n"
            + "optimizer step) starts after every bucket's calls have completed. Returns without waiting.\n"
            + "Read the results on the host only after {@code consumer.synchronize()}: the host-access\n"
            + "guard refuses earlier access ({@code BufferInFlightException}), as after {@link #execute}.\n"
            + "\n"
            + "@param consumer the stream whose later work reads the results\n"
            + "@throws IllegalArgumentException if {@code consumer} is a stream of another communicator\n"
            + "@throws IllegalStateException if a field was not marked ready since the last {@code finish},\n"
            + "    naming every such field. Nothing is left waiting: the buckets not yet enqueued are\n"
            + "    enqueued first (those fields reduced with whatever they hold), {@code consumer} waits\n"
            + "    for them, and the round ends, so the next round starts afresh.\n")
        .addModifiers(Modifier.PUBLIC)
        .addParameter(STREAM, "consumer")
        .addStatement("$N.finish(consumer)", plan)
        .build());
    type.addMethod(MethodSpec.methodBuilder("buckets")
        .addJavadoc("Returns how many buckets the plan was built with ({@code bucketBytes} and the dims decide,\n"
            + "at {@code build}); {@link #describe} lists each bucket's fields and bytes.\n")
        .addModifiers(Modifier.PUBLIC)
        .returns(int.class)
        .addStatement("return $N.buckets()", plan)
        .build());
  }
}
