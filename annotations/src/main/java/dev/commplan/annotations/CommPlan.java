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
}
