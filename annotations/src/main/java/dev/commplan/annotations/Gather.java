package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * The root rank receives every rank's send buffer, rank i's at slice i ({@code ncclGather}).
 *
 * <p>With {@link #into()} the receive buffer's count must be {@code ranks} times this field's. Without it
 * the gather happens in place: this field holds the whole result, its rank-th slice is this rank's input,
 * so its count must be divisible by {@code ranks}. Only the root's receive buffer is written.
 *
 * <p>The field must be a buffer type of {@code dev.commplan.runtime} and carry {@link Shape}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface Gather {
  /** {@return the root rank: 0 or more, and less than {@link CommPlan#ranks()} where that is fixed} */
  int root() default 0;

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
   * size, and {@link #root()} is a coordinate along the axis; empty means the plan's whole communicator}
   */
  String over() default "";
}
