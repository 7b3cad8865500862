package dev.commplan.runtime.nccl.binding.raw;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.invoke.MethodHandle;
import java.util.List;

/**
 * Which NCCL symbols CommPlan requires, and how the NCCL bindings of this package ({@link NcclLibraryInfo},
 * {@link NcclCommunicators}, {@link NcclCollectives}) get a handle for one.
 *
 * <p>The bindings share one shape, as jextract writes them: one Java method per C function, each a {@code
 * static final MethodHandle} in its own holder class (loaded on first use) called with {@code invokeExact};
 * no checking (each returns the {@code ncclResult_t} as an int; the backend's checked layer turns codes
 * into exceptions). Types, from {@code src/nccl.h.in} of NVIDIA/nccl: {@code ncclComm_t} and {@code
 * cudaStream_t} are opaque pointers passed as {@code long}, as are device pointers (on the 64-bit Linux ABIs
 * a pointer and a 64-bit integer travel in the same register, so an enqueue builds no segment); {@code
 * size_t} is {@code long}; the enums are {@code int}.
 */
final class NcclSymbols {
  private NcclSymbols() {}

  /** The symbols that must be present for the library to count as loaded (every NCCL 2 has them). */
  static final List<String> REQUIRED = List.of(
      "ncclGetVersion", "ncclGetUniqueId", "ncclCommInitRank", "ncclCommDestroy", "ncclCommAbort",
      "ncclCommGetAsyncError", "ncclCommCount", "ncclCommCuDevice", "ncclCommUserRank", "ncclGetErrorString",
      "ncclGroupStart", "ncclGroupEnd", "ncclAllReduce", "ncclBroadcast", "ncclAllGather", "ncclReduceScatter",
      "ncclReduce", "ncclSend", "ncclRecv");
  // Optional, looked up if present and named where they are bound: ncclGetLastError, ncclCommInitRankConfig,
  // ncclCommSplit, ncclCommFinalize, ncclGather, ncclScatter, ncclAlltoAll.

  /**
   * Linked with {@link Linker.Option#critical(boolean) critical(false)}: no thread-state transition around
   * the call. Only for calls inside {@code ncclGroupStart/ncclGroupEnd}, where NCCL only records the call
   * (short, never blocks, never calls back into Java); outside a group a collective launches work and may
   * take locks, so the plain entry is used there.
   */
  static final Linker.Option CRITICAL = Linker.Option.critical(false);

  /** A handle for a required symbol of the loaded NCCL. */
  static MethodHandle handle(String name, FunctionDescriptor descriptor, Linker.Option... options) {
    return NativeLibrary.nccl().downcall(name, descriptor, options);
  }

  /** A handle for an optional symbol, or null where the loaded NCCL lacks it. */
  static MethodHandle handleIfPresent(String name, FunctionDescriptor descriptor, Linker.Option... options) {
    return NativeLibrary.nccl().downcallIfPresent(name, descriptor, options);
  }
}
