package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The CUDA runtime's stream-ordered allocator ({@code cuda_runtime_api.h}, CUDA 11.2 and later), as {@link
 * Cuda} binds the rest: one Java method per C function, each returning the {@code cudaError_t} unchecked.
 * Allocations come from the device's current memory pool; neither call waits for other streams' work.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class CudaStreamOrderedMemory {
  private CudaStreamOrderedMemory() {}

  static final List<String> FUNCTIONS = List.of("cudaMallocAsync", "cudaFreeAsync");

  private static final class cudaMallocAsync {
    static final MethodHandle H = Cuda.handle("cudaMallocAsync", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
  }

  /**
   * {@code cudaError_t cudaMallocAsync(void **devPtr, size_t size, cudaStream_t hStream)}: from the device's
   * current memory pool, usable in stream order after it; unlike {@code cudaMalloc} it does not wait for the
   * device's other work.
   */
  public static int cudaMallocAsync(MemorySegment devPtr, long size, long stream) {
    try {
      return (int) cudaMallocAsync.H.invokeExact(devPtr, size, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cudaFreeAsync {
    static final MethodHandle H = Cuda.handle("cudaFreeAsync", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
  }

  /** {@code cudaError_t cudaFreeAsync(void *devPtr, cudaStream_t hStream)}: freed once the stream reaches it. */
  public static int cudaFreeAsync(long devPtr, long stream) {
    try {
      return (int) cudaFreeAsync.H.invokeExact(devPtr, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }
}
