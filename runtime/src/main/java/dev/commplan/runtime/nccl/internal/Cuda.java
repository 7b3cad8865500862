package dev.commplan.runtime.nccl.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The functions of the CUDA runtime ({@code cuda_runtime_api.h}, CUDA 13.0) that CommPlan calls, one
 * Java method per C function, each a {@code static final MethodHandle} in its own holder class called
 * with {@code invokeExact}. Each returns the {@code cudaError_t} as an int, unchecked.
 *
 * <p>Device pointers, {@code cudaStream_t} and {@code cudaEvent_t} are passed as {@code long} (same
 * register on the 64-bit Linux ABIs); out-parameters are {@code MemorySegment}s. {@link #cudaMemcpyAsync}
 * is linked with {@link Linker.Option#critical(boolean) critical(true)} so that it accepts heap segments
 * (Java arrays) directly: see {@code HostCopies} for why. There is no binding of the legacy-stream
 * {@code cudaMemcpy} or {@code cudaMemset} on purpose: work on the legacy stream is not ordered with the
 * non-blocking streams collectives run on ({@code HostCopies} says what is used instead).
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class Cuda {
  private Cuda() {}

  /** {@code cudaStreamNonBlocking}: the stream does not synchronize with the legacy NULL stream. */
  public static final int STREAM_NON_BLOCKING = 0x01;
  /** {@code cudaMemcpyHostToDevice}. */
  public static final int MEMCPY_HOST_TO_DEVICE = 1;
  /** {@code cudaMemcpyDeviceToHost}. */
  public static final int MEMCPY_DEVICE_TO_HOST = 2;
  /** {@code cudaMemcpyDeviceToDevice}. */
  public static final int MEMCPY_DEVICE_TO_DEVICE = 3;
  /** {@code cudaErrorNotReady}: what {@code cudaStreamQuery} returns while work is pending. */
  public static final int ERROR_NOT_READY = 600;
  /** {@code cudaErrorNoDevice}. */
  public static final int ERROR_NO_DEVICE = 100;
  /** {@code cudaEventDisableTiming}: an event for ordering only, cheaper to record and query. */
  public static final int EVENT_DISABLE_TIMING = 0x02;
  /**
   * {@code cudaStreamCaptureModeGlobal}: while any thread captures in this mode, potentially unsafe calls
   * ({@code cudaMalloc}, ...) from every thread are refused. CUDA's default.
   */
  public static final int CAPTURE_MODE_GLOBAL = 0;
  /**
   * {@code cudaStreamCaptureModeThreadLocal}: only the capturing thread is refused potentially unsafe
   * calls; other threads are unaffected. What NCCL's user guide asks for when one process drives several
   * GPUs from several threads (the NCCL backend's cluster), and what {@code NcclCompiledSchedule} uses.
   */
  public static final int CAPTURE_MODE_THREAD_LOCAL = 1;
  /** {@code cudaStreamCaptureModeRelaxed}: no thread is refused anything; mistakes go unnoticed. */
  public static final int CAPTURE_MODE_RELAXED = 2;
  /** {@code cudaStreamCaptureStatusNone}: the stream is not capturing. */
  public static final int CAPTURE_STATUS_NONE = 0;
  /** {@code cudaStreamCaptureStatusActive}: the stream is capturing. */
  public static final int CAPTURE_STATUS_ACTIVE = 1;
  /** {@code cudaStreamCaptureStatusInvalidated}: an error invalidated the stream's capture, which must still be ended. */
  public static final int CAPTURE_STATUS_INVALIDATED = 2;

  static final List<String> FUNCTIONS = List.of(
      "cudaGetDeviceCount", "cudaSetDevice", "cudaGetDevice", "cudaMalloc", "cudaFree",
      "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamCreateWithFlags", "cudaStreamSynchronize",
      "cudaStreamDestroy", "cudaStreamQuery", "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventRecord",
      "cudaEventQuery", "cudaEventSynchronize", "cudaEventElapsedTime", "cudaEventDestroy", "cudaGetErrorString", "cudaGetErrorName",
      "cudaDriverGetVersion", "cudaRuntimeGetVersion", "cudaGetLastError", "cudaStreamBeginCapture",
      "cudaStreamEndCapture", "cudaStreamIsCapturing", "cudaGraphInstantiateWithFlags", "cudaGraphLaunch",
      "cudaGraphExecDestroy", "cudaGraphDestroy");

  static MethodHandle handle(String name, FunctionDescriptor descriptor, Linker.Option... options) {
    return NativeLibrary.cudart().downcall(name, descriptor, options);
  }

  private static final FunctionDescriptor INT_OUT = FunctionDescriptor.of(JAVA_INT, ADDRESS);
  private static final FunctionDescriptor HANDLE_IN = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);

  // ---------------------------------------------------------------- devices

  private static final class cudaGetDeviceCount {
    static final MethodHandle H = handle("cudaGetDeviceCount", INT_OUT);
  }

  /** {@code cudaError_t cudaGetDeviceCount(int *count)} */
  public static int cudaGetDeviceCount(MemorySegment count) {
    try {
      return (int) cudaGetDeviceCount.H.invokeExact(count);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaSetDevice {
    static final MethodHandle H = handle("cudaSetDevice", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  }

  /** {@code cudaError_t cudaSetDevice(int device)} */
  public static int cudaSetDevice(int device) {
    try {
      return (int) cudaSetDevice.H.invokeExact(device);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGetDevice {
    static final MethodHandle H = handle("cudaGetDevice", INT_OUT);
  }

  /** {@code cudaError_t cudaGetDevice(int *device)} */
  public static int cudaGetDevice(MemorySegment device) {
    try {
      return (int) cudaGetDevice.H.invokeExact(device);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- memory

  private static final class cudaMalloc {
    static final MethodHandle H = handle("cudaMalloc", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG));
  }

  /** {@code cudaError_t cudaMalloc(void **devPtr, size_t size)} */
  public static int cudaMalloc(MemorySegment devPtr, long size) {
    try {
      return (int) cudaMalloc.H.invokeExact(devPtr, size);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaFree {
    static final MethodHandle H = handle("cudaFree", HANDLE_IN);
  }

  /** {@code cudaError_t cudaFree(void *devPtr)} */
  public static int cudaFree(long devPtr) {
    try {
      return (int) cudaFree.H.invokeExact(devPtr);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaMemcpyAsync {
    static final MethodHandle H = handle("cudaMemcpyAsync",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG),
        Linker.Option.critical(true));
  }

  /**
   * {@code cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t count, enum cudaMemcpyKind kind,
   * cudaStream_t stream)}. Linked critical with heap access: the host side may be a heap segment (a Java
   * array), device addresses are passed as {@code MemorySegment.ofAddress}. The garbage collector waits
   * while it runs, so callers keep each call short (bounded chunks). For pageable host memory CUDA stages
   * the bytes before it returns, so the array is not read after the call; see {@code HostCopies} for
   * when the device has them.
   */
  public static int cudaMemcpyAsync(MemorySegment dst, MemorySegment src, long count, int kind, long stream) {
    try {
      return (int) cudaMemcpyAsync.H.invokeExact(dst, src, count, kind, stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaMemsetAsync {
    static final MethodHandle H =
        handle("cudaMemsetAsync", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code cudaError_t cudaMemsetAsync(void *devPtr, int value, size_t count, cudaStream_t stream)} */
  public static int cudaMemsetAsync(long devPtr, int value, long count, long stream) {
    try {
      return (int) cudaMemsetAsync.H.invokeExact(devPtr, value, count, stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- streams

  private static final class cudaStreamCreateWithFlags {
    static final MethodHandle H =
        handle("cudaStreamCreateWithFlags", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  }

  /** {@code cudaError_t cudaStreamCreateWithFlags(cudaStream_t *pStream, unsigned int flags)} */
  public static int cudaStreamCreateWithFlags(MemorySegment pStream, int flags) {
    try {
      return (int) cudaStreamCreateWithFlags.H.invokeExact(pStream, flags);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaStreamSynchronize {
    static final MethodHandle H = handle("cudaStreamSynchronize", HANDLE_IN);
  }

  /** {@code cudaError_t cudaStreamSynchronize(cudaStream_t stream)} */
  public static int cudaStreamSynchronize(long stream) {
    try {
      return (int) cudaStreamSynchronize.H.invokeExact(stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaStreamDestroy {
    static final MethodHandle H = handle("cudaStreamDestroy", HANDLE_IN);
  }

  /** {@code cudaError_t cudaStreamDestroy(cudaStream_t stream)} */
  public static int cudaStreamDestroy(long stream) {
    try {
      return (int) cudaStreamDestroy.H.invokeExact(stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaStreamQuery {
    static final MethodHandle H = handle("cudaStreamQuery", HANDLE_IN);
  }

  /** {@code cudaError_t cudaStreamQuery(cudaStream_t stream)}: 0 when done, 600 while work is pending. */
  public static int cudaStreamQuery(long stream) {
    try {
      return (int) cudaStreamQuery.H.invokeExact(stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- stream capture, graphs

  private static final class cudaStreamBeginCapture {
    static final MethodHandle H =
        handle("cudaStreamBeginCapture", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT));
  }

  /**
   * {@code cudaError_t cudaStreamBeginCapture(cudaStream_t stream, enum cudaStreamCaptureMode mode)}:
   * work enqueued on the stream from now on is recorded, not run. Not on the legacy stream; not on a
   * stream that is already capturing.
   */
  public static int cudaStreamBeginCapture(long stream, int mode) {
    try {
      return (int) cudaStreamBeginCapture.H.invokeExact(stream, mode);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaStreamEndCapture {
    static final MethodHandle H =
        handle("cudaStreamEndCapture", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /**
   * {@code cudaError_t cudaStreamEndCapture(cudaStream_t stream, cudaGraph_t *pGraph)}: the recorded
   * graph, or NULL if the capture was invalidated. From the thread that began it, unless the mode was
   * relaxed.
   */
  public static int cudaStreamEndCapture(long stream, MemorySegment pGraph) {
    try {
      return (int) cudaStreamEndCapture.H.invokeExact(stream, pGraph);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaStreamIsCapturing {
    static final MethodHandle H = handle("cudaStreamIsCapturing",
        FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS), Linker.Option.critical(false));
  }

  /**
   * {@code cudaError_t cudaStreamIsCapturing(cudaStream_t stream, enum cudaStreamCaptureStatus
   * *pCaptureStatus)}: {@link #CAPTURE_STATUS_NONE}, {@link #CAPTURE_STATUS_ACTIVE} or {@link
   * #CAPTURE_STATUS_INVALIDATED}. Asked on every plan execute, so linked {@code critical(false)}: it only
   * reads the stream's state (no waiting, no callback into Java), and the critical downcall skips the
   * thread-state transition. On the legacy stream while a blocking stream of the device captures, it
   * returns {@code cudaErrorStreamCaptureImplicit} (906).
   */
  public static int cudaStreamIsCapturing(long stream, MemorySegment pCaptureStatus) {
    try {
      return (int) cudaStreamIsCapturing.H.invokeExact(stream, pCaptureStatus);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGraphInstantiateWithFlags {
    static final MethodHandle H = handle("cudaGraphInstantiateWithFlags",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
  }

  /**
   * {@code cudaError_t cudaGraphInstantiateWithFlags(cudaGraphExec_t *pGraphExec, cudaGraph_t graph,
   * unsigned long long flags)}: the executable graph, independent of {@code graph} afterwards (which may
   * then be destroyed).
   */
  public static int cudaGraphInstantiateWithFlags(MemorySegment pGraphExec, long graph, long flags) {
    try {
      return (int) cudaGraphInstantiateWithFlags.H.invokeExact(pGraphExec, graph, flags);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGraphLaunch {
    static final MethodHandle H = handle("cudaGraphLaunch", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /**
   * {@code cudaError_t cudaGraphLaunch(cudaGraphExec_t graphExec, cudaStream_t stream)}: enqueues the
   * whole graph, ordered after earlier work on the stream and earlier launches of the graph. A plain
   * downcall: it may wait for room in the launch queue.
   */
  public static int cudaGraphLaunch(long graphExec, long stream) {
    try {
      return (int) cudaGraphLaunch.H.invokeExact(graphExec, stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGraphExecDestroy {
    static final MethodHandle H = handle("cudaGraphExecDestroy", HANDLE_IN);
  }

  /**
   * {@code cudaError_t cudaGraphExecDestroy(cudaGraphExec_t graphExec)}: a launch still in flight is not
   * stopped; the graph is freed once it completes.
   */
  public static int cudaGraphExecDestroy(long graphExec) {
    try {
      return (int) cudaGraphExecDestroy.H.invokeExact(graphExec);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGraphDestroy {
    static final MethodHandle H = handle("cudaGraphDestroy", HANDLE_IN);
  }

  /** {@code cudaError_t cudaGraphDestroy(cudaGraph_t graph)} */
  public static int cudaGraphDestroy(long graph) {
    try {
      return (int) cudaGraphDestroy.H.invokeExact(graph);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- events

  private static final class cudaEventCreate {
    static final MethodHandle H = handle("cudaEventCreate", INT_OUT);
  }

  /** {@code cudaError_t cudaEventCreate(cudaEvent_t *event)} */
  public static int cudaEventCreate(MemorySegment event) {
    try {
      return (int) cudaEventCreate.H.invokeExact(event);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaEventCreateWithFlags {
    static final MethodHandle H =
        handle("cudaEventCreateWithFlags", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT));
  }

  /** {@code cudaError_t cudaEventCreateWithFlags(cudaEvent_t *event, unsigned int flags)} */
  public static int cudaEventCreateWithFlags(MemorySegment event, int flags) {
    try {
      return (int) cudaEventCreateWithFlags.H.invokeExact(event, flags);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaEventQuery {
    static final MethodHandle H = handle("cudaEventQuery", HANDLE_IN);
  }

  /**
   * {@code cudaError_t cudaEventQuery(cudaEvent_t event)}: 0 once the work before the event's last record
   * has finished (or the event was never recorded), 600 ({@link #ERROR_NOT_READY}) while it is pending.
   */
  public static int cudaEventQuery(long event) {
    try {
      return (int) cudaEventQuery.H.invokeExact(event);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaEventRecord {
    static final MethodHandle H =
        handle("cudaEventRecord", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream)} */
  public static int cudaEventRecord(long event, long stream) {
    try {
      return (int) cudaEventRecord.H.invokeExact(event, stream);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaEventSynchronize {
    static final MethodHandle H = handle("cudaEventSynchronize", HANDLE_IN);
  }

  /** {@code cudaError_t cudaEventSynchronize(cudaEvent_t event)} */
  public static int cudaEventSynchronize(long event) {
    try {
      return (int) cudaEventSynchronize.H.invokeExact(event);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaEventElapsedTime {
    static final MethodHandle H =
        handle("cudaEventElapsedTime", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
  }

  /** {@code cudaError_t cudaEventElapsedTime(float *ms, cudaEvent_t start, cudaEvent_t end)} */
  public static int cudaEventElapsedTime(MemorySegment ms, long start, long end) {
    try {
      return (int) cudaEventElapsedTime.H.invokeExact(ms, start, end);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaEventDestroy {
    static final MethodHandle H = handle("cudaEventDestroy", HANDLE_IN);
  }

  /** {@code cudaError_t cudaEventDestroy(cudaEvent_t event)} */
  public static int cudaEventDestroy(long event) {
    try {
      return (int) cudaEventDestroy.H.invokeExact(event);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- errors, versions

  private static final class cudaGetErrorString {
    static final MethodHandle H = handle("cudaGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
  }

  /** {@code const char* cudaGetErrorString(cudaError_t error)} */
  public static MemorySegment cudaGetErrorString(int error) {
    try {
      return (MemorySegment) cudaGetErrorString.H.invokeExact(error);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGetErrorName {
    static final MethodHandle H = handle("cudaGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));
  }

  /** {@code const char* cudaGetErrorName(cudaError_t error)} */
  public static MemorySegment cudaGetErrorName(int error) {
    try {
      return (MemorySegment) cudaGetErrorName.H.invokeExact(error);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaDriverGetVersion {
    static final MethodHandle H = handle("cudaDriverGetVersion", INT_OUT);
  }

  /** {@code cudaError_t cudaDriverGetVersion(int *driverVersion)}: 0 when no driver is installed. */
  public static int cudaDriverGetVersion(MemorySegment driverVersion) {
    try {
      return (int) cudaDriverGetVersion.H.invokeExact(driverVersion);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaRuntimeGetVersion {
    static final MethodHandle H = handle("cudaRuntimeGetVersion", INT_OUT);
  }

  /** {@code cudaError_t cudaRuntimeGetVersion(int *runtimeVersion)} */
  public static int cudaRuntimeGetVersion(MemorySegment runtimeVersion) {
    try {
      return (int) cudaRuntimeGetVersion.H.invokeExact(runtimeVersion);
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }

  private static final class cudaGetLastError {
    static final MethodHandle H = handle("cudaGetLastError", FunctionDescriptor.of(JAVA_INT));
  }

  /** {@code cudaError_t cudaGetLastError(void)}: returns and clears the last error of this thread. */
  public static int cudaGetLastError() {
    try {
      return (int) cudaGetLastError.H.invokeExact();
    } catch (Throwable t) {
      throw Nccl.unreachable(t);
    }
  }
}
