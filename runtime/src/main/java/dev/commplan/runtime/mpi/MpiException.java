package dev.commplan.runtime.mpi;

import dev.commplan.runtime.CommPlanException;

/** An MPI function returned an error; the message has {@code MPI_Error_string}'s text and where it happened. */
public final class MpiException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** The MPI function that failed ({@link #function()}). */
  private final String function;
  /** The MPI error code it returned ({@link #errorCode()}). */
  private final int errorCode;

  MpiException(String function, int errorCode, String message) {
    super(message);
    this.function = function;
    this.errorCode = errorCode;
  }

  /** {@return the MPI function that failed ({@code "MPI_Iallreduce"})} */
  public String function() {
    return function;
  }

  /** {@return the MPI error code it returned} */
  public int errorCode() {
    return errorCode;
  }
}
