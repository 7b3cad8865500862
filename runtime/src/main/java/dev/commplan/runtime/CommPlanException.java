package dev.commplan.runtime;

/** The base of every exception CommPlan's runtime throws. */
public class CommPlanException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  public CommPlanException(String message) {
    super(message);
  }

  public CommPlanException(String message, Throwable cause) {
    super(message, cause);
  }
}
