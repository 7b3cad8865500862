package dev.commplan.runtime;

/**
 * A backend cannot run here: a native library is missing, native access is not enabled, no device is
 * present. The message says what was tried and what to do.
 */
public class BackendUnavailableException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what was tried and what to do, for the user to read
   */
  public BackendUnavailableException(String message) {
    super(message);
  }

  /**
   * Creates the exception with the failure underneath.
   *
   * @param message what was tried and what to do, for the user to read
   * @param cause the failure that showed the backend cannot run (a failed library load, say)
   */
  public BackendUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
