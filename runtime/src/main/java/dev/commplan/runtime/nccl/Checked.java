package dev.commplan.runtime.nccl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_FLOAT;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.CudaGraphs;
import dev.commplan.runtime.nccl.binding.raw.CudaStreamOrderedMemory;
import dev.commplan.runtime.nccl.binding.raw.NativeAccess;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;
import dev.commplan.runtime.nccl.binding.raw.NcclConfig;
import dev.commplan.runtime.nccl.binding.raw.NcclLibraryInfo;
import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * The checked layer over the NCCL and CUDA bindings of {@code internal}: every code other than success
 * becomes an {@link NcclException} or {@link CudaException} with the function's name and the library's
 * own text; out-parameters live in a confined arena per call. The hot path (collective enqueue) calls
 * the raw layer directly and comes here only to build the exception.
 */
final class Checked {
  private Checked() {}

  // ---------------------------------------------------------------- exceptions

  /** The exception for {@code code} returned by NCCL's {@code function}; {@code comm} may be 0. */
  static NcclException ncclError(String function, int code, long comm) {
    String text = null;
    String last = null;
    try {
      text = NativeAccess.cString(NcclLibraryInfo.ncclGetErrorString(code));
      last = NativeAccess.cString(NcclLibraryInfo.ncclGetLastError(comm));
    } catch (RuntimeException | LinkageError e) {
      // the error text is a courtesy: never hide the real error behind a failure to describe it
    }
    return new NcclException(function, code, text, last);
  }

