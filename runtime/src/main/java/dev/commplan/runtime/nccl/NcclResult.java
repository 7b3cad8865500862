package dev.commplan.runtime.nccl;

/**
 * NCCL's {@code ncclResult_t}, with the values of {@code nccl.h} (NCCL 2.28: {@code src/nccl.h.in} of
 * NVIDIA/nccl; {@code ncclNumResults} is a count, not a result). A code this enum does not know maps to
 * {@link #UNKNOWN}; {@link NcclException#rawCode()} keeps it.
 *
 * <p>What a failure means for the communicator ({@link #isFatal()}): NCCL checks arguments and usage on
 * the calling thread before it enqueues anything, so after {@link #INVALID_ARGUMENT} or {@link
 * #INVALID_USAGE} nothing was issued and the communicator still works. Every other error (a CUDA or
 * system call failed, an internal error, a remote peer failed, a timeout, or a code this version does
 * not know) leaves collectives possibly half issued across the ranks: the communicator must be aborted
 * ({@code ncclCommAbort}) and made anew.
 */
public enum NcclResult {
  /** {@code ncclSuccess}: no error. */
  SUCCESS(0, "ncclSuccess"),
  /** {@code ncclUnhandledCudaError}: a CUDA call inside NCCL failed. */
  UNHANDLED_CUDA_ERROR(1, "ncclUnhandledCudaError"),
  /**
   * {@code ncclSystemError}: a system call failed (sockets, shared memory, memory); often the network or the
   * container's limits.
   */
  SYSTEM_ERROR(2, "ncclSystemError"),
  /** {@code ncclInternalError}: an internal check of NCCL failed (a bug, or a peer that misbehaved). */
  INTERNAL_ERROR(3, "ncclInternalError"),
  /**
   * {@code ncclInvalidArgument}: an argument was wrong (a null or non-device pointer, a bad type, op or
   * count); nothing was issued.
   */
  INVALID_ARGUMENT(4, "ncclInvalidArgument"),
  /**
   * {@code ncclInvalidUsage}: a call out of place (a group misused, a closed communicator); nothing was
   * issued.
   */
  INVALID_USAGE(5, "ncclInvalidUsage"),
  /** {@code ncclRemoteError}: a peer failed or the connection to it broke. */
  REMOTE_ERROR(6, "ncclRemoteError"),
  /** {@code ncclInProgress}: a non-blocking communicator's call is still running (not an error). */
  IN_PROGRESS(7, "ncclInProgress"),
  /** {@code ncclTimeout = 8}, in the newest nccl.h; older NCCL never returns it. */
  TIMEOUT(8, "ncclTimeout"),
  /** A code this version of CommPlan does not know. */
  UNKNOWN(-1, "unknown ncclResult_t");

  private static final NcclResult[] BY_CODE = {
    SUCCESS, UNHANDLED_CUDA_ERROR, SYSTEM_ERROR, INTERNAL_ERROR, INVALID_ARGUMENT, INVALID_USAGE,
    REMOTE_ERROR, IN_PROGRESS, TIMEOUT
  };

  private final int code;
  private final String cName;

  NcclResult(int code, String cName) {
    this.code = code;
    this.cName = cName;
  }

  /** {@return the C value; -1 for {@link #UNKNOWN}} */
  public int code() {
    return code;
  }

  /** {@return the C name: {@code ncclInvalidArgument}} */
  public String cName() {
    return cName;
  }

  /**
   * {@return whether this is an error: anything but {@link #SUCCESS} and {@link #IN_PROGRESS} (a non-blocking call still running)}
   */
  public boolean isError() {
    return this != SUCCESS && this != IN_PROGRESS;
  }

  /**
   * Whether this error leaves the communicator unusable, so that it must be aborted: every error but
   * {@link #INVALID_ARGUMENT} and {@link #INVALID_USAGE} (see the class comment). False for {@link
   * #SUCCESS} and {@link #IN_PROGRESS}; true for {@link #UNKNOWN}.
   *
   * @return true when the communicator must be aborted
   */
  public boolean isFatal() {
    return isError() && this != INVALID_ARGUMENT && this != INVALID_USAGE;
  }

  /**
   * The constant for a C value, {@link #UNKNOWN} when there is none.
   *
   * @param code an {@code ncclResult_t} value
   * @return the constant; never null
   */
  public static NcclResult of(int code) {
    return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : UNKNOWN;
  }
}
