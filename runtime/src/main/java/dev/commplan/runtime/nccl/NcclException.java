package dev.commplan.runtime.nccl;

import dev.commplan.runtime.CommPlanException;

/**
 * An NCCL function returned an error. Carries the function's name, the {@code ncclResult_t}, NCCL's text
 * for it ({@code ncclGetErrorString}) and NCCL's description of the last error ({@code
 * ncclGetLastError}), which usually says what was wrong.
 */
public class NcclException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  private final String function;
  private final NcclResult result;
  private final int rawCode;
  private final String errorString;
  private final String lastError;

  public NcclException(String function, int rawCode, String errorString, String lastError) {
    super(message(function, rawCode, errorString, lastError));
    this.function = function;
    this.result = NcclResult.of(rawCode);
    this.rawCode = rawCode;
    this.errorString = errorString;
    this.lastError = lastError;
  }

  static String message(String function, int rawCode, String errorString, String lastError) {
    NcclResult r = NcclResult.of(rawCode);
    StringBuilder sb = new StringBuilder()
        .append(function).append(" failed: ")
        .append(r == NcclResult.UNKNOWN ? "ncclResult_t" : r.cName()).append(" (").append(rawCode).append(')');
    if (errorString != null && !errorString.isBlank()) {
      sb.append(": ").append(errorString.strip());
    }
    if (lastError != null && !lastError.isBlank()) {
      sb.append("; NCCL's last error: ").append(lastError.strip());
    }
    if (r != NcclResult.SUCCESS) {
      sb.append(" (set NCCL_DEBUG=WARN in the environment for NCCL's own log)");
    }
    return sb.toString();
  }

  /** The C function that failed: {@code ncclAllReduce}. */
  public String function() {
    return function;
  }

  /** The result code. */
  public NcclResult result() {
    return result;
  }

  /**
   * Whether the communicator must be aborted after this error ({@link NcclResult#isFatal()}): false only
   * for {@code ncclInvalidArgument} and {@code ncclInvalidUsage}, after which it still works.
   */
  public boolean isFatal() {
    return result.isFatal();
  }

  /** The result as NCCL returned it (kept when {@link #result()} is {@link NcclResult#UNKNOWN}). */
  public int rawCode() {
    return rawCode;
  }

  /** {@code ncclGetErrorString(code)}, or null where it could not be read. */
  public String errorString() {
    return errorString;
  }

  /** {@code ncclGetLastError(comm)}, or null/empty where NCCL had nothing to say. */
  public String lastError() {
    return lastError;
  }
}
