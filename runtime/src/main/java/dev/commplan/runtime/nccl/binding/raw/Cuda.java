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
  static final List<String> FUNCTIONS = List.of(
      "cudaGetDeviceCount", "cudaSetDevice", "cudaGetDevice", "cudaDeviceGetPCIBusId", "cudaMalloc", "cudaFree", "cudaMemGetInfo",
      "cudaMemcpyAsync", "cudaMemsetAsync", "cudaStreamCreateWithFlags", "cudaStreamSynchronize",
      "cudaStreamDestroy", "cudaStreamQuery", "cudaStreamWaitEvent", "cudaEventCreate", "cudaEventCreateWithFlags", "cudaEventRecord",
      "cudaEventQuery", "cudaEventSynchronize", "cudaEventElapsedTime", "cudaEventDestroy", "cudaGetErrorString", "cudaGetErrorName",
      "cudaDriverGetVersion", "cudaRuntimeGetVersion", "cudaGetLastError");

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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cudaDeviceGetPCIBusId {
    static final MethodHandle H =
        handle("cudaDeviceGetPCIBusId", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, JAVA_INT));
  }

  /**
   * {@code cudaError_t cudaDeviceGetPCIBusId(char* pciBusId, int len, int device)}: the device's PCI address
   * ({@code "0000:3b:00.0"}), the same in every process of the host whatever devices each one sees.
   */
  public static int cudaDeviceGetPCIBusId(MemorySegment pciBusId, int len, int device) {
    try {
      return (int) cudaDeviceGetPCIBusId.H.invokeExact(pciBusId, len, device);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cudaMemGetInfo {
    static final MethodHandle H = handle("cudaMemGetInfo", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  }

  /** {@code cudaError_t cudaMemGetInfo(size_t *free, size_t *total)}: the current device's memory. */
  public static int cudaMemGetInfo(MemorySegment free, MemorySegment total) {
    try {
      return (int) cudaMemGetInfo.H.invokeExact(free, total);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@code cudaErrorMemoryAllocation}: what {@code cudaMalloc} returns when the device cannot give the bytes. */
  public static final int ERROR_MEMORY_ALLOCATION = 2;

  private static final class cudaFree {
    static final MethodHandle H = handle("cudaFree", HANDLE_IN);
  }

  /** {@code cudaError_t cudaFree(void *devPtr)} */
  public static int cudaFree(long devPtr) {
    try {
      return (int) cudaFree.H.invokeExact(devPtr);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cudaMemcpyAsyncToDevice {
    static final MethodHandle H = handle("cudaMemcpyAsync",
        FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS, JAVA_LONG, JAVA_INT, JAVA_LONG),
        Linker.Option.critical(true));
  }

  private static final class cudaMemcpyAsyncToHost {
    static final MethodHandle H = handle("cudaMemcpyAsync",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG),
        Linker.Option.critical(true));
  }

  /**
   * {@link #cudaMemcpyAsync} host to device, with the device address as a {@code long}: no {@code
   * MemorySegment.ofAddress} per call, so a copy allocates nothing even where the JIT has not compiled it
   * (the agreement check's copies run every few dozen calls).
   *
   * @param dst the device address
   * @param src the host memory, heap or native
   * @param count bytes
   * @param stream the {@code cudaStream_t}
   * @return the {@code cudaError_t}
   */
  public static int cudaMemcpyAsyncToDevice(long dst, MemorySegment src, long count, long stream) {
    try {
      return (int) cudaMemcpyAsyncToDevice.H.invokeExact(dst, src, count, MEMCPY_HOST_TO_DEVICE, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /**
   * {@link #cudaMemcpyAsync} device to host, with the device address as a {@code long} (see {@link
   * #cudaMemcpyAsyncToDevice}).
   *
   * @param dst the host memory, heap or native
   * @param src the device address
   * @param count bytes
   * @param stream the {@code cudaStream_t}
   * @return the {@code cudaError_t}
   */
  public static int cudaMemcpyAsyncToHost(MemorySegment dst, long src, long count, long stream) {
    try {
      return (int) cudaMemcpyAsyncToHost.H.invokeExact(dst, src, count, MEMCPY_DEVICE_TO_HOST, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cudaStreamWaitEvent {
    static final MethodHandle H =
        handle("cudaStreamWaitEvent", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT));
  }

  /**
   * {@code cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags)}: work
   * enqueued on {@code stream} afterwards waits for the work captured by the event's most recent record.
   */
  public static int cudaStreamWaitEvent(long stream, long event, int flags) {
    try {
      return (int) cudaStreamWaitEvent.H.invokeExact(stream, event, flags);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
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
      throw NativeAccess.unreachable(t);
    }
  }
}
