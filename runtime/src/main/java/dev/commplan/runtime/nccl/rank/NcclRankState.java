package dev.commplan.runtime.nccl.rank;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.guard.Failures;
import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.nccl.NcclResult;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.LockSupport;

/**
 * One rank's lifecycle and failure state, which its communicator, streams and compiled schedules all ask
 * before they touch NCCL: OPEN, then ABORTED or CLOSED (one atomic field with named transitions, as in
 * {@code FutureTask}), why it was aborted, and an abort that another rank's failure asked for. Its
 * {@link NcclWatchdog} times the host call the rank is blocked in and aborts it from outside.
 *
 * <p>NCCL has no timeout of its own, so waiting lives here too ({@link #awaitStream}): it polls {@code
 * cudaStreamQuery} rather than block in {@code cudaStreamSynchronize}, checks {@code
 * ncclCommGetAsyncError} as it goes, and on the timeout, an asynchronous error or a request to give up
 * calls {@code ncclCommAbort} on the rank's own thread and throws. After a code NCCL documents as leaving
 * the communicator usable ({@code ncclInvalidArgument}, {@code ncclInvalidUsage}) it stays open; after
 * any other it is aborted, and every later use says why.
 *
 * <p>Every transition out of OPEN destroys the rank's CUDA graphs ({@link RankGraphs#destroyAll}) before
 * it calls {@code ncclCommDestroy} or {@code ncclCommAbort}: NCCL waits in both until no graph that
 * captured the communicator is left, so the other order would hang. Captured plans then refuse to launch,
 * naming why.
 *
 * <p>A communicator and its splits are one {@link NcclFamily}: every transition to ABORTED but the
 * family's own ({@link #abortWithFamily}) is reported to it, and it aborts the other members.
 */
public final class NcclRankState implements NcclFamily.Member {
  private static final int OPEN = 0;
  private static final int ABORTED = 1;
  private static final int CLOSED = 2;

  /** What aborting and closing free: the communicator's memory, streams and events. */
  public interface Resources {
    /** Frees them once; returns {@code failure} with anything that failed added (or the first failure). */
    RuntimeException release(RuntimeException failure);
  }

  private final long comm;
  private final int rank;
  private final int size;
  private final int device;
  /** The group's label ({@code world}, {@code axis tp of mesh [dp=2, tp=4]}), for messages. */
  private final String label;
  private final NcclFamily family;
  private final Duration timeout;
  private final StepEvents events;
  private final RankGraphs graphs;
  private final Resources resources;
  private final AtomicInteger state = new AtomicInteger(OPEN);
  /** Held while the comm is asked something from another thread, so that it cannot be freed meanwhile. */
  private final Object lifecycle = new Object();
  private final MemorySegment asyncErrorScratch = Arena.ofAuto().allocate(JAVA_INT);
  /** Why the communicator was aborted, for later calls' messages; null while not aborted. */
  private volatile String abortedBecause;
  /** Set when another rank failed: this rank gives up at its next call. */
  private volatile Throwable requestedCause;
  private volatile String requestedReason;
  /** The failure of another member of the family that aborted this one ({@link #abortWithFamily}); or null. */
  private volatile NcclFamily.Failure familyFailure;
  /** Times the host call the rank may be blocked in, and polls asynchronous errors, from another thread. */
  private final NcclWatchdog watchdog;
  private boolean released; // guarded by lifecycle
  private volatile CloseTimeline closeTimeline; // where close's time went, for probes

  public NcclRankState(long comm, int rank, int size, int device, String label, NcclFamily family, Duration timeout,
      StepEvents events, RankGraphs graphs, Resources resources) {
    this.comm = comm;
    this.rank = rank;
    this.size = size;
    this.device = device;
    this.label = label;
    this.family = family;
    this.timeout = timeout;
    this.events = events;
    this.graphs = graphs;
    this.resources = resources;
    this.watchdog = new NcclWatchdog(this, comm, rank, device, timeout, events);
  }

  // ---------------------------------------------------------------- asking

  /** Throws if the communicator was closed or aborted; gives up (aborts, throws) if the cluster asked it to. */
  public void ensureUsable() {
    if (state.get() != OPEN) {
      throw notUsable();
    }
    if (requestedCause != null) {
      giveUp();
    }
  }

  public boolean isOpen() {
    return state.get() == OPEN;
  }

  /** Whether it left OPEN or was asked to give up: a rank waiting for its peers on the host stops waiting. */
  public boolean toldToStop() {
    return state.get() != OPEN || requestedCause != null;
  }

