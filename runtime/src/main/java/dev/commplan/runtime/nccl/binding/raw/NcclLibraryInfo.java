package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

/**
 * What the NCCL library says about itself: its version, and the text of its errors ({@code nccl.h}),
 * bound as {@link NcclSymbols} says.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class NcclLibraryInfo {
  private NcclLibraryInfo() {}

  private static final class ncclGetVersion {
    static final MethodHandle H = NcclSymbols.handle("ncclGetVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  }

  /** {@code ncclResult_t ncclGetVersion(int *version)} */
  public static int ncclGetVersion(MemorySegment version) {
    try {
      return (int) ncclGetVersion.H.invokeExact(version);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclGetErrorString {
    static final MethodHandle H = NcclSymbols.handle("ncclGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
  }

  /** {@code const char* ncclGetErrorString(ncclResult_t result)} */
  public static MemorySegment ncclGetErrorString(int result) {
    try {
      return (MemorySegment) ncclGetErrorString.H.invokeExact(result);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclGetLastError {
    // Not in every NCCL 2: it came with 2.13 (PyTorch gates it on NCCL_MINOR >= 13 in c10d/NCCLUtils.hpp;
    // the NCCL user guide lists it from 2.13.4 on):
    // looked up if present, null on older libraries.
    static final MethodHandle H =
        NcclSymbols.handleIfPresent("ncclGetLastError", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
  }

  /** Whether the loaded NCCL has {@code ncclGetLastError}. */
  public static boolean hasGetLastError() {
    return ncclGetLastError.H != null;
  }

  /**
   * {@code const char* ncclGetLastError(ncclComm_t comm)}; {@code comm} may be 0 (NULL). Returns NULL
   * where the library lacks the function.
   */
  public static MemorySegment ncclGetLastError(long comm) {
    if (ncclGetLastError.H == null) {
      return MemorySegment.NULL;
    }
    try {
      return (MemorySegment) ncclGetLastError.H.invokeExact(comm);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }
}
