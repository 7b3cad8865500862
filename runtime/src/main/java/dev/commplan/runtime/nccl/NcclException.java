package dev.commplan.runtime.nccl;

import dev.commplan.runtime.CommPlanException;

/**
 * An NCCL function returned an error. Carries the function's name, the {@code ncclResult_t}, NCCL's text
 * for it ({@code ncclGetErrorString}) and NCCL's description of the last error ({@code
 * ncclGetLastError}), which usually says what was wrong.
 *
 * <p>Usually, not always: {@code ncclGetLastError} returns one buffer for the whole process (it ignores
 * its {@code comm} argument; {@code debug.cc} of NCCL 2.28 writes it on every {@code WARN} and never
 * clears it), and a call can fail without a {@code WARN}. On NCCL 2.28.3 an fp8 AVG on one rank fails in
 * {@code ncclLaunchOneRank} with {@code ncclInvalidArgument} and no warning, and the last error shown was
 * an older failure's ({@code "AllReduce : invalid type 99"}). So the message presents it as what it is,
 * NCCL's last warning in this process, which may belong to an earlier failure.
 */
public class NcclException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** The C function that failed ({@link #function()}). */
  private final String function;
  /** The result code ({@link #result()}). */
  private final NcclResult result;
  /** The result as NCCL returned it ({@link #rawCode()}). */
  private final int rawCode;
  /** NCCL's text for the result ({@link #errorString()}). */
  private final String errorString;
  /** NCCL's description of the last error ({@link #lastError()}). */
  private final String lastError;

  /**
   * Creates the exception; the message names the function, the result and NCCL's texts.
   *
   * @param function the C function that failed: {@code ncclAllReduce}
   * @param rawCode the {@code ncclResult_t} it returned
   * @param errorString {@code ncclGetErrorString(rawCode)}, or null where it could not be read
   * @param lastError {@code ncclGetLastError(comm)}, or null
   */
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
      sb.append("; NCCL's last warning in this process (ncclGetLastError; it may be from an earlier failure): ")
          .append(lastError.strip());
    }
    if (r != NcclResult.SUCCESS) {
      sb.append(" (set NCCL_DEBUG=WARN in the environment for NCCL's own log)");
    }
    return sb.toString();
  }

  /** {@return the C function that failed: {@code ncclAllReduce}} */
  public String function() {
    return function;
  }

  /** {@return the result code} */
  public NcclResult result() {
    return result;
  }

  /**
   * Whether the communicator must be aborted after this error ({@link NcclResult#isFatal()}): false only
   * for {@code ncclInvalidArgument} and {@code ncclInvalidUsage}, after which it still works.
   *
   * @return true unless the result is {@code ncclInvalidArgument} or {@code ncclInvalidUsage}
   */
  public boolean isFatal() {
    return result.isFatal();
  }

  /** {@return the result as NCCL returned it (kept when {@link #result()} is {@link NcclResult#UNKNOWN})} */
  public int rawCode() {
    return rawCode;
  }

  /** {@return {@code ncclGetErrorString(code)}, or null where it could not be read} */
  public String errorString() {
    return errorString;
  }

  /**
   * {@return {@code ncclGetLastError(comm)} when the exception was made, or null/empty where NCCL had
   * nothing to say: the process's last warning, which may be from an earlier failure than this one}
   */
  public String lastError() {
    return lastError;
  }
}
