package dev.commplan.runtime.nccl;

/**
 * The {@code cudaError_t} values CommPlan names (from {@code driver_types.h}, CUDA 13.0); every other
 * code maps to {@link #OTHER}, and {@link CudaException#rawCode()} and {@link CudaException#cudaName()}
 * keep what the runtime said.
 */
public enum CudaError {
  SUCCESS(0),
  INVALID_VALUE(1),
  MEMORY_ALLOCATION(2),
  INITIALIZATION_ERROR(3),
  CUDART_UNLOADING(4),
  INVALID_DEVICE_POINTER(17),
  INSUFFICIENT_DRIVER(35),
  DEVICES_UNAVAILABLE(46),
  PRIOR_LAUNCH_FAILURE(53),
  NO_DEVICE(100),
  INVALID_DEVICE(101),
  STARTUP_FAILURE(127),
  DEVICE_UNINITIALIZED(201),
  NO_KERNEL_IMAGE_FOR_DEVICE(209),
  ECC_UNCORRECTABLE(214),
  OPERATING_SYSTEM(304),
  INVALID_RESOURCE_HANDLE(400),
  ILLEGAL_STATE(401),
  NOT_READY(600),
  ILLEGAL_ADDRESS(700),
  LAUNCH_OUT_OF_RESOURCES(701),
  LAUNCH_TIMEOUT(702),
  CONTEXT_IS_DESTROYED(709),
  ASSERT(710),
  HARDWARE_STACK_ERROR(714),
  MISALIGNED_ADDRESS(716),
  LAUNCH_FAILURE(719),
  NOT_PERMITTED(800),
  NOT_SUPPORTED(801),
  SYSTEM_NOT_READY(802),
  SYSTEM_DRIVER_MISMATCH(803),
  COMPAT_NOT_SUPPORTED_ON_DEVICE(804),
  /** The operation is not allowed while the stream is capturing (a synchronize or query of it, a graph launch into it). */
  STREAM_CAPTURE_UNSUPPORTED(900),
  /** An earlier error invalidated the stream's capture. */
  STREAM_CAPTURE_INVALIDATED(901),
  STREAM_CAPTURE_MERGE(902),
  STREAM_CAPTURE_UNMATCHED(903),
  STREAM_CAPTURE_UNJOINED(904),
  STREAM_CAPTURE_ISOLATION(905),
  /** The legacy stream was used while a blocking stream of the device captures. */
  STREAM_CAPTURE_IMPLICIT(906),
  CAPTURED_EVENT(907),
  /** A capture not begun in relaxed mode was ended on another thread. */
  STREAM_CAPTURE_WRONG_THREAD(908),
  TIMEOUT(909),
  UNKNOWN(999),
  /** A code not named here. */
  OTHER(-1);

  private final int code;

  CudaError(int code) {
    this.code = code;
  }

  /** The C value; -1 for {@link #OTHER}. */
  public int code() {
    return code;
  }

  /** The constant for a C value, {@link #OTHER} when it is not named here. */
  public static CudaError of(int code) {
    for (CudaError e : values()) {
      if (e.code == code && e != OTHER) {
        return e;
      }
    }
    return OTHER;
  }
}
