package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The CUDA runtime's stream-capture and graph functions ({@code cuda_runtime_api.h}, CUDA 13.0), as
 * {@link Cuda} binds the rest: one Java method per C function, a {@code static final MethodHandle} in a
 * holder class each, the {@code cudaError_t} returned unchecked.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class CudaGraphs {
  private CudaGraphs() {}

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

  static final List<String> FUNCTIONS = List.of("cudaStreamBeginCapture", "cudaStreamEndCapture",
      "cudaStreamIsCapturing", "cudaGraphInstantiateWithFlags", "cudaGraphLaunch", "cudaGraphExecDestroy",
      "cudaGraphDestroy");

  private static MethodHandle handle(String name, FunctionDescriptor descriptor, Linker.Option... options) {
    return Cuda.handle(name, descriptor, options);
  }

  private static final FunctionDescriptor HANDLE_IN = FunctionDescriptor.of(JAVA_INT, JAVA_LONG);

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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
    }
  }

}
