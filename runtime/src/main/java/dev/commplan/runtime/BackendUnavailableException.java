package dev.commplan.runtime;

/**
 * A backend cannot run here: a native library is missing, native access is not enabled, no device is
 * present. The message says what was tried and what to do.
 */
public class BackendUnavailableException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  public BackendUnavailableException(String message) {
    super(message);
  }

  public BackendUnavailableException(String message, Throwable cause) {
    super(message, cause);
  }
}
