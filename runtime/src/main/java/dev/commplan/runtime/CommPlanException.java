package dev.commplan.runtime;

/** The base of every exception CommPlan's runtime throws. */
public class CommPlanException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what went wrong and, where known, what to do
   */
  public CommPlanException(String message) {
    super(message);
  }

  /**
   * Creates the exception with the failure underneath.
   *
   * @param message what went wrong and, where known, what to do
   * @param cause the underlying failure
   */
  public CommPlanException(String message, Throwable cause) {
    super(message, cause);
  }
}