  /** The exception for {@code code} returned by the CUDA runtime's {@code function}. */
  static CudaException cudaError(String function, int code) {
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

  static void nccl(String function, int code, long comm) {
    if (code != 0) {
      throw ncclError(function, code, comm);
    }
  }

  static void cuda(String function, int code) {
    if (code != 0) {
      throw cudaError(function, code);
    }
  }

  // ---------------------------------------------------------------- NCCL

  static int ncclGetVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment v = arena.allocate(JAVA_INT);
      nccl("ncclGetVersion", NcclLibraryInfo.ncclGetVersion(v), 0);
      return v.get(JAVA_INT, 0);
    }
  }

  static byte[] ncclGetUniqueId() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment id = arena.allocate(NcclCommunicators.UNIQUE_ID);
      nccl("ncclGetUniqueId", NcclCommunicators.ncclGetUniqueId(id), 0);
      return id.toArray(JAVA_BYTE);
    }
  }

  /**
   * {@code ncclCommInitRank}, or {@code ncclCommInitRankConfig} with a {@link NcclConfig} limiting each
   * collective to {@code maxCtas} CTAs where {@code maxCtas > 0}: this rank's communicator, once every rank
   * has joined.
   */
  static long ncclCommInitRank(int nranks, byte[] uniqueId, int rank, int maxCtas) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment comm = arena.allocate(ADDRESS);
      MemorySegment id = arena.allocate(NcclCommunicators.UNIQUE_ID);
      id.copyFrom(MemorySegment.ofArray(uniqueId));
      if (maxCtas > 0) {
        requireInitRankConfig();
        nccl("ncclCommInitRankConfig", NcclCommunicators.ncclCommInitRankConfig(comm, nranks, id, rank,
            NcclConfig.withMaxCtas(arena, maxCtas)), 0);
      } else {
        nccl("ncclCommInitRank", NcclCommunicators.ncclCommInitRank(comm, nranks, id, rank), 0);
      }
      return comm.get(JAVA_LONG, 0);
    }
  }

  /**
   * One communicator per entry of {@code devices} (rank r on device {@code devices[r]}), made by this thread
   * as {@code ncclCommInitAll} makes them (NCCL's own code does this, with the default config): a unique id,
   * then in one group, per rank, {@code cudaSetDevice} and {@code ncclCommInitRank} (or {@code
   * ncclCommInitRankConfig} with at most {@code maxCtas} CTAs where {@code maxCtas > 0}); {@code
   * ncclGroupEnd} returns once all are ready, or fails for all (the communicators made are then aborted):
   * one call, so no thread of ours is left waiting in an init whose peer failed elsewhere. The calling
   * thread's device is restored.
   */
  static long[] ncclCommInitGroup(int[] devices, int maxCtas) {
    if (maxCtas > 0) {
      requireInitRankConfig();
    }
    int n = devices.length;
    int previous = cudaGetDevice();
    try (Arena arena = Arena.ofConfined()) {
      for (int device : devices) { // each usable before the group: a rank failing inside it would leave the others waiting
        cudaSetDevice(device);
      }
      MemorySegment id = arena.allocate(NcclCommunicators.UNIQUE_ID);
      nccl("ncclGetUniqueId", NcclCommunicators.ncclGetUniqueId(id), 0);
      MemorySegment config = maxCtas > 0 ? NcclConfig.withMaxCtas(arena, maxCtas) : MemorySegment.NULL;
      MemorySegment comms = arena.allocate(ADDRESS, n);
      comms.fill((byte) 0);
      nccl("ncclGroupStart", NcclCommunicators.ncclGroupStart(), 0);
      RuntimeException failure = null;
      for (int r = 0; r < n && failure == null; r++) { // after a failure, on to ncclGroupEnd: it ends the group
        int rc = Cuda.cudaSetDevice(devices[r]);
        if (rc != 0) {
          failure = cudaError("cudaSetDevice(" + devices[r] + ") for rank " + r, rc);
          break;
        }
        MemorySegment slot = comms.asSlice(r * ADDRESS.byteSize(), ADDRESS);
        rc = maxCtas > 0 ? NcclCommunicators.ncclCommInitRankConfig(slot, n, id, r, config)
            : NcclCommunicators.ncclCommInitRank(slot, n, id, r);
        if (rc != 0) {
          failure = ncclError((maxCtas > 0 ? "ncclCommInitRankConfig" : "ncclCommInitRank") + " (rank " + r + " of "
              + n + ")", rc, 0);
        }
      }
      int end = NcclCommunicators.ncclGroupEnd();
      if (failure == null && end != 0) {
        failure = ncclError("ncclGroupEnd (making " + n + " communicators)", end, 0);
      }
      long[] handles = comms.toArray(JAVA_LONG);
      if (failure != null) {
        for (long h : handles) {
          if (h != 0) {
            ncclCommAbortQuietly(h);
          }
        }
        throw failure;
      }
      return handles;
    } finally {
      cudaSetDeviceQuietly(previous);
    }
  }

  private static void requireInitRankConfig() {
    if (!NcclCommunicators.hasCommInitRankConfig()) {
      throw new BackendUnavailableException("limiting CTAs needs ncclCommInitRankConfig, which"
          + " came with NCCL 2.14, and the loaded NCCL lacks it; load a newer NCCL (-D"
          + NativeLibrary.NCCL_PROPERTY + ")");
    }
  }

  static int ncclCommCount(long comm) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      nccl("ncclCommCount", NcclCommunicators.ncclCommCount(comm, out), comm);
      return out.get(JAVA_INT, 0);
    }
  }

  static int ncclCommUserRank(long comm) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      nccl("ncclCommUserRank", NcclCommunicators.ncclCommUserRank(comm, out), comm);
      return out.get(JAVA_INT, 0);
    }
  }

  static int ncclCommCuDevice(long comm) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      nccl("ncclCommCuDevice", NcclCommunicators.ncclCommCuDevice(comm, out), comm);
      return out.get(JAVA_INT, 0);
    }
  }

  /**
   * {@code ncclCommSplit}: with no config where {@code maxCtas <= 0} (the child inherits the parent's:
   * blocking, as every communicator of this backend is), else a {@link NcclConfig} with at most {@code
   * maxCtas} CTAs (its other fields NCCL's defaults, blocking among them). The new communicator, or 0;
   * NCCL's code in {@code rc[0]}, for the caller, which must tell a failure of its own from one the
   * watchdog caused.
   */
  static long ncclCommSplitRaw(long comm, int color, int key, int maxCtas, int[] rc) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      out.set(JAVA_LONG, 0, 0L);
      MemorySegment config = maxCtas > 0 ? NcclConfig.withMaxCtas(arena, maxCtas) : MemorySegment.NULL;
      rc[0] = NcclCommunicators.ncclCommSplit(comm, color, key, out, config);
      return out.get(JAVA_LONG, 0);
    }
  }

  /** {@code ncclCommAbort}, returning its code: a failure path that must go on whatever it returns. */
  static int ncclCommAbortQuietly(long comm) {
    return NcclCommunicators.ncclCommAbort(comm);
  }

  static void ncclCommDestroy(long comm) {
    nccl("ncclCommDestroy", NcclCommunicators.ncclCommDestroy(comm), 0);
  }

  /**
   * The communicator's asynchronous error, or the call's own code if the call failed: for the watchdog,
   * which treats either as the communicator's failure.
   */
  static int ncclCommGetAsyncErrorRaw(long comm, MemorySegment scratch) {
    int rc = NcclCommunicators.ncclCommGetAsyncError(comm, scratch);
    return rc == 0 ? scratch.get(JAVA_INT, 0) : rc;
  }

  /** The communicator's asynchronous error ({@code ncclSuccess} when none). */
  static int ncclCommGetAsyncError(long comm, MemorySegment scratch) {
    nccl("ncclCommGetAsyncError", NcclCommunicators.ncclCommGetAsyncError(comm, scratch), comm);
    return scratch.get(JAVA_INT, 0);
  }

  // ---------------------------------------------------------------- CUDA

  /**
   * {@code cudaGetDeviceCount}, returned as the raw code and count: callers turn "no device" into a
   * message of their own.
   */
  static long cudaGetDeviceCountRaw() {
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

  static void cudaSetDevice(int device) {
    cuda("cudaSetDevice", Cuda.cudaSetDevice(device));
  }

  /** {@code cudaSetDevice} on a failure or clean-up path, which goes on whatever it returns. */
  static void cudaSetDeviceQuietly(int device) {
    Cuda.cudaSetDevice(device);
  }

  /** {@code cudaDeviceGetPCIBusId}: the device's PCI address, {@code "0000:3b:00.0"}. */
  static String cudaPciBusId(int device) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(64);
      cuda("cudaDeviceGetPCIBusId", Cuda.cudaDeviceGetPCIBusId(out, 64, device));
      return out.getString(0);
    }
  }

  static int cudaGetDevice() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      cuda("cudaGetDevice", Cuda.cudaGetDevice(out));
      return out.get(JAVA_INT, 0);
    }
  }

  static long cudaMalloc(long bytes) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaMalloc", Cuda.cudaMalloc(out, bytes));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** {@code cudaMallocAsync} of {@code bytes} on {@code stream}: usable in that stream's order after this call. */
  static long cudaMallocAsync(long bytes, long stream) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaMallocAsync", CudaStreamOrderedMemory.cudaMallocAsync(out, bytes, stream));
      return out.get(JAVA_LONG, 0);
    }
  }

  static void cudaFreeAsync(long pointer, long stream) {
    cuda("cudaFreeAsync", CudaStreamOrderedMemory.cudaFreeAsync(pointer, stream));
  }

  /** {@code cudaMemGetInfo} of the current device: {free, total} bytes, or null if it fails. */
  static long[] cudaMemGetInfo() {
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

  static void cudaFree(long pointer) {
    cuda("cudaFree", Cuda.cudaFree(pointer));
  }

  /** Best effort, on a failure path (the allocation's own error is the one reported). */
  static void cudaFreeQuietly(long pointer) {
    Cuda.cudaFree(pointer);
  }

  static long cudaStreamCreateNonBlocking() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaStreamCreateWithFlags", Cuda.cudaStreamCreateWithFlags(out, Cuda.STREAM_NON_BLOCKING));
      return out.get(JAVA_LONG, 0);
    }
  }

  static void cudaStreamSynchronize(long stream) {
    cuda("cudaStreamSynchronize", Cuda.cudaStreamSynchronize(stream));
  }

  static void cudaStreamDestroy(long stream) {
    cuda("cudaStreamDestroy", Cuda.cudaStreamDestroy(stream));
  }

  /** Best effort, on a failure path: nothing useful can be done if it fails. */
  static void cudaStreamDestroyQuietly(long stream) {
    Cuda.cudaStreamDestroy(stream);
  }

  /** {@code cudaStreamQuery}: true when all work is done, false while pending, else throws. */
  static boolean cudaStreamQuery(long stream) {
    int rc = Cuda.cudaStreamQuery(stream);
    if (rc == 0) {
      return true;
    }
    if (rc == Cuda.ERROR_NOT_READY) {
      return false;
    }
    throw cudaError("cudaStreamQuery", rc);
  }

  static long cudaEventCreate() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaEventCreate", Cuda.cudaEventCreate(out));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** An event for ordering only ({@code cudaEventDisableTiming}). */
  static long cudaEventCreateDisableTiming() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaEventCreateWithFlags", Cuda.cudaEventCreateWithFlags(out, Cuda.EVENT_DISABLE_TIMING));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** {@code cudaEventQuery}: true when the work before the event is done, false while pending, else throws. */
  static boolean cudaEventQuery(long event) {
    int rc = Cuda.cudaEventQuery(event);
    if (rc == 0) {
      return true;
    }
    if (rc == Cuda.ERROR_NOT_READY) {
      return false;
    }
    throw cudaError("cudaEventQuery", rc);
  }

  static void cudaEventRecord(long event, long stream) {
    cuda("cudaEventRecord", Cuda.cudaEventRecord(event, stream));
  }

  static void cudaStreamWaitEvent(long stream, long event) {
    cuda("cudaStreamWaitEvent", Cuda.cudaStreamWaitEvent(stream, event, 0));
  }

  static void cudaEventSynchronize(long event) {
    cuda("cudaEventSynchronize", Cuda.cudaEventSynchronize(event));
  }

  static float cudaEventElapsedTime(long start, long end) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_FLOAT);
      cuda("cudaEventElapsedTime", Cuda.cudaEventElapsedTime(out, start, end));
      return out.get(JAVA_FLOAT, 0);
    }
  }

  static void cudaEventDestroy(long event) {
    cuda("cudaEventDestroy", Cuda.cudaEventDestroy(event));
  }

  /** Best effort, when freeing: nothing useful can be done if it fails. */
  static void cudaEventDestroyQuietly(long event) {
    Cuda.cudaEventDestroy(event);
  }

  // ---------------------------------------------------------------- stream capture, graphs

  /**
   * {@code cudaStreamEndCapture}: the graph, or 0 if the capture was invalidated; the code in {@code
   * rc[0]} (a failure path must still end the capture, so this never throws).
   */
  static long cudaStreamEndCaptureRaw(long stream, int[] rc) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      rc[0] = CudaGraphs.cudaStreamEndCapture(stream, out);
      return rc[0] == 0 ? out.get(JAVA_LONG, 0) : 0;
    }
  }

  /** {@code cudaGraphInstantiateWithFlags} with no flags: the executable graph. */
  static long cudaGraphInstantiate(long graph) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      cuda("cudaGraphInstantiateWithFlags", CudaGraphs.cudaGraphInstantiateWithFlags(out, graph, 0L));
      return out.get(JAVA_LONG, 0);
    }
  }

  /** Best effort: the graph was only a step on the way to the executable one (or a failed capture's). */
  static void cudaGraphDestroyQuietly(long graph) {
    CudaGraphs.cudaGraphDestroy(graph);
  }

  static void cudaGraphExecDestroy(long graphExec) {
    cuda("cudaGraphExecDestroy", CudaGraphs.cudaGraphExecDestroy(graphExec));
  }

  static int cudaDriverGetVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      cuda("cudaDriverGetVersion", Cuda.cudaDriverGetVersion(out));
      return out.get(JAVA_INT, 0);
    }
  }

  static int cudaRuntimeGetVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      cuda("cudaRuntimeGetVersion", Cuda.cudaRuntimeGetVersion(out));
      return out.get(JAVA_INT, 0);
    }
  }

  /** "13.0" from CUDA's 13000. */
  static String cudaVersionString(int code) {
    return code / 1000 + "." + (code % 1000) / 10;
  }
}
