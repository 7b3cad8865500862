package dev.commplan.runtime;

/**
 * A buffer bound to a plan (or passed to a collective) does not fit: wrong element count, wrong data
 * type, closed, or from another communicator. The message names the field, the count given and the count
 * required.
 */
public class BufferBindingException extends PlanBuildException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message names the field, the count given and the count required
   */
  public BufferBindingException(String message) {
    super(message);
  }
}
