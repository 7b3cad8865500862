package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Each rank receives one reduced slice: rank r gets the reduction of slice r of every
 * rank's send buffer ({@code ncclReduceScatter}).
 *
 * <p>With {@link #into()} this field's count must be {@code ranks} times the receive buffer's. Without it
 * the reduction happens in place: this field holds the whole input and the result lands in its rank-th
 * slice, so its count must be divisible by {@code ranks}.
 *
 * <p>The field must be a buffer type of {@code dev.commplan.runtime} and carry {@link Shape}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface ReduceScatter {
  /** {@return the reduction, with NCCL's meaning} */
  ReduceOp op() default ReduceOp.SUM;

  /** {@return the name of the receive-buffer field of the same class; empty means in place} */
  String into() default "";

  /**
   * {@return the step: collectives of the same step are issued in one NCCL group, and steps run in
   * ascending order}
   */
  int step() default 0;

  /**
   * {@return the mesh axis this collective runs over, one of {@link CommPlan#axes()}: the group of ranks
   * that differ from this one only along that axis, where {@code ranks} in the count rule means the axis's
   * size, and the slices are in coordinate order; empty means the plan's whole communicator}
   */
  String over() default "";
}
