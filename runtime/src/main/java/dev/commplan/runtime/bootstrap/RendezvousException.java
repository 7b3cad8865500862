package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.CommPlanException;

/**
 * The rendezvous failed: a rank never joined (named), a peer closed its connection or sent nothing in
 * time (named), rank 0 rejected this rank (with its reason), or the ranks disagree (size, secret,
 * operation).
 */
public class RendezvousException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /**
   * Creates the exception.
   *
   * @param message what failed, naming the ranks involved
   */
  public RendezvousException(String message) {
    super(message);
  }

  /**
   * Creates the exception with the failure underneath.
   *
   * @param message what failed, naming the ranks involved
   * @param cause the underlying failure (an I/O error, say)
   */
  public RendezvousException(String message, Throwable cause) {
    super(message, cause);
  }
}
