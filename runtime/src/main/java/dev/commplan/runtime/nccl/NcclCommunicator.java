package dev.commplan.runtime.nccl;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.internal.Cuda;
import dev.commplan.runtime.nccl.internal.Nccl;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.spi.CollectiveChecks;
import dev.commplan.runtime.spi.CompiledSchedule;
import dev.commplan.runtime.spi.DeviceMemory;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * One rank of an NCCL communicator ({@code ncclComm_t}) on one GPU, with its own non-blocking CUDA
 * stream. Made by {@link NcclBackend#cluster} (one per GPU of this process) or {@link
 * NcclBackend#initRank} (one rank of a group spread over processes).
 *
 * <p>Like the {@code ncclComm_t} under it, a communicator is used by one thread at a time. Collectives
 * check their arguments with the shared {@link CollectiveChecks} (the local backend rejects the same
 * calls with the same messages), then enqueue without allocating on the Java heap. Every CUDA call is made
 * after {@code cudaSetDevice} to this rank's device, on whatever thread calls.
 *
 * <p>{@link #close()} destroys the communicator ({@code ncclCommDestroy}), frees the memory allocated
 * through it and destroys its stream; {@link #abort()} does the same with {@code ncclCommAbort}, which
 * also stops work still running on the device (for a rank whose peers failed).
 */
public final class NcclCommunicator implements Communicator {
  private static final int OPEN = 0;
  private static final int ABORTED = 1;
  private static final int CLOSED = 2;

  private final long comm;
  private final int rank;
  private final int size;
  private final int device;
  private final NcclVersion version;
  private final NcclStream stream;
  private final Set<NcclMemory> live = ConcurrentHashMap.newKeySet();
  private final MemorySegment asyncErrorScratch = Arena.ofAuto().allocate(JAVA_INT);
  private final Object lifecycle = new Object();

  private volatile int state = OPEN;
  private boolean released;
  /** Set by the cluster when another rank failed: this rank gives up at its next call. */
  private volatile Throwable abortCause;
  private volatile String abortReason;
  private int groupDepth;

  /** Wraps an initialized {@code ncclComm_t}: reads its rank, size and device, and creates its stream. */
  NcclCommunicator(long comm, NcclVersion version) {
    this.comm = comm;
    this.version = version;
    this.rank = Checked.ncclCommUserRank(comm);
    this.size = Checked.ncclCommCount(comm);
    this.device = Checked.ncclCommCuDevice(comm);
    Checked.cudaSetDevice(device);
    this.stream = new NcclStream(this, Checked.cudaStreamCreateNonBlocking(), true);
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return size;
  }

  /** The CUDA device this rank runs on. */
  public int device() {
    return device;
  }

  /** The NCCL library's version. */
  public NcclVersion ncclVersion() {
    return version;
  }

  @Override
  public Stream stream() {
    return stream;
  }

  @Override
  public String backendName() {
    return "nccl";
  }

  long handle() {
    return comm;
  }

  // ---------------------------------------------------------------- memory, schedules

  @Override
  public DeviceMemory allocate(long bytes) {
    ensureUsable();
    NcclMemory memory = NcclMemory.allocate(this, bytes);
    live.add(memory);
    return memory;
  }

  NcclMemory wrap(long address, long bytes) {
    ensureUsable();
    NcclMemory memory = new NcclMemory(this, address, bytes, false);
    live.add(memory);
    return memory;
  }

  NcclStream wrapStream(long cudaStream) {
    ensureUsable();
    return new NcclStream(this, cudaStream, false);
  }

  void forget(NcclMemory memory) {
    live.remove(memory);
  }

  @Override
  public CompiledSchedule compile(Schedule schedule) {
    ensureUsable();
    CollectiveChecks.checkSchedule(this, schedule);
    return new NcclCompiledSchedule(this, schedule);
  }

  // ---------------------------------------------------------------- collectives

  @Override
  public void allReduce(Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    ensureUsable();
    long count = CollectiveChecks.checkAllReduce(this, send, recv, op, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), op);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    int nop = NcclArgs.op(op);
    int rc = groupDepth > 0
        ? Nccl.ncclAllReduceCritical(sp, rp, count, type, nop, comm, s)
        : Nccl.ncclAllReduce(sp, rp, count, type, nop, comm, s);
    if (rc != 0) {
      throw Checked.ncclError("ncclAllReduce", rc, comm);
    }
  }

  @Override
  public void broadcast(Buffer send, Buffer recv, int root, Stream stream) {
    ensureUsable();
    long count = CollectiveChecks.checkBroadcast(this, send, recv, root, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), null);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    int rc = groupDepth > 0
        ? Nccl.ncclBroadcastCritical(sp, rp, count, type, root, comm, s)
        : Nccl.ncclBroadcast(sp, rp, count, type, root, comm, s);
    if (rc != 0) {
      throw Checked.ncclError("ncclBroadcast", rc, comm);
    }
  }

  @Override
  public void allGather(Buffer send, Buffer recv, Stream stream) {
    ensureUsable();
    long count = CollectiveChecks.checkAllGather(this, send, recv, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), null);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    int rc = groupDepth > 0
        ? Nccl.ncclAllGatherCritical(sp, rp, count, type, comm, s)
        : Nccl.ncclAllGather(sp, rp, count, type, comm, s);
    if (rc != 0) {
      throw Checked.ncclError("ncclAllGather", rc, comm);
    }
  }

  @Override
  public void reduceScatter(Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    ensureUsable();
    long count = CollectiveChecks.checkReduceScatter(this, send, recv, op, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), op);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    int nop = NcclArgs.op(op);
    int rc = groupDepth > 0
        ? Nccl.ncclReduceScatterCritical(sp, rp, count, type, nop, comm, s)
        : Nccl.ncclReduceScatter(sp, rp, count, type, nop, comm, s);
    if (rc != 0) {
      throw Checked.ncclError("ncclReduceScatter", rc, comm);
    }
  }

  @Override
  public void groupStart() {
    ensureUsable();
    int rc = Nccl.ncclGroupStart();
    if (rc != 0) {
      throw Checked.ncclError("ncclGroupStart", rc, comm);
    }
    groupDepth++;
  }

  @Override
  public void groupEnd() {
    ensureUsable();
    if (groupDepth == 0) {
      throw new IllegalStateException("groupEnd() without a matching groupStart() on " + this);
    }
    groupDepth--;
    int rc = Nccl.ncclGroupEnd();
    if (rc != 0) {
      throw Checked.ncclError("ncclGroupEnd", rc, comm);
    }
  }

  /** Whether a group opened by {@link #groupStart()} is open. */
  boolean inGroup() {
    return groupDepth > 0;
  }

  // ---------------------------------------------------------------- helpers for this package

  /** The device address of {@code buffer}'s first element (the buffer was checked to be ours and open). */
  static long pointer(Buffer buffer) {
    if (!(buffer.memory() instanceof NcclMemory memory)) {
      throw new IllegalArgumentException(buffer + " is not NCCL backend memory (allocate it through an NCCL"
          + " communicator, or wrap the device pointer with NcclInterop.wrapDevicePointer)");
    }
    return memory.address() + buffer.byteOffset();
  }

  /** The {@code cudaStream_t} of {@code stream}, which must be a stream of this communicator. */
  long streamHandle(Stream stream) {
    Objects.requireNonNull(stream, "stream");
    if (stream instanceof NcclStream ns && ns.communicator() == this) {
      if (ns.isDestroyed()) {
        throw new IllegalStateException(ns + " was destroyed");
      }
      return ns.handle();
    }
    throw new IllegalArgumentException("the stream " + stream + " is not a stream of " + this
        + ": use its stream() or a stream made by NcclInterop.wrapStream for it");
  }

  /** {@code ncclAvg} and {@code ncclBfloat16} need NCCL 2.10.3 or newer. */
  void requireSupported(DataType type, ReduceOp op) {
    if (version.atLeast(NcclVersion.AVG_AND_BF16)) {
      return;
    }
    if (op == ReduceOp.AVG) {
      throw new BackendUnavailableException("ReduceOp.AVG (ncclAvg) needs NCCL " + NcclVersion.AVG_AND_BF16
          + " or newer, and this process loaded NCCL " + version + "; use SUM and divide, or a newer NCCL");
    }
    if (type == DataType.BF16) {
      throw new BackendUnavailableException("DataType.BF16 (ncclBfloat16) needs NCCL "
          + NcclVersion.AVG_AND_BF16 + " or newer, and this process loaded NCCL " + version);
    }
  }

  void useDevice() {
    Checked.cudaSetDevice(device);
  }

  void useDeviceQuietly() {
    Cuda.cudaSetDevice(device);
  }

  /** Throws if this communicator was closed or aborted; gives up if the cluster asked it to. */
  void ensureUsable() {
    if (state != OPEN) {
      throw notUsable();
    }
    if (abortCause != null) {
      giveUp();
    }
  }

  private RuntimeException notUsable() {
    Throwable cause = abortCause;
    if (cause != null) {
      return new RankAbortedException("rank " + rank + " was aborted: " + abortReason, cause);
    }
    return new IllegalStateException(this + " is " + (state == CLOSED ? "closed" : "aborted"));
  }

  private void giveUp() {
    abort();
    throw new RankAbortedException("rank " + rank + " was aborted: " + abortReason, abortCause);
  }

  /**
   * Waits for {@code s}: polls {@code cudaStreamQuery}, spinning at first and then parking briefly, so
   * that a request to abort (another rank failed) or an asynchronous NCCL error ({@code
   * ncclCommGetAsyncError}) is seen while waiting. A rank whose peer is gone would otherwise wait
   * forever in {@code cudaStreamSynchronize}; here it calls {@code ncclCommAbort} on its own thread,
   * which stops its kernels, and throws.
   */
  void synchronize(NcclStream s) {
    ensureUsable();
    useDevice();
    long handle = s.handle();
    long start = System.nanoTime();
    int polls = 0;
    while (!Checked.cudaStreamQuery(handle)) {
      if (abortCause != null) {
        giveUp();
      }
      if ((++polls & 0xff) == 0) {
        checkAsyncError();
      }
      if (System.nanoTime() - start < 2_000_000L) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(20_000L);
      }
    }
    checkAsyncError();
  }

  private void checkAsyncError() {
    int async = Checked.ncclCommGetAsyncError(comm, asyncErrorScratch);
    if (async != 0 && async != NcclResult.IN_PROGRESS.code()) {
      throw Checked.ncclError("ncclCommGetAsyncError (rank " + rank + ")", async, comm);
    }
  }

  /** Asks this rank to give up at its next call (another rank failed); any thread may call it. */
  void requestAbort(String reason, Throwable cause) {
    abortReason = reason;
    abortCause = cause;
  }

  /**
   * {@code ncclCommAbort} only, from another thread, for a rank that did not give up by itself (it is
   * blocked inside NCCL or CUDA): NCCL documents abort as the way to stop such a call. Memory and stream
   * are released later by {@link #close()}.
   */
  void abortFromOutside() {
    synchronized (lifecycle) {
      if (state != OPEN) {
        return;
      }
      state = ABORTED;
    }
    Nccl.ncclCommAbort(comm);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Aborts this rank: {@code ncclCommAbort} (which also stops its work running on the device), then frees
   * the memory allocated through it and destroys its stream. Idempotent; a no-op after {@link #close()}.
   * Call it from the rank's own thread, or when no other thread uses the communicator.
   */
  public void abort() {
    synchronized (lifecycle) {
      if (state != OPEN) {
        return;
      }
      state = ABORTED;
    }
    int rc = Nccl.ncclCommAbort(comm);
    RuntimeException failure = release(null);
    if (rc != 0) {
      throw Checked.ncclError("ncclCommAbort", rc, 0);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Whether {@link #abort()} (or the cluster) aborted this communicator. */
  public boolean isAborted() {
    return state == ABORTED || (state == CLOSED && abortCause != null);
  }

  @Override
  public boolean isClosed() {
    return state != OPEN;
  }

  @Override
  public void close() {
    int previous;
    synchronized (lifecycle) {
      previous = state;
      if (previous == CLOSED) {
        return;
      }
      state = CLOSED;
    }
    RuntimeException failure = null;
    if (previous == OPEN) {
      int rc = Nccl.ncclCommDestroy(comm);
      if (rc != 0) {
        failure = Checked.ncclError("ncclCommDestroy", rc, 0);
      }
    }
    failure = release(failure);
    if (failure != null) {
      throw failure;
    }
  }

  /** Frees the memory allocated through this communicator and destroys its stream, once. */
  private RuntimeException release(RuntimeException failure) {
    synchronized (lifecycle) {
      if (released) {
        return failure;
      }
      released = true;
    }
    useDeviceQuietly();
    for (NcclMemory memory : new ArrayList<>(live)) {
      try {
        memory.close();
      } catch (RuntimeException e) {
        failure = add(failure, e);
      }
    }
    try {
      stream.destroy();
    } catch (RuntimeException e) {
      failure = add(failure, e);
    }
    return failure;
  }

  private static RuntimeException add(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }

  /** The live allocations, for tests. */
  List<NcclMemory> liveMemory() {
    return List.copyOf(live);
  }

  @Override
  public String toString() {
    return "NcclCommunicator[rank " + rank + " of " + size + ", device " + device + "]";
  }
}