  /** Whether it was aborted: by itself, by {@code abort()}, by the cluster, or with its family. */
  public boolean isAborted() {
    int s = state.get();
    return s == ABORTED || (s == CLOSED && (requestedCause != null || familyFailure != null));
  }

  /** The exception a use of this communicator throws once it has left OPEN: it says why. */
  public RuntimeException notUsable() {
    CommPlanException found = watchdog.failure();
    if (found != null) {
      return NcclBlockedCall.rethrowable(found);
    }
    Throwable cause = requestedCause;
    if (cause != null) {
      return new RankAbortedException(rankText() + " was aborted: " + requestedReason, cause);
    }
    NcclFamily.Failure f = familyFailure;
    if (f != null) {
      return new RankAbortedException(who() + " was aborted (ncclCommAbort) because its family failed: " + f
          + " (a communicator and its splits fail together); make a new communicator", f.cause());
    }
    String why = abortedBecause;
    if (state.get() == ABORTED || why != null) {
      return new IllegalStateException(describe() + " was aborted (ncclCommAbort)"
          + (why != null ? " after " + why : " by abort()") + "; it cannot be used any more, make a new communicator");
    }
    return new IllegalStateException(describe() + " is closed");
  }

  private void giveUp() {
    abort();
    throw new RankAbortedException(rankText() + " was aborted: " + requestedReason, requestedCause);
  }

  // ---------------------------------------------------------------- error codes

  /** Whether {@code rc} leaves the communicator unusable, so that it must be aborted ({@link NcclResult#isFatal()}). */
  public static boolean isFatal(int rc) {
    return NcclResult.of(rc).isFatal();
  }

  /**
   * The exception for NCCL's {@code function} returning {@code rc}; after a fatal code the communicator is
   * aborted ({@code ncclCommAbort}) first. If the cluster's watchdog aborted the communicator (the call
   * returned because of that), its timeout or async error instead.
   */
  public RuntimeException failed(String function, int rc) {
    NcclException e = CheckedNccl.ncclError(function, rc, comm); // before any abort: it reads the comm's last error
    if (watchdog.failure() != null || familyFailure != null) { // the call returned because the comm was aborted
      RuntimeException why = notUsable();
      why.addSuppressed(e);
      return why;
    }
    if (isFatal(rc) && state.get() == OPEN) {
      abortedBecause = function + " failed with " + NcclResult.of(rc).cName() + " (" + rc + "), which is fatal";
      try {
        abort();
      } catch (RuntimeException suppressed) {
        e.addSuppressed(suppressed);
      }
      e.addSuppressed(new CommPlanException(rankText() + "'s communicator was aborted (ncclCommAbort) because "
          + NcclResult.of(rc).cName() + " is fatal; make a new communicator"));
    }
    return e;
  }

  // ---------------------------------------------------------------- waiting

  /** {@return the watchdog that times this rank's blocking host calls (they mark themselves there)} */
  public NcclWatchdog watchdog() {
    return watchdog;
  }

  /** The lock held while the comm is asked something from another thread, so that it cannot be freed meanwhile. */
  public Object lifecycle() {
    return lifecycle;
  }

  /** Records why the communicator is being aborted, for later calls' messages (the watchdog's finding). */
  public void abortedBecause(String why) {
    abortedBecause = why;
  }

  /**
   * Waits for {@code cudaStream}: polls {@code cudaStreamQuery}, spinning at first and then parking
   * briefly, so that a request to give up, an asynchronous NCCL error or the timeout is seen while
   * waiting; on any of them calls {@code ncclCommAbort} on this thread and throws ({@link
   * RankAbortedException}, {@link NcclException}, or {@link CommTimeoutException} naming the operation
   * still pending). Allocates nothing while it waits.
   *
   * @param where the stream, named in a timeout's message (its text is made only then, not at every wait)
   * @param ownStream whether it is the communicator's own stream, after which every recorded operation
   *     that names no stream (one of a user's group, a graph launch) has finished too
   */
  public void awaitStream(long cudaStream, Duration limit, Object where, boolean ownStream) {
    long start = System.nanoTime();
    await(cudaStream, false, limit, where, "synchronize() of ");
    events.finishedOn(cudaStream, ownStream, start);
  }

  /**
   * {@link #awaitStream} for a CUDA event ({@code Event.synchronize()}): polls {@code cudaEventQuery}, which
   * says whether the work the event's record captured has completed, with the same timeout and failures.
   */
  public void awaitEvent(long cudaEvent, Duration limit, Object where) {
    await(cudaEvent, true, limit, where, "synchronize() of ");
  }

