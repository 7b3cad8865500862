package dev.commplan.runtime.nccl.internal;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * The functions of {@code nccl.h} that CommPlan calls, one Java method per C function, each a {@code
 * static final MethodHandle} in its own holder class (loaded on first use, as jextract does) called with
 * {@code invokeExact}. No checking here: each method returns the {@code ncclResult_t} as an int; the
 * backend's checked layer turns codes into exceptions.
 *
 * <p>Types, from {@code nccl.h} (NCCL 2.28, {@code src/nccl.h.in} of NVIDIA/nccl): {@code ncclComm_t} and
 * {@code cudaStream_t} are opaque pointers, passed here as {@code long}; {@code size_t} is {@code long};
 * the enums ({@code ncclResult_t}, {@code ncclDataType_t}, {@code ncclRedOp_t}) are {@code int}; {@code
 * ncclUniqueId} is a struct of 128 chars passed by value.
 *
 * <p>The collectives take their device pointers as {@code long} rather than as {@code MemorySegment}: on
 * the 64-bit Linux ABIs a pointer and a 64-bit integer travel in the same register, so this is the same
 * call, and an enqueue builds no segment. Each collective has a second entry, {@code ...Critical}, linked
 * with {@link Linker.Option#critical(boolean) critical(false)}: no thread-state transition around the
 * call. It is only for calls inside {@code ncclGroupStart/ncclGroupEnd}, where NCCL only records the
 * call (short, never blocks, never calls back into Java); outside a group a collective launches work and
 * may take locks, so the plain entry is used there.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class Nccl {
  private Nccl() {}

  /** {@code NCCL_UNIQUE_ID_BYTES}. */
  public static final int UNIQUE_ID_BYTES = 128;

  /** {@code typedef struct { char internal[NCCL_UNIQUE_ID_BYTES]; } ncclUniqueId;} */
  public static final StructLayout UNIQUE_ID =
      MemoryLayout.structLayout(MemoryLayout.sequenceLayout(UNIQUE_ID_BYTES, JAVA_BYTE).withName("internal"))
          .withName("ncclUniqueId");

  /** The symbols that must be present for the library to count as loaded. */
  static final List<String> FUNCTIONS = List.of(
      "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommInitAll", "ncclCommDestroy",
      "ncclCommAbort", "ncclCommGetAsyncError", "ncclCommCount", "ncclCommCuDevice", "ncclCommUserRank",
      "ncclGetErrorString", "ncclGroupStart", "ncclGroupEnd", "ncclAllReduce", "ncclBroadcast",
      "ncclAllGather", "ncclReduceScatter", "ncclReduce", "ncclSend", "ncclRecv");
  // ncclGetLastError, ncclCommSplit and ncclCommFinalize are optional: see them below; so are ncclGather,
  // ncclScatter and ncclAlltoAll (NcclCollectives, which binds the functions beyond the four here).

  private static final Linker.Option CRITICAL = Linker.Option.critical(false);

  static MethodHandle handle(String name, FunctionDescriptor descriptor, Linker.Option... options) {
    return NativeLibrary.nccl().downcall(name, descriptor, options);
  }

  static Error unreachable(Throwable t) {
    if (t instanceof RuntimeException r) {
      throw r;
    }
    if (t instanceof Error e) {
      throw e;
    }
    return new AssertionError("a native downcall threw a checked exception", t);
  }

  // ---------------------------------------------------------------- version, ids, communicators

  private static final class ncclGetVersion {
    static final MethodHandle H = handle("ncclGetVersion", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  }

  /** {@code ncclResult_t ncclGetVersion(int *version)} */
  public static int ncclGetVersion(MemorySegment version) {
    try {
      return (int) ncclGetVersion.H.invokeExact(version);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclGetUniqueId {
    static final MethodHandle H = handle("ncclGetUniqueId", FunctionDescriptor.of(JAVA_INT, ADDRESS));
  }

  /** {@code ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId)} */
  public static int ncclGetUniqueId(MemorySegment uniqueId) {
    try {
      return (int) ncclGetUniqueId.H.invokeExact(uniqueId);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommInitRank {
    static final MethodHandle H = handle("ncclCommInitRank",
        FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, UNIQUE_ID, JAVA_INT));
  }

  /** {@code ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank)} */
  public static int ncclCommInitRank(MemorySegment comm, int nranks, MemorySegment commId, int rank) {
    try {
      return (int) ncclCommInitRank.H.invokeExact(comm, nranks, commId, rank);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommInitAll {
    static final MethodHandle H =
        handle("ncclCommInitAll", FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist)} */
  public static int ncclCommInitAll(MemorySegment comms, int ndev, MemorySegment devlist) {
    try {
      return (int) ncclCommInitAll.H.invokeExact(comms, ndev, devlist);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommDestroy {
    static final MethodHandle H = handle("ncclCommDestroy", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code ncclResult_t ncclCommDestroy(ncclComm_t comm)} */
  public static int ncclCommDestroy(long comm) {
    try {
      return (int) ncclCommDestroy.H.invokeExact(comm);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommFinalize {
    // Optional (NCCL 2.14+): only NcclCloseProbe calls it, to time finalize and destroy apart.
    static final MethodHandle H = NativeLibrary.nccl().downcallIfPresent("ncclCommFinalize",
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
      throw unreachable(t);
    }
  }

  private static final class ncclCommAbort {
    static final MethodHandle H = handle("ncclCommAbort", FunctionDescriptor.of(JAVA_INT, JAVA_LONG));
  }

  /** {@code ncclResult_t ncclCommAbort(ncclComm_t comm)} */
  public static int ncclCommAbort(long comm) {
    try {
      return (int) ncclCommAbort.H.invokeExact(comm);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommGetAsyncError {
    static final MethodHandle H =
        handle("ncclCommGetAsyncError", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t *asyncError)} */
  public static int ncclCommGetAsyncError(long comm, MemorySegment asyncError) {
    try {
      return (int) ncclCommGetAsyncError.H.invokeExact(comm, asyncError);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommCount {
    static final MethodHandle H = handle("ncclCommCount", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommCount(const ncclComm_t comm, int* count)} */
  public static int ncclCommCount(long comm, MemorySegment count) {
    try {
      return (int) ncclCommCount.H.invokeExact(comm, count);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommCuDevice {
    static final MethodHandle H =
        handle("ncclCommCuDevice", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device)} */
  public static int ncclCommCuDevice(long comm, MemorySegment device) {
    try {
      return (int) ncclCommCuDevice.H.invokeExact(comm, device);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommUserRank {
    static final MethodHandle H =
        handle("ncclCommUserRank", FunctionDescriptor.of(JAVA_INT, JAVA_LONG, ADDRESS));
  }

  /** {@code ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank)} */
  public static int ncclCommUserRank(long comm, MemorySegment rank) {
    try {
      return (int) ncclCommUserRank.H.invokeExact(comm, rank);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclCommSplit {
    // Not in every NCCL 2: it came with 2.18.1 (nccl.h.in of the v2.18.1-1 tag; PyTorch gates it on
    // NCCL_MINOR >= 18 in c10d/NCCLUtils.hpp): looked up if present, null on older libraries.
    static final MethodHandle H = NativeLibrary.nccl().downcallIfPresent("ncclCommSplit",
        FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_INT, JAVA_INT, ADDRESS, ADDRESS));
  }

  /** Whether the loaded NCCL has {@code ncclCommSplit}. */
  public static boolean hasCommSplit() {
    return ncclCommSplit.H != null;
  }

  /**
   * {@code ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
   * ncclConfig_t* config)}; only where {@link #hasCommSplit()} (an NPE otherwise). {@code config} NULL:
   * the new communicator inherits the parent's configuration (nccl.h).
   */
  public static int ncclCommSplit(long comm, int color, int key, MemorySegment newcomm, MemorySegment config) {
    try {
      return (int) ncclCommSplit.H.invokeExact(comm, color, key, newcomm, config);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  // ---------------------------------------------------------------- errors

  private static final class ncclGetErrorString {
    static final MethodHandle H = handle("ncclGetErrorString", FunctionDescriptor.of(ADDRESS, JAVA_INT));
  }

  /** {@code const char* ncclGetErrorString(ncclResult_t result)} */
  public static MemorySegment ncclGetErrorString(int result) {
    try {
      return (MemorySegment) ncclGetErrorString.H.invokeExact(result);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclGetLastError {
    // Not in every NCCL 2: it came with 2.13 (PyTorch gates it on NCCL_MINOR >= 13 in c10d/NCCLUtils.hpp;
    // the NCCL user guide lists it from 2.13.4 on):
    // looked up if present, null on older libraries.
    static final MethodHandle H =
        NativeLibrary.nccl().downcallIfPresent("ncclGetLastError", FunctionDescriptor.of(ADDRESS, JAVA_LONG));
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
      throw unreachable(t);
    }
  }

  // ---------------------------------------------------------------- groups

  private static final class ncclGroupStart {
    static final MethodHandle H = handle("ncclGroupStart", FunctionDescriptor.of(JAVA_INT));
  }

  /** {@code ncclResult_t ncclGroupStart()} */
  public static int ncclGroupStart() {
    try {
      return (int) ncclGroupStart.H.invokeExact();
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final class ncclGroupEnd {
    static final MethodHandle H = handle("ncclGroupEnd", FunctionDescriptor.of(JAVA_INT));
  }

  /** {@code ncclResult_t ncclGroupEnd()} */
  public static int ncclGroupEnd() {
    try {
      return (int) ncclGroupEnd.H.invokeExact();
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  // ---------------------------------------------------------------- collectives

  private static final FunctionDescriptor ALL_REDUCE =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclAllReduce {
    static final MethodHandle H = handle("ncclAllReduce", ALL_REDUCE);
    static final MethodHandle CRITICAL_H = handle("ncclAllReduce", ALL_REDUCE, CRITICAL);
  }

  /**
   * {@code ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t
   * datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)}
   */
  public static int ncclAllReduce(long sendbuff, long recvbuff, long count, int datatype, int op, long comm,
      long stream) {
    try {
      return (int) ncclAllReduce.H.invokeExact(sendbuff, recvbuff, count, datatype, op, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  /** {@link #ncclAllReduce}, without the thread-state transition: only inside a group. */
  public static int ncclAllReduceCritical(long sendbuff, long recvbuff, long count, int datatype, int op,
      long comm, long stream) {
    try {
      return (int) ncclAllReduce.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, op, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final FunctionDescriptor BROADCAST =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclBroadcast {
    static final MethodHandle H = handle("ncclBroadcast", BROADCAST);
    static final MethodHandle CRITICAL_H = handle("ncclBroadcast", BROADCAST, CRITICAL);
  }

  /**
   * {@code ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t
   * datatype, int root, ncclComm_t comm, cudaStream_t stream)}
   */
  public static int ncclBroadcast(long sendbuff, long recvbuff, long count, int datatype, int root, long comm,
      long stream) {
    try {
      return (int) ncclBroadcast.H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  /** {@link #ncclBroadcast}, without the thread-state transition: only inside a group. */
  public static int ncclBroadcastCritical(long sendbuff, long recvbuff, long count, int datatype, int root,
      long comm, long stream) {
    try {
      return (int) ncclBroadcast.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final FunctionDescriptor ALL_GATHER =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclAllGather {
    static final MethodHandle H = handle("ncclAllGather", ALL_GATHER);
    static final MethodHandle CRITICAL_H = handle("ncclAllGather", ALL_GATHER, CRITICAL);
  }

  /**
   * {@code ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
   * ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)}
   */
  public static int ncclAllGather(long sendbuff, long recvbuff, long sendcount, int datatype, long comm,
      long stream) {
    try {
      return (int) ncclAllGather.H.invokeExact(sendbuff, recvbuff, sendcount, datatype, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  /** {@link #ncclAllGather}, without the thread-state transition: only inside a group. */
  public static int ncclAllGatherCritical(long sendbuff, long recvbuff, long sendcount, int datatype,
      long comm, long stream) {
    try {
      return (int) ncclAllGather.CRITICAL_H.invokeExact(sendbuff, recvbuff, sendcount, datatype, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  private static final FunctionDescriptor REDUCE_SCATTER =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclReduceScatter {
    static final MethodHandle H = handle("ncclReduceScatter", REDUCE_SCATTER);
    static final MethodHandle CRITICAL_H = handle("ncclReduceScatter", REDUCE_SCATTER, CRITICAL);
  }

  /**
   * {@code ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
   * ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm, cudaStream_t stream)}
   */
  public static int ncclReduceScatter(long sendbuff, long recvbuff, long recvcount, int datatype, int op,
      long comm, long stream) {
    try {
      return (int) ncclReduceScatter.H.invokeExact(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }

  /** {@link #ncclReduceScatter}, without the thread-state transition: only inside a group. */
  public static int ncclReduceScatterCritical(long sendbuff, long recvbuff, long recvcount, int datatype,
      int op, long comm, long stream) {
    try {
      return (int) ncclReduceScatter.CRITICAL_H.invokeExact(
          sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
    } catch (Throwable t) {
      throw unreachable(t);
    }
  }
}
