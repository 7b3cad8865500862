package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Every rank exchanges one slice with every rank ({@code ncclAlltoAll}): slice j of this field goes to
 * rank j, and slice i of the receive buffer comes from rank i.
 *
 * <p>Out of place only, so {@link #into()} is required. Both buffers have the same count, divisible by
 * {@code ranks}.
 *
 * <p>The field must be a buffer type of {@code dev.commplan.runtime} and carry {@link Shape}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface AllToAll {
  /**
   * {@return the name of the receive-buffer field of the same class; required, since AllToAll has no
   * in-place form}
   */
  String into();

  /**
   * {@return the step: collectives of the same step are issued in one NCCL group, and steps run in
   * ascending order}
   */
  int step() default 0;

  /**
   * {@return the mesh axis this collective runs over, one of {@link CommPlan#axes()}: the group of ranks
   * that differ from this one only along that axis, where the slices are one per rank of the axis, in
   * coordinate order; empty means the plan's whole communicator}
   */
  String over() default "";
}