  /** {@code cudaEventQuery} of a usable communicator's event ({@code Event.isDone()}); a CUDA error aborts. */
  public boolean queryEvent(long cudaEvent) {
    ensureUsable();
    CheckedCuda.cudaSetDevice(device);
    return queryOrAbort(cudaEvent, true);
  }

  private void await(long handle, boolean event, Duration limit, Object where, String doing) {
    ensureUsable();
    CheckedCuda.cudaSetDevice(device);
    long start = System.nanoTime();
    long deadline = start + limit.toNanos();
    int polls = 0;
    while (!queryOrAbort(handle, event)) {
      if (requestedCause != null) {
        giveUp();
      }
      if (state.get() != OPEN) {
        throw notUsable(); // the cluster's watchdog aborted this communicator (it says why)
      }
      if ((++polls & 0xff) == 0) {
        checkAsyncError();
      }
      long now = System.nanoTime();
      if (now - deadline > 0) {
        CommTimeoutException e = timedOut(now - start, limit, "in " + doing + where);
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
  }

  /** {@code cudaStreamQuery} or {@code cudaEventQuery}; a CUDA error there (a kernel faulted) is fatal: abort, then throw it. */
  private boolean queryOrAbort(long handle, boolean event) {
    try {
      return event ? CheckedCuda.cudaEventQuery(handle) : CheckedCuda.cudaStreamQuery(handle);
    } catch (CudaException e) {
      abortedBecause = e.getMessage();
      abortQuietly(e);
      throw e;
    }
  }

  private void checkAsyncError() {
    NcclException e;
    // Under the lifecycle lock, as in NcclWatchdog.watch: the watchdog may abort (free) the comm meanwhile.
    synchronized (lifecycle) {
      if (state.get() != OPEN) {
        throw notUsable();
      }
      int async = CheckedNccl.ncclCommGetAsyncError(comm, asyncErrorScratch);
      if (async == 0 || async == NcclResult.IN_PROGRESS.code()) {
        return;
      }
      e = CheckedNccl.ncclError("ncclCommGetAsyncError (rank " + rank + ")", async, comm);
    }
    // An asynchronous error leaves the communicator broken: NCCL's documented answer is ncclCommAbort.
    abortedBecause = e.getMessage();
    events.recorder().failPending(System.nanoTime());
    abortQuietly(e);
    throw e;
  }

  private CommTimeoutException timedOut(long waitedNanos, Duration limit, String where) {
    FlightRecorder.Entry pending = events.pendingOperation();
    OperationLabel what = pending != null ? pending.label() : watchdog.blockedLabel();
    String whatText = what != null ? what.toString() : "work enqueued on the stream (not recorded)";
    String summary = "nccl backend: " + rankText() + " (device " + device + ") timed out after "
        + limit + " " + where + ": " + whatText + " is still pending"
        + (pending != null ? " (operation #" + pending.sequence() + (events.enabled()
            ? "; the operations before it finished)"
            : ", the oldest not known to have finished; -D" + StepEvents.PROPERTY + "=true tells which exactly)") : "")
        + " after " + Duration.ofNanos(waitedNanos) + ". A rank that stopped, skipped a collective, or issues"
        + " its collectives in another order or with other sizes leaves the others waiting; NCCL does not say"
        + " which. The communicator was aborted (ncclCommAbort); set the timeout with CommOptions.timeout.";
    CommTimeoutException e = new CommTimeoutException(summary, what != null ? what.planName() : null,
        what != null ? what.step() : -1, what != null ? what.collective() : "unknown",
        what != null ? what.fields() : List.of(), rank, limit, List.of(), events.recorder().format(), null);
    events.recorder().failPending(System.nanoTime());
    return e;
  }

  // ---------------------------------------------------------------- transitions

  /** Asks this rank to give up at its next call (another rank failed); any thread may call it. */
  public void requestAbort(String reason, Throwable cause) {
    requestedReason = reason;
    requestedCause = cause;
  }

  /**
   * OPEN → ABORTED with {@code ncclCommAbort} only, from another thread, for a rank that did not give up
   * by itself (it is blocked inside NCCL or CUDA): NCCL documents abort as the way to stop such a call.
   * Memory and streams are released later, by the rank's own close or abort. The family is told.
   */
  public void abortFromOutside() {
    synchronized (lifecycle) {
      if (!state.compareAndSet(OPEN, ABORTED)) {
        return;
      }
    }
    graphs.destroyAll("its communicator was aborted", null); // best effort: the abort must go on
    CheckedNccl.ncclCommAbortQuietly(comm);
    tellFamily();
  }

  /**
   * OPEN → ABORTED because another member of the family failed ({@link NcclFamily}): as {@link
   * #abortFromOutside()}, but the family is not told again, and later uses name {@code failure}.
   */
  @Override
  public void abortWithFamily(NcclFamily.Failure failure) {
    synchronized (lifecycle) {
      if (!state.compareAndSet(OPEN, ABORTED)) {
        return;
      }
      familyFailure = failure;
    }
    events.recorder().failPending(System.nanoTime());
    graphs.destroyAll("its communicator was aborted with its family", null);
    CheckedNccl.ncclCommAbortQuietly(comm);
  }

  /**
   * OPEN → ABORTED: {@code ncclCommAbort} (which also stops the rank's work on the device), the family
   * told, then the resources released. After an abort from outside (or with the family), only the
   * release. Idempotent; a no-op once closed. The rank's own thread calls it.
   */
  public void abort() {
    boolean wasOpen;
    synchronized (lifecycle) {
      wasOpen = state.compareAndSet(OPEN, ABORTED);
      if (!wasOpen && state.get() == CLOSED) {
        return;
      }
    }
    RuntimeException failure = null;
    int rc = 0;
    if (wasOpen) {
      failure = graphs.destroyAll("its communicator was aborted", null);
      rc = CheckedNccl.ncclCommAbortQuietly(comm);
      tellFamily();
    }
    failure = release(failure);
    if (rc != 0) {
      throw CheckedNccl.ncclError("ncclCommAbort", rc, 0);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** This member left OPEN by failing (not by being closed): the family aborts the others. */
  private void tellFamily() {
    String why = abortedBecause;
    String text;
    Throwable cause = watchdog.failure();
    if (requestedCause != null && why == null) {
      text = "was aborted because " + requestedReason;
      cause = requestedCause;
    } else {
      text = "was aborted (ncclCommAbort) " + (why != null ? "after " + why : "by abort()");
    }
    family.failed(this, text, cause);
  }

  private void abortQuietly(RuntimeException into) {
    try {
      abort();
    } catch (RuntimeException e) {
      into.addSuppressed(e);
    }
  }

  /**
   * → CLOSED: {@code ncclCommDestroy} if it was open, then the resources are released. Idempotent.
   */
  public void close() {
    int previous;
    synchronized (lifecycle) {
      previous = state.getAndSet(CLOSED);
      if (previous == CLOSED) {
        return;
      }
    }
    long started = System.nanoTime();
    // Graphs first, also after an abort from outside (which destroyed those it saw): NCCL waits for them.
    RuntimeException failure = graphs.destroyAll("its communicator was closed", null);
    long graphsDestroyed = System.nanoTime();
    long destroyed = graphsDestroyed;
    if (previous == OPEN) {
      try {
        CheckedNccl.ncclCommDestroy(comm);
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
      destroyed = System.nanoTime();
    }
    failure = release(failure);
    closeTimeline = new CloseTimeline(started, graphsDestroyed, destroyed, System.nanoTime());
    if (failure != null) {
      throw failure;
    }
  }

  /** {@return where the last {@link #close()} spent its time, or null before one has run to its end} */
  public CloseTimeline closeTimeline() {
    return closeTimeline;
  }

  /** Whether its user closed it ({@link #close()}), not aborted: its stream is gone with it. */
  public boolean isClosedByUser() {
    return state.get() == CLOSED && !isAborted();
  }

  /** Whether {@link #close()} or an abort has ended it. */
  public boolean isClosedOrAborted() {
    return state.get() != OPEN;
  }

  private RuntimeException release(RuntimeException failure) {
    synchronized (lifecycle) {
      if (released) {
        return failure;
      }
      released = true;
    }
    CheckedCuda.cudaSetDeviceQuietly(device);
    return resources.release(failure);
  }

  /** {@code "rank 3"} in the world, {@code "rank 1 of axis tp of mesh [dp=2, tp=2]"} in a split group. */
  public String rankText() {
    return label.equals("world") ? "rank " + rank : "rank " + rank + " of " + label;
  }

  /** {@code "rank 1 of axis tp of mesh [dp=2, tp=2] (device 0)"}: the group always named, for the family's messages. */
  @Override
  public String who() {
    return "rank " + rank + " of " + label + " (device " + device + ")";
  }

  /**
   * {@code NcclCommunicator[rank 0 of 2, device 0]}, with the group's label for a split one, and how many
   * ranks share the GPU and the CTA limit where they do ({@link GpuSharing#describe()}).
   */
  public String describe() {
    return "NcclCommunicator[" + (label.equals("world") ? "" : label + ", ") + "rank " + rank + " of " + size
        + ", device " + device + family.sharing().describe() + "]";
  }
}
