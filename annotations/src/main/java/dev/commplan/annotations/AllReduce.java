package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Every rank receives the element-wise reduction of all ranks' send buffers ({@code ncclAllReduce}).
 *
 * <p>With {@link #into()} the receive buffer must have the same element count as this field; without it
 * the reduction happens in place.
 *
 * <p>The field must be a buffer type of {@code dev.commplan.runtime} and carry {@link Shape}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface AllReduce {
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
   * that differ from this one only along that axis, where the reduction is over that group only; empty means
   * the plan's whole communicator}
   */
  String over() default "";
}
