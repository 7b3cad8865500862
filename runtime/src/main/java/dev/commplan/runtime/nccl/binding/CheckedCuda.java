package dev.commplan.runtime.nccl.binding;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.CudaGraphs;
import dev.commplan.runtime.nccl.binding.raw.CudaStreamOrderedMemory;
import dev.commplan.runtime.nccl.binding.raw.NativeAccess;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The CUDA runtime's functions as the backend calls them, over the raw bindings of {@code binding.raw}
 * ({@link Cuda}, {@link CudaGraphs}, {@link CudaStreamOrderedMemory}): every code other than success becomes
 * a {@link CudaException} with the function's name and CUDA's own name and text for the code;
 * out-parameters live in a confined arena per call. Where the caller must act before it throws (end a
 * capture, abort a communicator) or the call is on the hot path, a {@code ...Raw} method returns the
 * code and {@link #cudaError} builds the exception off the hot path.
 *
 * <p>{@link CheckedNccl} is the same for NCCL's host functions, {@link NcclDispatch} for its collectives.
 */
public final class CheckedCuda {
  private CheckedCuda() {}

  /** {@code cudaErrorMemoryAllocation}: the device could not hold an allocation. */
  public static final int ERROR_MEMORY_ALLOCATION = Cuda.ERROR_MEMORY_ALLOCATION;
  /**
   * {@code cudaStreamCaptureModeThreadLocal}: only the capturing thread is refused potentially unsafe
   * calls ({@link CudaGraphs#CAPTURE_MODE_THREAD_LOCAL}).
   */
  public static final int CAPTURE_MODE_THREAD_LOCAL = CudaGraphs.CAPTURE_MODE_THREAD_LOCAL;

  // ---------------------------------------------------------------- exceptions

  /** The exception for {@code code} returned by the CUDA runtime's {@code function}. */
  public static CudaException cudaError(String function, int code) {
    String name = null;
    String text = null;
    try {
      name = NativeAccess.cString(Cuda.cudaGetErrorName(code));
      text = NativeAccess.cString(Cuda.cudaGetErrorString(code));
      Cuda.cudaGetLastError(); // clear this thread's last error, so the next call starts clean
    } catch (RuntimeException | LinkageError e) {
      // as above
    }
    return new CudaException(function, code, name, text);
  }

  public static void cuda(String function, int code) {
    if (code != 0) {
      throw cudaError(function, code);
    }
  }

  // ---------------------------------------------------------------- CUDA

  /**
   * {@code cudaGetDeviceCount}, returned as the raw code and count: callers turn "no device" into a
   * message of their own.
   */
  public static long cudaGetDeviceCountRaw() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      int rc = Cuda.cudaGetDeviceCount(out);
      if (rc != 0) {
        Cuda.cudaGetLastError();
        return ((long) rc << 32);
      }
      return out.get(JAVA_INT, 0) & 0xffffffffL;
    }
  }

  public static void cudaSetDevice(int device) {
    cuda("cudaSetDevice", Cuda.cudaSetDevice(device));
  }

  /** {@code cudaSetDevice} on a failure or clean-up path, which goes on whatever it returns. */
  public static void cudaSetDeviceQuietly(int device) {
    Cuda.cudaSetDevice(device);
  }

  /** {@code cudaDeviceGetPCIBusId}: the device's PCI address, {@code "0000:3b:00.0"}. */
  public static String cudaPciBusId(int device) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(64);
      cuda("cudaDeviceGetPCIBusId", Cuda.cudaDeviceGetPCIBusId(out, 64, device));
      return out.getString(0);
    }
  }

  public static int cudaGetDevice() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      cuda("cudaGetDevice", Cuda.cudaGetDevice(out));
      return out.get(JAVA_INT, 0);
    }
  }

  public static long cudaMalloc(long bytes) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaMalloc", Cuda.cudaMalloc(out, bytes));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** {@code cudaMallocAsync} of {@code bytes} on {@code stream}: usable in that stream's order after this call. */
  public static long cudaMallocAsync(long bytes, long stream) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaMallocAsync", CudaStreamOrderedMemory.cudaMallocAsync(out, bytes, stream));
      return out.get(JAVA_LONG, 0);
    }
  }

  public static void cudaFreeAsync(long pointer, long stream) {
    cuda("cudaFreeAsync", CudaStreamOrderedMemory.cudaFreeAsync(pointer, stream));
  }

  /** {@code cudaMemGetInfo} of the current device: {free, total} bytes, or null if it fails. */
  public static long[] cudaMemGetInfo() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment free = arena.allocate(JAVA_LONG);
      MemorySegment total = arena.allocate(JAVA_LONG);
      if (Cuda.cudaMemGetInfo(free, total) != 0) {
        Cuda.cudaGetLastError();
        return null;
      }
      return new long[] {free.get(JAVA_LONG, 0), total.get(JAVA_LONG, 0)};
    }
  }

  public static void cudaFree(long pointer) {
    cuda("cudaFree", Cuda.cudaFree(pointer));
  }

  /** Best effort, on a failure path (the allocation's own error is the one reported). */
  public static void cudaFreeQuietly(long pointer) {
    Cuda.cudaFree(pointer);
  }

  /** {@code cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream)}; {@code src} may be on the heap. */
  public static void cudaMemcpyAsyncToDevice(long dst, MemorySegment src, long bytes, long stream) {
    cuda("cudaMemcpyAsync (host to device)", Cuda.cudaMemcpyAsyncToDevice(dst, src, bytes, stream));
  }

  /** {@code cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream)}; {@code dst} may be on the heap. */
  public static void cudaMemcpyAsyncToHost(MemorySegment dst, long src, long bytes, long stream) {
    cuda("cudaMemcpyAsync (device to host)", Cuda.cudaMemcpyAsyncToHost(dst, src, bytes, stream));
  }

  /** {@code cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream)}. */
  public static void cudaMemcpyAsyncOnDevice(long dst, long src, long bytes, long stream) {
    cuda("cudaMemcpyAsync (device to device)", Cuda.cudaMemcpyAsync(
        MemorySegment.ofAddress(dst), MemorySegment.ofAddress(src), bytes, Cuda.MEMCPY_DEVICE_TO_DEVICE, stream));
  }

  /** {@code cudaMemsetAsync(dst, value, bytes, stream)}. */
  public static void cudaMemsetAsync(long dst, int value, long bytes, long stream) {
    cuda("cudaMemsetAsync", Cuda.cudaMemsetAsync(dst, value, bytes, stream));
  }

  public static long cudaStreamCreateNonBlocking() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaStreamCreateWithFlags", Cuda.cudaStreamCreateWithFlags(out, Cuda.STREAM_NON_BLOCKING));
      return out.get(JAVA_LONG, 0);
    }
  }

  public static void cudaStreamSynchronize(long stream) {
    cuda("cudaStreamSynchronize", Cuda.cudaStreamSynchronize(stream));
  }

  public static void cudaStreamDestroy(long stream) {
    cuda("cudaStreamDestroy", Cuda.cudaStreamDestroy(stream));
  }

  /** Best effort, on a failure path: nothing useful can be done if it fails. */
  public static void cudaStreamDestroyQuietly(long stream) {
    Cuda.cudaStreamDestroy(stream);
  }

  /** {@code cudaStreamQuery}: true when all work is done, false while pending, else throws. */
  public static boolean cudaStreamQuery(long stream) {
    int rc = Cuda.cudaStreamQuery(stream);
    if (rc == 0) {
      return true;
    }
    if (rc == Cuda.ERROR_NOT_READY) {
      return false;
    }
    throw cudaError("cudaStreamQuery", rc);
  }

  public static long cudaEventCreate() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaEventCreate", Cuda.cudaEventCreate(out));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** An event for ordering only ({@code cudaEventDisableTiming}). */
  public static long cudaEventCreateDisableTiming() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaEventCreateWithFlags", Cuda.cudaEventCreateWithFlags(out, Cuda.EVENT_DISABLE_TIMING));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** {@code cudaEventQuery}: true when the work before the event is done, false while pending, else throws. */
  public static boolean cudaEventQuery(long event) {
    int rc = Cuda.cudaEventQuery(event);
    if (rc == 0) {
      return true;
    }
    if (rc == Cuda.ERROR_NOT_READY) {
      return false;
    }
    throw cudaError("cudaEventQuery", rc);
  }

  public static void cudaEventRecord(long event, long stream) {
    cuda("cudaEventRecord", Cuda.cudaEventRecord(event, stream));
  }

  /** {@code cudaEventRecord}, its code returned: for the flight recorder, which records on the hot path. */
  public static int cudaEventRecordRaw(long event, long stream) {
    return Cuda.cudaEventRecord(event, stream);
  }

  public static void cudaStreamWaitEvent(long stream, long event) {
    cuda("cudaStreamWaitEvent", Cuda.cudaStreamWaitEvent(stream, event, 0));
  }

  public static void cudaEventSynchronize(long event) {
    cuda("cudaEventSynchronize", Cuda.cudaEventSynchronize(event));
  }

  public static float cudaEventElapsedTime(long start, long end) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_FLOAT);
      cuda("cudaEventElapsedTime", Cuda.cudaEventElapsedTime(out, start, end));
      return out.get(JAVA_FLOAT, 0);
    }
  }

  public static void cudaEventDestroy(long event) {
    cuda("cudaEventDestroy", Cuda.cudaEventDestroy(event));
  }

  /** Best effort, when freeing: nothing useful can be done if it fails. */
  public static void cudaEventDestroyQuietly(long event) {
    Cuda.cudaEventDestroy(event);
  }

  // ---------------------------------------------------------------- stream capture, graphs

  /**
   * {@code cudaStreamBeginCapture} in {@code mode} ({@link #CAPTURE_MODE_THREAD_LOCAL}), its code returned:
   * the caller names the plan in the exception.
   */
  public static int cudaStreamBeginCaptureRaw(long stream, int mode) {
    return CudaGraphs.cudaStreamBeginCapture(stream, mode);
  }

  /**
   * Whether {@code stream} is being captured into a CUDA graph ({@code cudaStreamIsCapturing}; an invalidated
   * capture counts: it is still open until its owner ends it, and querying or synchronizing the stream is
   * still refused). One critical downcall, no allocation.
   *
   * @param status the out-parameter, a 4-byte segment the caller made once (this is asked on every execute)
   * @throws CudaException if CUDA cannot say (the legacy stream while a blocking stream captures)
   */
  public static boolean cudaStreamIsCapturing(long stream, MemorySegment status) {
    int rc = CudaGraphs.cudaStreamIsCapturing(stream, status);
    if (rc != 0) {
      throw cudaError("cudaStreamIsCapturing", rc);
    }
    return status.get(JAVA_INT, 0) != CudaGraphs.CAPTURE_STATUS_NONE;
  }

  /**
   * {@code cudaStreamEndCapture}: the graph, or 0 if the capture was invalidated; the code in {@code
   * rc[0]} (a failure path must still end the capture, so this never throws).
   */
  public static long cudaStreamEndCaptureRaw(long stream, int[] rc) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      rc[0] = CudaGraphs.cudaStreamEndCapture(stream, out);
      return rc[0] == 0 ? out.get(JAVA_LONG, 0) : 0;
    }
  }

  /** {@code cudaGraphInstantiateWithFlags} with no flags: the executable graph. */
  public static long cudaGraphInstantiate(long graph) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaGraphInstantiateWithFlags", CudaGraphs.cudaGraphInstantiateWithFlags(out, graph, 0L));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** Best effort: the graph was only a step on the way to the executable one (or a failed capture's). */
  public static void cudaGraphDestroyQuietly(long graph) {
    CudaGraphs.cudaGraphDestroy(graph);
  }

  public static void cudaGraphExecDestroy(long graphExec) {
    cuda("cudaGraphExecDestroy", CudaGraphs.cudaGraphExecDestroy(graphExec));
  }

  /** {@code cudaGraphLaunch}, its code returned: the caller leaves the watchdog's mark first. */
  public static int cudaGraphLaunchRaw(long graphExec, long stream) {
    return CudaGraphs.cudaGraphLaunch(graphExec, stream);
  }

  public static int cudaDriverGetVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      cuda("cudaDriverGetVersion", Cuda.cudaDriverGetVersion(out));
      return out.get(JAVA_INT, 0);
    }
  }

  public static int cudaRuntimeGetVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      cuda("cudaRuntimeGetVersion", Cuda.cudaRuntimeGetVersion(out));
      return out.get(JAVA_INT, 0);
    }
  }

  /** "13.0" from CUDA's 13000. */
  public static String cudaVersionString(int code) {
    return code / 1000 + "." + (code % 1000) / 10;
  }
}
