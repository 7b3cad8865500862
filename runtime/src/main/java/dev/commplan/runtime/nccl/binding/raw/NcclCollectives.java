package dev.commplan.runtime.nccl.binding.raw;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import java.lang.foreign.FunctionDescriptor;
import java.lang.invoke.MethodHandle;

/**
 * The collectives and point-to-point functions of {@code nccl.h}, bound as {@link NcclSymbols} says, each
 * with a second entry, {@code ...Critical}, linked {@link NcclSymbols#CRITICAL critical(false)} for calls
 * inside a group. Signatures from {@code src/nccl.h.in} of NVIDIA/nccl (2.28).
 *
 * <p>AllReduce, Broadcast, AllGather, ReduceScatter, Reduce, Send and Recv are in every NCCL CommPlan
 * loads (Send and Recv since 2.7) and are required symbols. {@code ncclGather}, {@code ncclScatter} and
 * {@code ncclAlltoAll} came with NCCL 2.28 and are looked up if present ({@link #hasGather()} and the
 * others); where they are missing the backend issues the same transfers with {@code ncclSend}/{@code
 * ncclRecv} in one group, as NCCL's own tests do for older versions.
 *
 * <p>Internal: not part of CommPlan's API.
 */
public final class NcclCollectives {
  private NcclCollectives() {}

