package dev.commplan.runtime.nccl;

/**
 * The {@code cudaError_t} values CommPlan names (from {@code driver_types.h}, CUDA 13.0); every other
 * code maps to {@link #OTHER}, and {@link CudaException#rawCode()} and {@link CudaException#cudaName()}
 * keep what the runtime said.
 */
public enum CudaError {
  /** {@code cudaSuccess}: no error. */
  SUCCESS(0),
  /**
   * {@code cudaErrorInvalidValue}: an argument is out of range (a null pointer, a size or flag the call does
   * not take).
   */
  INVALID_VALUE(1),
  /** {@code cudaErrorMemoryAllocation}: the device (or pinned host memory) could not hold the allocation. */
  MEMORY_ALLOCATION(2),
  /** {@code cudaErrorInitializationError}: the CUDA driver and runtime could not be initialized. */
  INITIALIZATION_ERROR(3),
  /**
   * {@code cudaErrorCudartUnloading}: the call came while the CUDA runtime was unloading (at process exit).
   */
  CUDART_UNLOADING(4),
  /** {@code cudaErrorInvalidDevicePointer}: a pointer is not a device pointer (older runtimes). */
  INVALID_DEVICE_POINTER(17),
  /**
   * {@code cudaErrorInsufficientDriver}: the installed NVIDIA driver is older than this CUDA runtime needs.
   */
  INSUFFICIENT_DRIVER(35),
  /**
   * {@code cudaErrorDevicesUnavailable}: every device is busy or unavailable (an exclusive-process device
   * another process holds, say).
   */
  DEVICES_UNAVAILABLE(46),
  /** {@code cudaErrorPriorLaunchFailure}: an earlier kernel launch failed (older runtimes). */
  PRIOR_LAUNCH_FAILURE(53),
  /**
   * {@code cudaErrorNoDevice}: no CUDA-capable device was found (none present, or none visible through
   * {@code CUDA_VISIBLE_DEVICES}).
   */
  NO_DEVICE(100),
  /** {@code cudaErrorInvalidDevice}: the device ordinal is not a device of this process. */
  INVALID_DEVICE(101),
  /** {@code cudaErrorStartupFailure}: the CUDA runtime failed inside its own start-up. */
  STARTUP_FAILURE(127),
  /**
   * {@code cudaErrorDeviceUninitialized}: the calling thread has no valid context (it was never made, or was
   * destroyed).
   */
  DEVICE_UNINITIALIZED(201),
  /**
   * {@code cudaErrorNoKernelImageForDevice}: no kernel in the library was built for this device's
   * architecture.
   */
  NO_KERNEL_IMAGE_FOR_DEVICE(209),
  /**
   * {@code cudaErrorECCUncorrectable}: the device found an uncorrectable ECC memory error; the context is
   * unusable.
   */
  ECC_UNCORRECTABLE(214),
  /** {@code cudaErrorOperatingSystem}: an operating-system call made by the runtime failed. */
  OPERATING_SYSTEM(304),
  /**
   * {@code cudaErrorInvalidResourceHandle}: a stream, event or graph handle is not valid (destroyed, or of
   * another device).
   */
  INVALID_RESOURCE_HANDLE(400),
  /** {@code cudaErrorIllegalState}: the resource is not in a state that allows the call. */
  ILLEGAL_STATE(401),
  /** {@code cudaErrorNotReady}: work is still running (what a query returns; not a failure). */
  NOT_READY(600),
  /**
   * {@code cudaErrorIllegalAddress}: a kernel accessed an illegal address; sticky: the context is unusable
   * until the process exits.
   */
  ILLEGAL_ADDRESS(700),
  /**
   * {@code cudaErrorLaunchOutOfResources}: a launch asked for more registers or shared memory than the device
   * has.
   */
  LAUNCH_OUT_OF_RESOURCES(701),
  /**
   * {@code cudaErrorLaunchTimeout}: a kernel ran past the display watchdog's limit and was killed; the
   * context is unusable.
   */
  LAUNCH_TIMEOUT(702),
  /** {@code cudaErrorContextIsDestroyed}: the context the call needs was destroyed. */
  CONTEXT_IS_DESTROYED(709),
  /**
   * {@code cudaErrorAssert}: a device-side assert failed; the context is unusable until the process exits.
   */
  ASSERT(710),
  /**
   * {@code cudaErrorHardwareStackError}: a kernel corrupted or overflowed its stack; the context is unusable.
   */
  HARDWARE_STACK_ERROR(714),
  /**
   * {@code cudaErrorMisalignedAddress}: a kernel loaded or stored at a misaligned address; the context is
   * unusable.
   */
  MISALIGNED_ADDRESS(716),
  /**
   * {@code cudaErrorLaunchFailure}: a kernel failed on the device; the context is unusable until the process
   * exits.
   */
  LAUNCH_FAILURE(719),
  /** {@code cudaErrorNotPermitted}: the operation is not permitted. */
  NOT_PERMITTED(800),
  /** {@code cudaErrorNotSupported}: the operation is not supported on this system or device. */
  NOT_SUPPORTED(801),
  /**
   * {@code cudaErrorSystemNotReady}: the system is not ready for CUDA (on NVSwitch systems, often the fabric
   * manager is not running).
   */
  SYSTEM_NOT_READY(802),
  /**
   * {@code cudaErrorSystemDriverMismatch}: the display driver and the CUDA driver are of different versions.
   */
  SYSTEM_DRIVER_MISMATCH(803),
  /**
   * {@code cudaErrorCompatNotSupportedOnDevice}: the CUDA forward-compatibility package does not support this
   * device.
   */
  COMPAT_NOT_SUPPORTED_ON_DEVICE(804),
  /** The operation is not allowed while the stream is capturing (a synchronize or query of it, a graph launch into it). */
  STREAM_CAPTURE_UNSUPPORTED(900),
  /** An earlier error invalidated the stream's capture. */
  STREAM_CAPTURE_INVALIDATED(901),
  /** {@code cudaErrorStreamCaptureMerge}: the call would merge two independent stream captures. */
  STREAM_CAPTURE_MERGE(902),
  /** {@code cudaErrorStreamCaptureUnmatched}: the capture was not begun on this stream. */
  STREAM_CAPTURE_UNMATCHED(903),
  /**
   * {@code cudaErrorStreamCaptureUnjoined}: the capture forked onto another stream that was not joined back
   * before it ended.
   */
  STREAM_CAPTURE_UNJOINED(904),
  /** {@code cudaErrorStreamCaptureIsolation}: a dependency would cross the capture boundary. */
  STREAM_CAPTURE_ISOLATION(905),
  /** The legacy stream was used while a blocking stream of the device captures. */
  STREAM_CAPTURE_IMPLICIT(906),
  /**
   * {@code cudaErrorCapturedEvent}: the call is not allowed on an event last recorded in a capturing stream.
   */
  CAPTURED_EVENT(907),
  /** A capture not begun in relaxed mode was ended on another thread. */
  STREAM_CAPTURE_WRONG_THREAD(908),
  /** {@code cudaErrorTimeout}: a wait timed out. */
  TIMEOUT(909),
  /** {@code cudaErrorUnknown}: an unknown internal error. */
  UNKNOWN(999),
  /** A code not named here. */
  OTHER(-1);

  private final int code;

  CudaError(int code) {
    this.code = code;
  }

  /** {@return the C value; -1 for {@link #OTHER}} */
  public int code() {
    return code;
  }

  /**
   * The constant for a C value, {@link #OTHER} when it is not named here.
   *
   * @param code a {@code cudaError_t} value
   * @return the constant; never null
   */
  public static CudaError of(int code) {
    for (CudaError e : values()) {
      if (e.code == code && e != OTHER) {
        return e;
      }
    }
    return OTHER;
  }
}
