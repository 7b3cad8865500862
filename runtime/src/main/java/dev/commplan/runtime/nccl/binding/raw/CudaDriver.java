package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The functions of the CUDA driver API ({@code cuda.h}, {@code libcuda.so.1}, which the NVIDIA driver installs)
 * that CommPlan calls, as {@link Cuda} binds the runtime's: one Java method per C function, each a {@code static
 * final MethodHandle} in its own holder class called with {@code invokeExact}, each returning the {@code CUresult}
 * as an int, unchecked. CommPlan uses them for one thing: to load the PTX of its own kernels at run time (the
 * finite check's, runtime/src/main/cuda/nonfinite.cu) and launch them, so that users need no compiler. {@code
 * CUmodule}, {@code CUfunction}, {@code CUstream} (the same handle as a {@code cudaStream_t}) and device pointers
 * are passed as {@code long}; out-parameters and argument arrays are {@code MemorySegment}s.
 *
 * <p>The driver API works on the calling thread's current context: the backend calls {@code cudaSetDevice}
 * first, which (CUDA 12 and later) makes the device's primary context, the one the runtime and NCCL use,
 * current.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class CudaDriver {
  private CudaDriver() {}

  /** {@code CUDA_SUCCESS}. */
  public static final int SUCCESS = 0;

  static final List<String> FUNCTIONS = List.of("cuInit", "cuModuleLoadData", "cuModuleGetFunction", "cuLaunchKernel",
      "cuGetErrorName", "cuGetErrorString");

  static MethodHandle handle(String name, FunctionDescriptor descriptor) {
    return NativeLibrary.cudaDriver().downcall(name, descriptor);
  }

  private static final class cuInit {
    static final MethodHandle H = handle("cuInit", FunctionDescriptor.of(JAVA_INT, JAVA_INT));
  }

  /** {@code CUresult cuInit(unsigned int flags)}: flags must be 0; idempotent (the runtime has called it). */
  public static int cuInit(int flags) {
    try {
      return (int) cuInit.H.invokeExact(flags);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cuModuleLoadData {
    static final MethodHandle H = handle("cuModuleLoadData", FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS));
  }

  /**
   * {@code CUresult cuModuleLoadData(CUmodule *module, const void *image)}: loads a module into the current
   * context; {@code image} is PTX text (NUL-terminated), which the driver compiles for the context's device.
   */
  public static int cuModuleLoadData(MemorySegment module, MemorySegment image) {
    try {
      return (int) cuModuleLoadData.H.invokeExact(module, image);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cuModuleGetFunction {
    static final MethodHandle H =
        handle("cuModuleGetFunction", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, ADDRESS));
  }

  /** {@code CUresult cuModuleGetFunction(CUfunction *hfunc, CUmodule hmod, const char *name)}. */
  public static int cuModuleGetFunction(MemorySegment function, long module, MemorySegment name) {
    try {
      return (int) cuModuleGetFunction.H.invokeExact(function, module, name);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cuLaunchKernel {
    static final MethodHandle H = handle("cuLaunchKernel", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT,
        JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, ADDRESS, ADDRESS));
  }

  /**
   * {@code CUresult cuLaunchKernel(CUfunction f, unsigned int gridDimX, gridDimY, gridDimZ, blockDimX, blockDimY,
   * blockDimZ, unsigned int sharedMemBytes, CUstream hStream, void **kernelParams, void **extra)}, for the
   * one-dimensional launches CommPlan makes: a grid of {@code blocks} × 1 × 1 blocks of {@code threads} × 1 × 1,
   * no dynamic shared memory, the arguments through {@code kernelParams} ({@code extra} NULL).
   *
   * @param kernelParams one pointer per kernel parameter, each to that argument's value
   */
  public static int cuLaunchKernel(long function, int blocks, int threads, long stream, MemorySegment kernelParams) {
    try {
      return (int) cuLaunchKernel.H.invokeExact(function, blocks, 1, 1, threads, 1, 1, 0, stream, kernelParams,
          MemorySegment.NULL);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cuGetErrorName {
    static final MethodHandle H = handle("cuGetErrorName", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
  }

  /** {@code CUresult cuGetErrorName(CUresult error, const char **pStr)}. */
  public static int cuGetErrorName(int error, MemorySegment name) {
    try {
      return (int) cuGetErrorName.H.invokeExact(error, name);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class cuGetErrorString {
    static final MethodHandle H = handle("cuGetErrorString", FunctionDescriptor.of(JAVA_INT, JAVA_INT, ADDRESS));
  }

  /** {@code CUresult cuGetErrorString(CUresult error, const char **pStr)}. */
  public static int cuGetErrorString(int error, MemorySegment text) {
    try {
      return (int) cuGetErrorString.H.invokeExact(error, text);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }
}
