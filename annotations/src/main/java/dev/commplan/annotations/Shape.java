package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The shape of a buffer field: one entry per dimension; the element count is the product of all entries.
 *
 * <p>Each entry is an integer literal (&gt; 0), a name from {@link CommPlan#dims()}, the built-in name
 * {@code ranks} (the communicator's size), or a product of those joined by {@code *}, spaces allowed:
 * {@code "1024"}, {@code "hidden"}, {@code "ranks*n"}, {@code "4 * hidden"}. Counts are compared as
 * products of symbols, so {@code "ranks*n"} equals {@code {"n", "ranks"}}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface Shape {
  /** {@return one entry per dimension, as written} */
  String[] value();
}
