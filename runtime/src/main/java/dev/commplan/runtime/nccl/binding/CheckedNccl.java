package dev.commplan.runtime.nccl.binding;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.NativeAccess;
import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;
import dev.commplan.runtime.nccl.binding.raw.NcclConfig;
import dev.commplan.runtime.nccl.binding.raw.NcclLibraryInfo;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * NCCL's host functions as the backend calls them (version, unique ids, making, splitting, destroying
 * and aborting communicators, asynchronous errors), over the raw bindings of {@code binding.raw} ({@link
 * NcclLibraryInfo}, {@link NcclCommunicators}): every code other than success becomes an {@link
 * NcclException} with the function's name and NCCL's own text ({@code ncclGetErrorString}, {@code
 * ncclGetLastError}); out-parameters live in a confined arena per call. Where the caller must tell a
 * failure of its own from one the watchdog caused, a {@code ...Raw} method returns the code, and {@link
 * #ncclError} builds the exception.
 *
 * <p>The collectives go through {@link NcclDispatch}; the CUDA runtime through {@link CheckedCuda}.
 */
public final class CheckedNccl {
  private CheckedNccl() {}

  /** The size of an {@code ncclUniqueId} ({@code NCCL_UNIQUE_ID_BYTES}). */
  public static final int UNIQUE_ID_BYTES = NcclCommunicators.UNIQUE_ID_BYTES;

  /** {@return whether the loaded NCCL has {@code ncclCommSplit} (2.18.1 and newer)} */
  public static boolean hasCommSplit() {
    return NcclCommunicators.hasCommSplit();
  }

  // ---------------------------------------------------------------- exceptions

  /** The exception for {@code code} returned by NCCL's {@code function}; {@code comm} may be 0. */
  public static NcclException ncclError(String function, int code, long comm) {
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

  public static void nccl(String function, int code, long comm) {
    if (code != 0) {
      throw ncclError(function, code, comm);
    }
  }

  // ---------------------------------------------------------------- NCCL

  public static int ncclGetVersion() {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment v = arena.allocate(JAVA_INT);
      nccl("ncclGetVersion", NcclLibraryInfo.ncclGetVersion(v), 0);
      return v.get(JAVA_INT, 0);
    }
  }

  public static byte[] ncclGetUniqueId() {
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
  public static long ncclCommInitRank(int nranks, byte[] uniqueId, int rank, int maxCtas) {
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
  public static long[] ncclCommInitGroup(int[] devices, int maxCtas) {
    if (maxCtas > 0) {
      requireInitRankConfig();
    }
    int n = devices.length;
    int previous = CheckedCuda.cudaGetDevice();
    try (Arena arena = Arena.ofConfined()) {
      for (int device : devices) { // each usable before the group: a rank failing inside it would leave the others waiting
        CheckedCuda.cudaSetDevice(device);
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
          failure = CheckedCuda.cudaError("cudaSetDevice(" + devices[r] + ") for rank " + r, rc);
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
      CheckedCuda.cudaSetDeviceQuietly(previous);
    }
  }

  private static void requireInitRankConfig() {
    if (!NcclCommunicators.hasCommInitRankConfig()) {
      throw new BackendUnavailableException("limiting CTAs needs ncclCommInitRankConfig, which"
          + " came with NCCL 2.14, and the loaded NCCL lacks it; load a newer NCCL (-D"
          + NativeLibrary.NCCL_PROPERTY + ")");
    }
  }

  public static int ncclCommCount(long comm) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      nccl("ncclCommCount", NcclCommunicators.ncclCommCount(comm, out), comm);
      return out.get(JAVA_INT, 0);
    }
  }

  public static int ncclCommUserRank(long comm) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_INT);
      nccl("ncclCommUserRank", NcclCommunicators.ncclCommUserRank(comm, out), comm);
      return out.get(JAVA_INT, 0);
    }
  }

  public static int ncclCommCuDevice(long comm) {
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
  public static long ncclCommSplitRaw(long comm, int color, int key, int maxCtas, int[] rc) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(ADDRESS);
      out.set(JAVA_LONG, 0, 0L);
      MemorySegment config = maxCtas > 0 ? NcclConfig.withMaxCtas(arena, maxCtas) : MemorySegment.NULL;
      rc[0] = NcclCommunicators.ncclCommSplit(comm, color, key, out, config);
      return out.get(JAVA_LONG, 0);
    }
  }

  /** {@code ncclCommAbort}, returning its code: a failure path that must go on whatever it returns. */
  public static int ncclCommAbortQuietly(long comm) {
    return NcclCommunicators.ncclCommAbort(comm);
  }

  public static void ncclCommDestroy(long comm) {
    nccl("ncclCommDestroy", NcclCommunicators.ncclCommDestroy(comm), 0);
  }

  /**
   * The communicator's asynchronous error, or the call's own code if the call failed: for the watchdog,
   * which treats either as the communicator's failure.
   */
  public static int ncclCommGetAsyncErrorRaw(long comm, MemorySegment scratch) {
    int rc = NcclCommunicators.ncclCommGetAsyncError(comm, scratch);
    return rc == 0 ? scratch.get(JAVA_INT, 0) : rc;
  }

  /** The communicator's asynchronous error ({@code ncclSuccess} when none). */
  public static int ncclCommGetAsyncError(long comm, MemorySegment scratch) {
    nccl("ncclCommGetAsyncError", NcclCommunicators.ncclCommGetAsyncError(comm, scratch), comm);
    return scratch.get(JAVA_INT, 0);
  }
}
