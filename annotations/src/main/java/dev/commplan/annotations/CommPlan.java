package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a class whose buffer fields describe one communication plan. The processor checks every size,
 * root and alias at compile time and generates {@code <SimpleName>Plan} (or {@link #name()}) beside it.
 *
 * <p>Allowed on top-level classes and static nested classes that are not private; not on interfaces,
 * enums, records or annotations.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.TYPE)
public @interface CommPlan {
  /**
   * {@return the simple name of the generated class; empty means the class's simple name followed by
   * {@code Plan}}
   */
  String name() default "";

  /**
   * Symbolic dimension names usable in {@link Shape} expressions, each bound with a typed setter on the
   * generated builder. Must be Java identifiers, distinct, and not the reserved name {@code ranks}.
   *
   * @return the dims' names, in the order the builder's setters are generated
   */
  String[] dims() default {};

  /**
   * The world size this plan is written for: 0 means any; N &gt; 0 fixes it, lets the processor check
   * sizes and roots against N, and is checked against the communicator when the plan is built.
   *
   * @return the fixed world size, or 0 for any
   */
  int ranks() default 0;

  /**
   * The mesh axes the plan's collectives may run over (their {@code over} attribute), such as {@code {"dp",
   * "tp"}}. Each axis name is also a size usable in {@link Shape} expressions, like {@code ranks} (which
   * stays the size of the whole communicator, the product of all the mesh's axes). A plan with axes is
   * built on a mesh that has every one of them (its generated builder's {@code build(Mesh)}); one without
   * is built on a communicator. Must be Java identifiers, distinct, not {@code rank} or {@code ranks}, and
   * not also a dim.
   *
   * @return the axes' names; empty for a plan over the whole communicator only
   */
  String[] axes() default {};

  /**
   * The most bytes of one bucket, for overlapping the plan's communication with the computation that
   * produces its buffers (a backward pass). 0, the default: no buckets, the plan runs whole with {@code
   * execute}, as before.
   *
   * <p>N &gt; 0: within each step and each axis, the plan's collectives are cut into <em>buckets</em> in
   * <b>reverse declaration order</b>, the order in which a backward pass produces gradients (declare the
   * fields in forward order, first layer first). A bucket holds consecutive fields whose bytes (element
   * count &times; element size of the buffer each collective sends) add up to at most N; a field larger
   * than N is a bucket alone. Calls inside a bucket are coalesced as before. The bucket boundaries depend
   * on the dims, so they are fixed when the plan is built, and are part of the plan's fingerprint.
   *
   * <p>The generated class of such a plan also has a nested {@code enum Field} (one constant per field
   * that a collective sends, named as the field), {@code ready(Field, Stream)}, which marks a field as
   * produced and enqueues each bucket on the plan's communication stream as soon as all its fields are
   * ready, {@code finish(Stream)}, which makes a stream wait for every bucket, and {@code buckets()}; its
   * builder has {@code commStream(Stream)} and {@code bucketBytes(long)}, which overrides N for one build
   * (for a sweep over bucket sizes).
   *
   * <p>Choosing N: small buckets start communicating early but pay a collective's fixed cost many times;
   * large ones pay it once but start late, and the last bucket, which no computation hides, is larger.
   * The best N depends on the model, the network and the GPUs: measure, as the {@code overlap} sample's
   * sweep does. docs/overlap.md says how.
   *
   * <p>N &lt; 0 is a compile error on this attribute ({@code [CommPlan/BadBucket]}).
   *
   * @return the most bytes of one bucket; 0 for no buckets
   */
  long bucketBytes() default 0;

  /**
   * Whether the plan checks, before each reduction ({@link AllReduce}, {@link Reduce}, {@link ReduceScatter}) of a
   * floating-point field goes out, that no rank's send data holds a NaN or an infinity. False, the default: no
   * check, and no cost. The system property {@code commplan.checkFinite=true} turns it on for every plan.
   *
   * <p>When on, before each step (or bucket) with such a reduction, every rank searches the fields the reduction
   * sends, on the device (the local and MPI backends, whose device memory is host memory, on the host), and the
   * ranks agree on what they found before any data moves: where any rank holds a NaN or an infinity, the call
   * ({@code execute}, {@code executeStep}, a captured plan's {@code launch}, {@code ready}) fails on every rank
   * with {@code dev.commplan.runtime.NonFiniteException}, naming the lowest such rank, the field, the first index
   * and the value, and the step is enqueued on none of them, so no rank's data changes. Steps before it have gone
   * out; a bucketed plan's round enqueues nothing more, and its {@code finish} ends it.
   *
   * <p>The price of the guarantee: each checked step waits on the host for the ranks' verdict (a search of the
   * fields, one small all-gather and a stream synchronize) before it is enqueued, so the host no longer runs ahead
   * of the device there, and a captured plan is launched step by step, not as one CUDA graph. docs/dsl.md,
   * "Finite checks", gives the costs measured.
   *
   * @return whether floating-point reductions' send data is checked for NaN and infinity before it goes out
   */
  boolean checkFinite() default false;
}
