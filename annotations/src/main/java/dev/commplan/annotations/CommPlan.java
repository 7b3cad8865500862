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
}
