package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;

/**
 * The communicators and groups of {@code nccl.h}: unique ids, making communicators (with and without a
 * {@link NcclConfig}), splitting, asking them their rank, size and device, destroying and aborting them,
 * and {@code ncclGroupStart}/{@code ncclGroupEnd}. Bound as {@link NcclSymbols} says; {@code ncclUniqueId}
 * is a struct of 128 chars passed by value.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class NcclCommunicators {
  private NcclCommunicators() {}

  /** {@code NCCL_UNIQUE_ID_BYTES}. */
  public static final int UNIQUE_ID_BYTES = 128;

  /** {@code typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;} */
  public static final StructLayout UNIQUE_ID =
      MemoryLayout.structLayout(MemoryLayout.sequenceLayout(UNIQUE_ID_BYTES, JAVA_BYTE).withName("internal"))
          .withName("ncclUniqueId");

  // ---------------------------------------------------------------- making and ending communicators

  private static final class ncclGetUniqueId {
    static final MethodHandle H = NcclSymbols.handle("ncclGetUniqueId", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  }

  /** {@code ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId)} */
  public static int ncclGetUniqueId(MemorySegment uniqueId) {
    try {
      return (int) ncclGetUniqueId.H.invokeExact(uniqueId);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommInitRank {
    static final MethodHandle H = NcclSymbols.handle("ncclCommInitRank",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT));
  }

  /** {@code ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)} */
  public static int ncclCommInitRank(MemorySegment comm, int nranks, MemorySegment commId, int rank) {
    try {
      return (int) ncclCommInitRank.H.invokeExact(comm, nranks, commId, rank);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommInitRankConfig {
    // Not in every NCCL 2: it came with 2.14 (the config API); looked up if present, null on older libraries.
    static final MethodHandle H = NcclSymbols.handleIfPresent("ncclCommInitRankConfig",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT, ADDRESS));
  }

  /** Whether the loaded NCCL has {@code ncclCommInitRankConfig}. */
  public static boolean hasCommInitRankConfig() {
    return ncclCommInitRankConfig.H != null;
  }

  /**
   * {@code ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
   * ncclConfig_t* config)}; only where {@link #hasCommInitRankConfig()} (an NPE otherwise). {@code config}: a
   * {@link NcclConfig}.
   */
  public static int ncclCommInitRankConfig(MemorySegment comm, int nranks, MemorySegment commId, int rank,
      MemorySegment config) {
    try {
      return (int) ncclCommInitRankConfig.H.invokeExact(comm, nranks, commId, rank, config);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommDestroy {
    static final MethodHandle H = NcclSymbols.handle("ncclCommDestroy", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code ncclResult_t ncclCommDestroy(ncclComm_t comm)} */
  public static int ncclCommDestroy(long comm) {
    try {
      return (int) ncclCommDestroy.H.invokeExact(comm);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommFinalize {
    // Optional (NCCL 2.14+): only NcclCloseProbe calls it, to time finalize and destroy apart.
    static final MethodHandle H = NcclSymbols.handleIfPresent("ncclCommFinalize",
        FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** Whether the loaded NCCL has {@code ncclCommFinalize}. */
  public static boolean hasCommFinalize() {
    return ncclCommFinalize.H != null;
  }

  /** {@code ncclResult_t ncclCommFinalize(ncclComm_t comm)}; only where {@link #hasCommFinalize()}. */
  public static int ncclCommFinalize(long comm) {
    try {
      return (int) ncclCommFinalize.H.invokeExact(comm);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommAbort {
    static final MethodHandle H = NcclSymbols.handle("ncclCommAbort", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code ncclResult_t ncclCommAbort(ncclComm_t comm)} */
  public static int ncclCommAbort(long comm) {
    try {
      return (int) ncclCommAbort.H.invokeExact(comm);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- asking them

  private static final class ncclCommGetAsyncError {
    static final MethodHandle H =
        NcclSymbols.handle("ncclCommGetAsyncError", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)} */
  public static int ncclCommGetAsyncError(long comm, MemorySegment asyncError) {
    try {
      return (int) ncclCommGetAsyncError.H.invokeExact(comm, asyncError);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommCount {
    static final MethodHandle H = NcclSymbols.handle("ncclCommCount", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommCount(const ncclComm_t comm, int* count)} */
  public static int ncclCommCount(long comm, MemorySegment count) {
    try {
      return (int) ncclCommCount.H.invokeExact(comm, count);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommCuDevice {
    static final MethodHandle H =
        NcclSymbols.handle("ncclCommCuDevice", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device)} */
  public static int ncclCommCuDevice(long comm, MemorySegment device) {
    try {
      return (int) ncclCommCuDevice.H.invokeExact(comm, device);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclCommUserRank {
    static final MethodHandle H =
        NcclSymbols.handle("ncclCommUserRank", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank)} */
  public static int ncclCommUserRank(long comm, MemorySegment rank) {
    try {
      return (int) ncclCommUserRank.H.invokeExact(comm, rank);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- splitting

  private static final class ncclCommSplit {
    // Not in every NCCL 2: it came with 2.18.1 (nccl.h.in of the v2.18.1-1 tag; PyTorch gates it on
    // NCCL_MINOR >= 18 in c10d/NCCLUtils.hpp): looked up if present, null on older libraries.
    static final MethodHandle H = NcclSymbols.handleIfPresent("ncclCommSplit",
        FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
  }

  /** Whether the loaded NCCL has {@code ncclCommSplit}. */
  public static boolean hasCommSplit() {
    return ncclCommSplit.H != null;
  }

  /**
   * {@code ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
   * ncclConfig_t* config)}; only where {@link #hasCommSplit()} (an NPE otherwise). {@code config} NULL:
   * the new communicator inherits the parent's configuration (nccl.h); else a {@link NcclConfig}.
   */
  public static int ncclCommSplit(long comm, int color, int key, MemorySegment newcomm, MemorySegment config) {
    try {
      return (int) ncclCommSplit.H.invokeExact(comm, color, key, newcomm, config);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  // ---------------------------------------------------------------- groups

  private static final class ncclGroupStart {
    static final MethodHandle H = NcclSymbols.handle("ncclGroupStart", FunctionDescriptor.of(JAVA_INT));
  }

  /** {@code ncclResult_t ncclGroupStart()} */
  public static int ncclGroupStart() {
    try {
      return (int) ncclGroupStart.H.invokeExact();
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final class ncclGroupEnd {
    static final MethodHandle H = NcclSymbols.handle("ncclGroupEnd", FunctionDescriptor.of(JAVA_INT));
  }

  /** {@code ncclResult_t ncclGroupEnd()} */
  public static int ncclGroupEnd() {
    try {
      return (int) ncclGroupEnd.H.invokeExact();
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }
}
