package dev.commplan.annotations;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Every rank receives the root rank's send buffer ({@code ncclBroadcast}).
 *
 * <p>With {@link #into()} the receive buffer must have the same element count as this field; without it
 * the broadcast happens in place.
 *
 * <p>The field must be a buffer type of {@code dev.commplan.runtime} and carry {@link Shape}.
 */
@Documented
@Retention(RetentionPolicy.CLASS)
@Target(ElementType.FIELD)
public @interface Broadcast {
  /**
   * {@return the rank whose data is sent: 0 or more, and less than {@link CommPlan#ranks()} where that is
   * fixed}
   */
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
   * that differ from this one only along that axis, where {@link #root()} is a coordinate along the axis;
   * empty means the plan's whole communicator}
   */
  String over() default "";
}
