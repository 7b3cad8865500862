package dev.commplan.samples;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * CUDA events with timing, through FFM on the CUDA runtime (libcudart.so.13): what the {@code overlap}
 * sample's timeline reads on a GPU. CommPlan's own events are for ordering only ({@code
 * cudaEventDisableTiming}), so the sample makes its own. Every return code is checked ({@link
 * CudaCallException} names the function and the error).
 */
final class CudaTiming {
  /** The property the runtime reads for the CUDA runtime's library, read here too so that both load the same. */
  static final String PROPERTY = "commplan.cudart.library";
  static final String SONAME = "libcudart.so.13";

  private static final List<String> FUNCTIONS = List.of("cudaEventCreate", "cudaEventRecord",
      "cudaEventSynchronize", "cudaEventElapsedTime", "cudaEventDestroy", "cudaGetErrorName", "cudaGetErrorString");

  private static final class Library {
    static final SampleLibrary LIBRARY = SampleLibrary.open("the overlap sample's GPU timeline (CUDA events)",
        SONAME, PROPERTY, FUNCTIONS, "install the CUDA 13 runtime (cuda-cudart-13-0)");
  }

  private static final class Calls {
    static final MethodHandle CREATE = link("cudaEventCreate", FunctionDescriptor.of(JAVA_INT, ADDRESS));
    static final MethodHandle RECORD = link("cudaEventRecord", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG));
    static final MethodHandle SYNCHRONIZE = link("cudaEventSynchronize", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    static final MethodHandle ELAPSED = link("cudaEventElapsedTime",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_LONG, JAVA_LONG));
    static final MethodHandle DESTROY = link("cudaEventDestroy", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
    static final MethodHandle ERROR_NAME = link("cudaGetErrorName", FunctionDescriptor.of(ADDRESS, JAVA_INT));
    static final MethodHandle ERROR_STRING = link("cudaGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));

    private static MethodHandle link(String function, FunctionDescriptor descriptor) {
      return Library.LIBRARY.downcall(function, descriptor);
    }
  }

  private CudaTiming() {}

  /** Null when the CUDA runtime can be used here; else what was tried and what to do. */
  static String unavailableReason() {
    return Library.LIBRARY.problem();
  }

  /** A new event with timing, on the calling thread's current device. */
  static long create() {
    requireLibrary();
    try (Arena call = Arena.ofConfined()) {
      MemorySegment out = call.allocate(JAVA_LONG);
      check("cudaEventCreate", (int) Calls.CREATE.invokeExact(out));
      return out.get(JAVA_LONG, 0);
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** Records {@code event} on {@code cudaStream}: it completes when the work enqueued there so far has. */
  static void record(long event, long cudaStream) {
    try {
      check("cudaEventRecord", (int) Calls.RECORD.invokeExact(event, cudaStream));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  /** Milliseconds from {@code start} to {@code end}, both recorded; waits until {@code end} has completed. */
  static double elapsedMillis(long start, long end) {
    try (Arena call = Arena.ofConfined()) {
      check("cudaEventSynchronize", (int) Calls.SYNCHRONIZE.invokeExact(end));
      MemorySegment ms = call.allocate(JAVA_FLOAT);
      check("cudaEventElapsedTime", (int) Calls.ELAPSED.invokeExact(ms, start, end));
      return ms.get(JAVA_FLOAT, 0);
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  static void destroy(long event) {
    try {
      check("cudaEventDestroy", (int) Calls.DESTROY.invokeExact(event));
    } catch (Throwable t) {
      throw SampleLibrary.rethrown(t);
    }
  }

  private static void requireLibrary() {
    String problem = unavailableReason();
    if (problem != null) {
      throw new IllegalStateException(problem);
    }
  }

  private static void check(String function, int error) throws Throwable {
    if (error != 0) {
      throw new CudaCallException(function + " failed: " + SampleLibrary.cString((MemorySegment) Calls.ERROR_NAME
          .invokeExact(error)) + " (" + error + "), " + SampleLibrary.cString((MemorySegment) Calls.ERROR_STRING
          .invokeExact(error)));
    }
  }
}
