package dev.commplan.runtime;

/**
 * A plan could not be built: a dimension unset or not positive, the communicator's size differs from
 * {@code @CommPlan(ranks)}, a count not divisible by the number of ranks, a root out of range.
 */
public class PlanBuildException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message names the plan and what does not fit (the dimension, count or root), and how to fix it
   */
  public PlanBuildException(String message) {
    super(message);
  }
}
