package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * This rank receives the field from one peer ({@code ncclRecv}); for pipeline stages and halo exchange.
 *
 * <p>{@link #from()} is a peer expression: {@code rank + k} or {@code rank - k} (k an integer literal, 0
 * or more), or either wrapped as {@code (rank - k) % ranks}, which is always in {@code [0, ranks)}. Without
 * {@code % ranks}, a peer outside {@code [0, ranks)} means this rank receives nothing in that transfer and
 * the field is left untouched, so the first pipeline stage needs no special code.
 *
 * <p>Each receive must be matched one to one by a {@link Send} of the same step with the inverse peer, the
 * same data type and an equal count.
 *
 * <p>The field must be a buffer type of {@code dev.commplan.runtime} and carry {@link Shape}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface Recv {
  /**
   * {@return the sending rank, as a peer expression such as {@code "rank - 1"} or {@code "(rank - 1) %
   * ranks"}}
   */
  String from();

  /**
   * {@return the step: collectives of the same step are issued in one NCCL group, and steps run in
   * ascending order}
   */
  int step() default 0;

  /**
   * {@return the mesh axis this transfer runs over, one of {@link CommPlan#axes()}: the group of ranks that
   * differ from this one only along that axis, where {@link #from()} is a coordinate along the axis ({@code
   * rank} this rank's, {@code ranks} the axis's size), and it pairs only with a {@link Send} over the same
   * axis; empty means the plan's whole communicator}
   */
  String over() default "";
}
