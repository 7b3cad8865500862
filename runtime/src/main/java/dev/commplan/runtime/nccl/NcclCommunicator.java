package dev.commplan.runtime.nccl;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.internal.Cuda;
import dev.commplan.runtime.nccl.internal.Nccl;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.PlanRules;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
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
 * check their arguments with the shared {@link PlanRules} (the local backend rejects the same
 * calls with the same messages), then enqueue without allocating on the Java heap. Every CUDA call is made
 * after {@code cudaSetDevice} to this rank's device, on whatever thread calls.
 *
 * <p>{@link #close()} destroys the communicator ({@code ncclCommDestroy}), frees the memory allocated
 * through it and destroys its stream; {@link #abort()} does the same with {@code ncclCommAbort}, which
 * also stops work still running on the device (for a rank whose peers failed).
 *
 * <p><b>Failures.</b> NCCL has no timeout of its own; this class gives every communicator one ({@link
 * CommOptions#timeout()}, default 5 minutes). {@link Stream#synchronize()} never blocks in {@code
 * cudaStreamSynchronize}: it polls {@code cudaStreamQuery} (spinning briefly, then parking), checks
 * {@code ncclCommGetAsyncError} as it goes, and when the timeout passes, or NCCL reports an asynchronous
 * error, calls {@code ncclCommAbort} and throws ({@link CommTimeoutException} naming the plan, step,
 * collective and fields still pending, with the flight record; or {@link NcclException}). After an
 * error code that leaves the communicator usable ({@code ncclInvalidArgument}, {@code ncclInvalidUsage}:
 * NCCL refused the call before enqueueing anything) it stays open; after any other code it is aborted.
 * An aborted communicator refuses every later use with a message saying why. Every step a compiled
 * schedule enqueues is recorded in the {@linkplain #flightRecorder() flight recorder}, with a CUDA event
 * (one per ring slot, made once) recorded after the step's group so that a timeout can name the step
 * still pending.
 */
public final class NcclCommunicator implements Communicator, DeviceMemory.Allocator, CompiledSchedule.Compiler {
  private static final int OPEN = 0;
  private static final int ABORTED = 1;
  private static final int CLOSED = 2;

  private final long comm;
  private final int rank;
  private final int size;
  private final int device;
  private final NcclVersion version;
  private final NcclStream stream;
  /** The stream host copies run on, and the copies themselves (see {@link HostCopies}). */
  private final long copyStream;
  private final HostCopies hostCopies;
  private final Set<NcclMemory> live = ConcurrentHashMap.newKeySet();
  private final MemorySegment asyncErrorScratch = Arena.ofAuto().allocate(JAVA_INT);
  /** The cluster's watchdog polls on its own thread, so it has its own out-parameter. */
  private final MemorySegment watchdogScratch = Arena.ofAuto().allocate(JAVA_INT);
  private final Object lifecycle = new Object();
  private final CommOptions options;
  private final long timeoutNanos;
  private final FlightRecorder recorder;
  /**
   * The system property that turns on a CUDA event per enqueued step ({@value}, default false). With it,
   * a timeout names exactly which of several pending steps is stuck; without it, the oldest step not known
   * to have finished. Off by default, so that {@code execute()} issues nothing but the NCCL calls: on an
   * H200 the {@code cudaEventRecord} added about 0.3 µs per step to ten back-to-back executes of a
   * coalesced step whose NCCL call takes 4.4 µs to enqueue (docs/gpu.md, "Step events").
   */
  public static final String STEP_EVENTS_PROPERTY = "commplan.nccl.stepEvents";

  private final boolean stepEvents;
  /** One CUDA event per flight-recorder slot, recorded after the slot's step; 0 where none (in a group). */
  private final long[] slotEvents;
  private final boolean[] slotHasEvent;
  /** Why this communicator was aborted, for later calls' messages; null while not aborted. */
  private volatile String abortedBecause;
  /** A timeout or async error the cluster's watchdog found (it then aborted us from outside). */
  private volatile CommPlanException watchdogFailure;
  /** When this rank's thread entered a host call that may block on its peers (ncclGroupEnd); 0 if none. */
  private volatile long blockedSince;
  private volatile OperationLabel blockedIn;
  /** The stream of the last direct collective (for the event after a user's group); rank thread only. */
  private long lastDirectStream;

  private volatile int state = OPEN;
  private boolean released;
  /** Set by the cluster when another rank failed: this rank gives up at its next call. */
  private volatile Throwable abortCause;
  private volatile String abortReason;
  private int groupDepth;

  /** Wraps an initialized {@code ncclComm_t} with the default options. */
  NcclCommunicator(long comm, NcclVersion version) {
    this(comm, version, CommOptions.defaults());
  }

  /**
   * Wraps an initialized {@code ncclComm_t}: reads its rank, size and device, creates its stream and the
   * flight recorder's events.
   */
  NcclCommunicator(long comm, NcclVersion version, CommOptions options) {
    this.comm = comm;
    this.version = version;
    this.options = Objects.requireNonNull(options, "options");
    this.timeoutNanos = options.timeout().toNanos();
    this.rank = Checked.ncclCommUserRank(comm);
    this.size = Checked.ncclCommCount(comm);
    this.device = Checked.ncclCommCuDevice(comm);
    this.recorder = new FlightRecorder(rank, FlightRecorder.DEFAULT_CAPACITY);
    this.stepEvents = Boolean.parseBoolean(System.getProperty(STEP_EVENTS_PROPERTY, "false"));
    this.slotEvents = new long[stepEvents ? recorder.capacity() : 0];
    this.slotHasEvent = new boolean[recorder.capacity()];
    Checked.cudaSetDevice(device);
    long s = Checked.cudaStreamCreateNonBlocking();
    long copies = 0;
    try {
      copies = Checked.cudaStreamCreateNonBlocking();
      for (int i = 0; i < slotEvents.length; i++) {
        slotEvents[i] = Checked.cudaEventCreateDisableTiming();
      }
    } catch (RuntimeException e) {
      destroyEvents();
      Cuda.cudaStreamDestroy(s);
      if (copies != 0) {
        Cuda.cudaStreamDestroy(copies);
      }
      throw e;
    }
    this.stream = new NcclStream(this, s, true, options.timeout());
    this.copyStream = copies;
    this.hostCopies = new HostCopies(CudaCopyEngine.INSTANCE, device, copies);
  }

  /** The options (the timeout) this communicator was made with. */
  public CommOptions options() {
    return options;
  }

  /**
   * This rank's flight recorder: the last {@value FlightRecorder#DEFAULT_CAPACITY} steps and direct
   * collectives it enqueued, printed in timeout messages; for debugging. On this backend an entry stays
   * {@code ENQUEUED} until a {@code synchronize()} of the communicator's own stream has seen it finish
   * (or a timeout asked the step's CUDA event).
   */
  public FlightRecorder flightRecorder() {
    return recorder;
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
    NcclMemory memory = NcclMemory.allocate(this, hostCopies, live::remove, bytes);
    live.add(memory);
    return memory;
  }

  NcclMemory wrap(long address, long bytes) {
    ensureUsable();
    NcclMemory memory = new NcclMemory(this, hostCopies, live::remove, address, bytes, false);
    live.add(memory);
    return memory;
  }

  NcclStream wrapStream(long cudaStream) {
    ensureUsable();
    return new NcclStream(this, cudaStream, false, options.timeout());
  }

  @Override
  public CompiledSchedule compile(Schedule schedule) {
    ensureUsable();
    PlanRules.checkSchedule(this, schedule);
    return new NcclCompiledSchedule(this, schedule);
  }

  // ---------------------------------------------------------------- collectives

  @Override
  public void allReduce(Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    ensureUsable();
    long count = PlanRules.checkCollective(Collective.ALL_REDUCE, this, send, recv, op, -1, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), op);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    int nop = NcclArgs.op(op);
    enterBlocking(DIRECT_ALLREDUCE); // outside a group NCCL may wait here for its peers to connect
    int rc = groupDepth > 0
        ? Nccl.ncclAllReduceCritical(sp, rp, count, type, nop, comm, s)
        : Nccl.ncclAllReduce(sp, rp, count, type, nop, comm, s);
    leaveBlocking();
    afterDirectCall(DIRECT_ALLREDUCE, rc, "ncclAllReduce", s);
  }

  @Override
  public void broadcast(Buffer send, Buffer recv, int root, Stream stream) {
    ensureUsable();
    long count = PlanRules.checkCollective(Collective.BROADCAST, this, send, recv, null, root, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), null);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    enterBlocking(DIRECT_BROADCAST); // outside a group NCCL may wait here for its peers to connect
    int rc = groupDepth > 0
        ? Nccl.ncclBroadcastCritical(sp, rp, count, type, root, comm, s)
        : Nccl.ncclBroadcast(sp, rp, count, type, root, comm, s);
    leaveBlocking();
    afterDirectCall(DIRECT_BROADCAST, rc, "ncclBroadcast", s);
  }

  @Override
  public void allGather(Buffer send, Buffer recv, Stream stream) {
    ensureUsable();
    long count = PlanRules.checkCollective(Collective.ALL_GATHER, this, send, recv, null, -1, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), null);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    enterBlocking(DIRECT_ALLGATHER); // outside a group NCCL may wait here for its peers to connect
    int rc = groupDepth > 0
        ? Nccl.ncclAllGatherCritical(sp, rp, count, type, comm, s)
        : Nccl.ncclAllGather(sp, rp, count, type, comm, s);
    leaveBlocking();
    afterDirectCall(DIRECT_ALLGATHER, rc, "ncclAllGather", s);
  }

  @Override
  public void reduceScatter(Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    ensureUsable();
    long count = PlanRules.checkCollective(Collective.REDUCE_SCATTER, this, send, recv, op, -1, stream);
    long s = streamHandle(stream);
    requireSupported(send.dataType(), op);
    long sp = pointer(send);
    long rp = pointer(recv);
    int type = NcclArgs.dataType(send.dataType());
    int nop = NcclArgs.op(op);
    enterBlocking(DIRECT_REDUCESCATTER); // outside a group NCCL may wait here for its peers to connect
    int rc = groupDepth > 0
        ? Nccl.ncclReduceScatterCritical(sp, rp, count, type, nop, comm, s)
        : Nccl.ncclReduceScatter(sp, rp, count, type, nop, comm, s);
    leaveBlocking();
    afterDirectCall(DIRECT_REDUCESCATTER, rc, "ncclReduceScatter", s);
  }

  private static final OperationLabel DIRECT_ALLREDUCE = OperationLabel.direct("all-reduce");
  private static final OperationLabel DIRECT_BROADCAST = OperationLabel.direct("broadcast");
  private static final OperationLabel DIRECT_ALLGATHER = OperationLabel.direct("all-gather");
  private static final OperationLabel DIRECT_REDUCESCATTER = OperationLabel.direct("reduce-scatter");

  /** A direct collective returned {@code rc}: records it (with an event when not in a group) or fails. */
  private void afterDirectCall(OperationLabel label, int rc, String function, long cudaStream) {
    if (rc != 0) {
      throw failed(function, rc);
    }
    lastDirectStream = cudaStream;
    record(label, groupDepth == 0 ? cudaStream : 0);
  }

  @Override
  public void groupStart() {
    ensureUsable();
    int rc = Nccl.ncclGroupStart();
    if (rc != 0) {
      throw failed("ncclGroupStart", rc);
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
    enterBlocking(null);
    int rc = Nccl.ncclGroupEnd();
    leaveBlocking();
    if (rc != 0) {
      throw failed("ncclGroupEnd", rc);
    }
    if (groupDepth == 0) {
      markLastWithEvent(lastDirectStream); // the group's calls are launched now: one event covers them
    }
  }

  // ---------------------------------------------------------------- failures: error codes, watchdog, record

  /** Whether {@code rc} leaves the communicator unusable, so that it must be aborted ({@link NcclResult#isFatal()}). */
  static boolean isFatal(int rc) {
    return NcclResult.of(rc).isFatal();
  }

  /**
   * The exception for NCCL's {@code function} returning {@code rc}; after a fatal code the communicator is
   * aborted ({@code ncclCommAbort}) first. If the cluster's watchdog aborted this communicator (the call
   * returned because of that), its timeout or async error instead.
   */
  RuntimeException failed(String function, int rc) {
    NcclException e = Checked.ncclError(function, rc, comm); // before any abort: it reads the comm's last error
    CommPlanException watchdog = watchdogFailure;
    if (watchdog != null) {
      RuntimeException w = rethrowable(watchdog);
      w.addSuppressed(e);
      return w;
    }
    if (isFatal(rc) && state == OPEN) {
      abortedBecause = function + " failed with " + NcclResult.of(rc).cName() + " (" + rc + "), which is fatal";
      try {
        abort();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      e.addSuppressed(new CommPlanException("rank " + rank + "'s communicator was aborted (ncclCommAbort) because "
          + NcclResult.of(rc).cName() + " is fatal; make a new communicator"));
    }
    return e;
  }

  /** The watchdog's failure again, for this thread (its own stack), caused by the original. */
  private static RuntimeException rethrowable(CommPlanException e) {
    if (e instanceof CommTimeoutException t) {
      return new CommTimeoutException(t);
    }
    if (e instanceof NcclException n) {
      NcclException again = new NcclException(n.function(), n.rawCode(), n.errorString(), n.lastError());
      again.initCause(n);
      return again;
    }
    return new CommPlanException(e.getMessage(), e);
  }

  /**
   * Records an operation in the flight recorder; with {@code cudaStream != 0} also its slot's event (if
   * step events are on).
   */
  void record(OperationLabel label, long cudaStream) {
    long seq = recorder.enqueued(label, System.nanoTime());
    int slot = recorder.slot(seq);
    slotHasEvent[slot] = false;
    if (cudaStream != 0) {
      recordEvent(slot, cudaStream);
    }
  }

  /** After a user's group: the last recorded operation gets the event (the group's calls finish together). */
  private void markLastWithEvent(long cudaStream) {
    long next = recorder.nextSequence();
    if (next > 0 && cudaStream != 0) {
      recordEvent(recorder.slot(next - 1), cudaStream);
    }
  }

  /** Records the slot's CUDA event on the stream; does nothing with step events off (there are no events). */
  private void recordEvent(int slot, long cudaStream) {
    if (!stepEvents) {
      return;
    }
    int rc = Cuda.cudaEventRecord(slotEvents[slot], cudaStream);
    if (rc != 0) {
      throw Checked.cudaError("cudaEventRecord (flight recorder)", rc);
    }
    slotHasEvent[slot] = true;
  }

  /** This rank's thread enters a host call that may wait for its peers; the cluster's watchdog times it. */
  void enterBlocking(OperationLabel label) {
    blockedIn = label;
    blockedSince = System.nanoTime();
  }

  void leaveBlocking() {
    blockedSince = 0;
  }

  /**
   * Asks the CUDA events which recorded operations have finished, marks them, and returns the oldest
   * that has not (null when all have). For failure paths; allocates.
   */
  private FlightRecorder.Entry pendingOperation() {
    List<FlightRecorder.Entry> entries = recorder.snapshot();
    long now = System.nanoTime();
    for (int i = entries.size() - 1; i >= 0; i--) {
      FlightRecorder.Entry e = entries.get(i);
      int slot = recorder.slot(e.sequence());
      if (!slotHasEvent[slot]) {
        continue;
      }
      boolean done;
      try {
        done = Checked.cudaEventQuery(slotEvents[slot]);
      } catch (RuntimeException failure) {
        break; // the device is in trouble; the record stays as it is
      }
      if (done) {
        recorder.finishedBefore(e.sequence() + 1, now); // stream order: everything up to it is done
        break;
      }
    }
    return recorder.oldestPending();
  }

  private CommTimeoutException timeout(long waitedNanos, String where) {
    FlightRecorder.Entry pending = pendingOperation();
    OperationLabel what = pending != null ? pending.label() : blockedIn;
    String whatText = what != null ? what.toString() : "work enqueued on the stream (not recorded)";
    String summary = "nccl backend: rank " + rank + " (device " + device + ") timed out after "
        + options.timeout() + " " + where + ": " + whatText + " is still pending"
        + (pending != null ? " (operation #" + pending.sequence() + (stepEvents
            ? "; the operations before it finished)"
            : ", the oldest not known to have finished; -D" + STEP_EVENTS_PROPERTY + "=true tells which exactly)") : "")
        + " after " + Duration.ofNanos(waitedNanos) + ". A rank that stopped, skipped a collective, or issues"
        + " its collectives in another order or with other sizes leaves the others waiting; NCCL does not say"
        + " which. The communicator was aborted (ncclCommAbort); set the timeout with CommOptions.timeout.";
    CommTimeoutException e = new CommTimeoutException(summary, what != null ? what.planName() : null,
        what != null ? what.step() : -1, what != null ? what.collective() : "unknown",
        what != null ? what.fields() : List.of(), rank, options.timeout(), List.of(), recorder.format(), null);
    recorder.failPending(System.nanoTime());
    return e;
  }

  /**
   * Called often by the cluster's thread while this rank's task runs: times a host call that blocks on
   * peers ({@code ncclGroupEnd} of a blocking communicator can), and polls {@code ncclCommGetAsyncError}
   * when {@code pollAsync}. On a timeout or an async error it records the failure and aborts the
   * communicator from outside, which makes the blocked call return; the rank's thread then throws it.
   */
  void watch(long now, boolean pollAsync) {
    if (state != OPEN || watchdogFailure != null) {
      return;
    }
    long since = blockedSince;
    if (since != 0 && now - since > timeoutNanos) {
      OperationLabel in = blockedIn;
      String summary = "nccl backend: rank " + rank + " (device " + device + ") timed out after " + options.timeout()
          + " blocked in ncclGroupEnd" + (in != null ? " of " + in : "") + " (NCCL waits there for its peers"
          + " to connect); the cluster's watchdog aborted the communicator (ncclCommAbort)";
      watchdogFailure = new CommTimeoutException(summary, in != null ? in.planName() : null,
          in != null ? in.step() : -1, in != null ? in.collective() : "ncclGroupEnd",
          in != null ? in.fields() : List.of(), rank, options.timeout(), List.of(), recorder.format(), null);
      abortedBecause = summary;
      abortFromOutside();
      return;
    }
    if (pollAsync) {
      NcclException e;
      // Under the lifecycle lock: abort and close change the state under it before they free the comm,
      // so the comm cannot be freed while this thread asks it.
      synchronized (lifecycle) {
        if (state != OPEN) {
          return;
        }
        int rc = Nccl.ncclCommGetAsyncError(comm, watchdogScratch);
        int async = rc == 0 ? watchdogScratch.get(JAVA_INT, 0) : rc;
        if (async == 0 || async == NcclResult.IN_PROGRESS.code()) {
          return;
        }
        e = Checked.ncclError("ncclCommGetAsyncError (rank " + rank + ", seen by the cluster's watchdog)", async,
            comm);
      }
      watchdogFailure = e;
      abortedBecause = e.getMessage();
      abortFromOutside();
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
    CommPlanException watchdog = watchdogFailure;
    if (watchdog != null) {
      return rethrowable(watchdog);
    }
    Throwable cause = abortCause;
    if (cause != null) {
      return new RankAbortedException("rank " + rank + " was aborted: " + abortReason, cause);
    }
    String why = abortedBecause;
    if (state == ABORTED || why != null) {
      return new IllegalStateException(this + " was aborted (ncclCommAbort)"
          + (why != null ? " after " + why : " by abort()") + "; it cannot be used any more, make a new communicator");
    }
    return new IllegalStateException(this + " is closed");
  }

  private void giveUp() {
    abort();
    throw new RankAbortedException("rank " + rank + " was aborted: " + abortReason, abortCause);
  }

  /**
   * Waits for {@code s}: polls {@code cudaStreamQuery}, spinning at first and then parking briefly, so
   * that a request to abort (another rank failed), an asynchronous NCCL error ({@code
   * ncclCommGetAsyncError}) or the timeout is seen while waiting. A rank whose peer is gone would
   * otherwise wait forever in {@code cudaStreamSynchronize}; here it calls {@code ncclCommAbort} on its
   * own thread, which stops its kernels, and throws: {@link RankAbortedException}, {@link NcclException},
   * or {@link CommTimeoutException} naming the step still pending (from the flight recorder's events).
   * Allocates nothing while it waits.
   */
  void synchronize(NcclStream s, Duration timeout) {
    ensureUsable();
    useDevice();
    long handle = s.handle();
    long start = System.nanoTime();
    long deadline = start + timeout.toNanos();
    int polls = 0;
    while (!queryOrAbort(handle)) {
      if (abortCause != null) {
        giveUp();
      }
      if (state != OPEN) {
        throw notUsable(); // the cluster's watchdog aborted this communicator (it says why)
      }
      if ((++polls & 0xff) == 0) {
        checkAsyncError();
      }
      long now = System.nanoTime();
      if (now - deadline > 0) {
        CommTimeoutException e = timeout(now - start, "in synchronize() of " + s);
        abortedBecause = e.summary();
        abortQuietly(e);
        throw e;
      }
      if (now - start < 2_000_000L) {
        Thread.onSpinWait();
      } else {
        LockSupport.parkNanos(20_000L);
      }
    }
    checkAsyncError();
    if (s == stream) {
      recorder.finishedBefore(recorder.nextSequence(), System.nanoTime());
    }
  }

  /** {@code cudaStreamQuery}; a CUDA error there (a kernel faulted) is fatal: abort, then throw it. */
  private boolean queryOrAbort(long handle) {
    try {
      return Checked.cudaStreamQuery(handle);
    } catch (CudaException e) {
      abortedBecause = e.getMessage();
      abortQuietly(e);
      throw e;
    }
  }

  private void checkAsyncError() {
    NcclException e;
    // Under the lifecycle lock, as in watch(): the cluster's watchdog may abort (free) the comm meanwhile.
    synchronized (lifecycle) {
      if (state != OPEN) {
        throw notUsable();
      }
      int async = Checked.ncclCommGetAsyncError(comm, asyncErrorScratch);
      if (async == 0 || async == NcclResult.IN_PROGRESS.code()) {
        return;
      }
      e = Checked.ncclError("ncclCommGetAsyncError (rank " + rank + ")", async, comm);
    }
    // An asynchronous error leaves the communicator broken: NCCL's documented answer is ncclCommAbort.
    abortedBecause = e.getMessage();
    recorder.failPending(System.nanoTime());
    abortQuietly(e);
    throw e;
  }

  private void abortQuietly(RuntimeException into) {
    try {
      abort();
    } catch (RuntimeException e) {
      into.addSuppressed(e);
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
    try {
      Checked.cudaStreamDestroy(copyStream);
    } catch (RuntimeException e) {
      failure = add(failure, e);
    }
    destroyEvents();
    return failure;
  }

  private void destroyEvents() {
    for (int i = 0; i < slotEvents.length; i++) {
      if (slotEvents[i] != 0) {
        Cuda.cudaEventDestroy(slotEvents[i]); // best effort: nothing useful to do if it fails
        slotEvents[i] = 0;
      }
    }
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
