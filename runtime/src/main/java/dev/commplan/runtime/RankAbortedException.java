package dev.commplan.runtime;

/**
 * This rank's work was abandoned because another rank failed or the group was aborted; the cause, where
 * known, is the other rank's failure.
 */
public class RankAbortedException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message which rank's work was abandoned, and why
   * @param cause the other rank's failure, or null when unknown
   */
  public RankAbortedException(String message, Throwable cause) {
    super(message, cause);
  }
}