  private static final FunctionDescriptor ALL_REDUCE =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclAllReduce {
    static final MethodHandle H = NcclSymbols.handle("ncclAllReduce", ALL_REDUCE);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclAllReduce", ALL_REDUCE, NcclSymbols.CRITICAL);
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
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclAllReduce}, without the thread-state transition: only inside a group. */
  public static int ncclAllReduceCritical(long sendbuff, long recvbuff, long count, int datatype, int op,
      long comm, long stream) {
    try {
      return (int) ncclAllReduce.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, op, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor BROADCAST =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclBroadcast {
    static final MethodHandle H = NcclSymbols.handle("ncclBroadcast", BROADCAST);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclBroadcast", BROADCAST, NcclSymbols.CRITICAL);
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
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclBroadcast}, without the thread-state transition: only inside a group. */
  public static int ncclBroadcastCritical(long sendbuff, long recvbuff, long count, int datatype, int root,
      long comm, long stream) {
    try {
      return (int) ncclBroadcast.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor ALL_GATHER =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclAllGather {
    static final MethodHandle H = NcclSymbols.handle("ncclAllGather", ALL_GATHER);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclAllGather", ALL_GATHER, NcclSymbols.CRITICAL);
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
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclAllGather}, without the thread-state transition: only inside a group. */
  public static int ncclAllGatherCritical(long sendbuff, long recvbuff, long sendcount, int datatype,
      long comm, long stream) {
    try {
      return (int) ncclAllGather.CRITICAL_H.invokeExact(sendbuff, recvbuff, sendcount, datatype, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor REDUCE_SCATTER =
      FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclReduceScatter {
    static final MethodHandle H = NcclSymbols.handle("ncclReduceScatter", REDUCE_SCATTER);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclReduceScatter", REDUCE_SCATTER, NcclSymbols.CRITICAL);
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
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclReduceScatter}, without the thread-state transition: only inside a group. */
  public static int ncclReduceScatterCritical(long sendbuff, long recvbuff, long recvcount, int datatype,
      int op, long comm, long stream) {
    try {
      return (int) ncclReduceScatter.CRITICAL_H.invokeExact(
          sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }


  private static final FunctionDescriptor REDUCE = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclReduce {
    static final MethodHandle H = NcclSymbols.handle("ncclReduce", REDUCE);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclReduce", REDUCE, NcclSymbols.CRITICAL);
  }

  /** {@code ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream)} */
  public static int ncclReduce(long sendbuff, long recvbuff, long count, int datatype, int op, int root, long comm, long stream) {
    try {
      return (int) ncclReduce.H.invokeExact(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclReduce}, without the thread-state transition: only inside a group. */
  public static int ncclReduceCritical(long sendbuff, long recvbuff, long count, int datatype, int op, int root, long comm, long stream) {
    try {
      return (int) ncclReduce.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, op, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor SEND = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclSend {
    static final MethodHandle H = NcclSymbols.handle("ncclSend", SEND);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclSend", SEND, NcclSymbols.CRITICAL);
  }

  /** {@code ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream)} */
  public static int ncclSend(long sendbuff, long count, int datatype, int peer, long comm, long stream) {
    try {
      return (int) ncclSend.H.invokeExact(sendbuff, count, datatype, peer, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclSend}, without the thread-state transition: only inside a group. */
  public static int ncclSendCritical(long sendbuff, long count, int datatype, int peer, long comm, long stream) {
    try {
      return (int) ncclSend.CRITICAL_H.invokeExact(sendbuff, count, datatype, peer, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor RECV = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclRecv {
    static final MethodHandle H = NcclSymbols.handle("ncclRecv", RECV);
    static final MethodHandle CRITICAL_H = NcclSymbols.handle("ncclRecv", RECV, NcclSymbols.CRITICAL);
  }

  /** {@code ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer, ncclComm_t comm, cudaStream_t stream)} */
  public static int ncclRecv(long recvbuff, long count, int datatype, int peer, long comm, long stream) {
    try {
      return (int) ncclRecv.H.invokeExact(recvbuff, count, datatype, peer, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclRecv}, without the thread-state transition: only inside a group. */
  public static int ncclRecvCritical(long recvbuff, long count, int datatype, int peer, long comm, long stream) {
    try {
      return (int) ncclRecv.CRITICAL_H.invokeExact(recvbuff, count, datatype, peer, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor GATHER = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclGather {
    static final MethodHandle H = NcclSymbols.handleIfPresent("ncclGather", GATHER);
    static final MethodHandle CRITICAL_H = NcclSymbols.handleIfPresent("ncclGather", GATHER, NcclSymbols.CRITICAL);
  }

  /** Whether the loaded NCCL has {@code ncclGather}. */
  public static boolean hasGather() {
    return ncclGather.H != null;
  }

  /** {@code ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)}; only where {@link #hasGather} (an NPE otherwise) */
  public static int ncclGather(long sendbuff, long recvbuff, long count, int datatype, int root, long comm, long stream) {
    try {
      return (int) ncclGather.H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclGather}, without the thread-state transition: only inside a group. */
  public static int ncclGatherCritical(long sendbuff, long recvbuff, long count, int datatype, int root, long comm, long stream) {
    try {
      return (int) ncclGather.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor SCATTER = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclScatter {
    static final MethodHandle H = NcclSymbols.handleIfPresent("ncclScatter", SCATTER);
    static final MethodHandle CRITICAL_H = NcclSymbols.handleIfPresent("ncclScatter", SCATTER, NcclSymbols.CRITICAL);
  }

  /** Whether the loaded NCCL has {@code ncclScatter}. */
  public static boolean hasScatter() {
    return ncclScatter.H != null;
  }

  /** {@code ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream)}; only where {@link #hasScatter} (an NPE otherwise) */
  public static int ncclScatter(long sendbuff, long recvbuff, long count, int datatype, int root, long comm, long stream) {
    try {
      return (int) ncclScatter.H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclScatter}, without the thread-state transition: only inside a group. */
  public static int ncclScatterCritical(long sendbuff, long recvbuff, long count, int datatype, int root, long comm, long stream) {
    try {
      return (int) ncclScatter.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, root, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  private static final FunctionDescriptor ALLTOALL = FunctionDescriptor.of(JAVA_INT, JAVA_LONG, JAVA_LONG, JAVA_LONG, JAVA_INT, JAVA_LONG, JAVA_LONG);

  private static final class ncclAlltoAll {
    static final MethodHandle H = NcclSymbols.handleIfPresent("ncclAlltoAll", ALLTOALL);
    static final MethodHandle CRITICAL_H = NcclSymbols.handleIfPresent("ncclAlltoAll", ALLTOALL, NcclSymbols.CRITICAL);
  }

  /** Whether the loaded NCCL has {@code ncclAlltoAll}. */
  public static boolean hasAlltoAll() {
    return ncclAlltoAll.H != null;
  }

  /** {@code ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream)}; only where {@link #hasAlltoAll} (an NPE otherwise) */
  public static int ncclAlltoAll(long sendbuff, long recvbuff, long count, int datatype, long comm, long stream) {
    try {
      return (int) ncclAlltoAll.H.invokeExact(sendbuff, recvbuff, count, datatype, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }

  /** {@link #ncclAlltoAll}, without the thread-state transition: only inside a group. */
  public static int ncclAlltoAllCritical(long sendbuff, long recvbuff, long count, int datatype, long comm, long stream) {
    try {
      return (int) ncclAlltoAll.CRITICAL_H.invokeExact(sendbuff, recvbuff, count, datatype, comm, stream);
    } catch (Throwable t) {
      throw NativeAccess.unreachable(t);
    }
  }
}
