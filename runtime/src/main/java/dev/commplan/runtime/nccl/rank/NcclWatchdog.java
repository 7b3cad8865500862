package dev.commplan.runtime.nccl.rank;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.nccl.NcclResult;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.spi.OperationLabel;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;

/**
 * The watchdog of one communicator, for what its rank's own thread cannot see because it is stuck in a
 * host call: NCCL has no timeout of its own, and a blocking communicator's {@code ncclGroupEnd} (or {@code
 * ncclCommSplit}, or a {@code cudaGraphLaunch}) can wait for peers that never come. The rank's thread marks
 * such a call ({@link #enter}, {@link #leave}); another thread calls {@link #watch} often (the cluster's
 * thread while a task runs, a split's own timer), which times the call and polls {@code
 * ncclCommGetAsyncError}. On a timeout or an asynchronous error it records the failure ({@link #failure()})
 * and aborts the communicator from outside, which makes the blocked call return; the rank's thread then
 * throws what was recorded ({@link NcclRankState#notUsable()}).
 *
 * <p>Nothing here is allocated per call: the mark is two volatile stores, and the watchdog's poll has its
 * own out-parameter, since it runs on another thread than the rank's.
 */
public final class NcclWatchdog {
  private final NcclRankState state;
  private final long comm;
  private final int rank;
  private final int device;
  private final Duration timeout;
  private final StepEvents events;
  /** The host call the rank's thread may be blocked in on its peers. */
  private final NcclBlockedCall blocked = new NcclBlockedCall();
  private final MemorySegment scratch = Arena.ofAuto().allocate(JAVA_INT);
  /** A timeout or async error found here (the communicator was then aborted from outside); or null. */
  private volatile CommPlanException failure;

  public NcclWatchdog(NcclRankState state, long comm, int rank, int device, Duration timeout, StepEvents events) {
    this.state = state;
    this.comm = comm;
    this.rank = rank;
    this.device = device;
    this.timeout = timeout;
    this.events = events;
  }

  /** The rank's thread enters a launch that may wait for its peers ({@link NcclBlockedCall#enter(OperationLabel)}). */
  public void enter(OperationLabel label) {
    blocked.enter(label);
  }

  /** The rank's thread enters another host call that may wait ({@link NcclBlockedCall#enter(String, OperationLabel)}). */
  public void enter(String call, OperationLabel label) {
    blocked.enter(call, label);
  }

  /** The rank's thread left the call. */
  public void leave() {
    blocked.leave();
  }

  /** {@return what the rank's thread is blocked in, or null} */
  public OperationLabel blockedLabel() {
    return blocked.label();
  }

  /** {@return the timeout or asynchronous error this watchdog found, or null} */
  public CommPlanException failure() {
    return failure;
  }

  /**
   * Times the call the rank is blocked in and, when {@code pollAsync}, polls {@code ncclCommGetAsyncError};
   * on either failure records it and aborts the communicator from outside. Any thread; cheap when there is
   * nothing to do.
   */
  public void watch(long now, boolean pollAsync) {
    if (!state.isOpen() || failure != null) {
      return;
    }
    long since = blocked.since();
    if (since != 0 && now - since > timeout.toNanos()) {
      // Under the lifecycle lock: a split's own timer and the cluster's watchdog may both get here.
      synchronized (state.lifecycle()) {
        if (!state.isOpen() || failure != null || blocked.since() != since) {
          return;
        }
        CommTimeoutException e = blocked.timedOut(state.rankText(), rank, device, timeout, events.recorder());
        failure = e;
        state.abortedBecause(e.summary());
      }
      state.abortFromOutside();
      return;
    }
    if (pollAsync) {
      NcclException e;
      // Under the lifecycle lock: abort and close change the state under it before they free the comm,
      // so the comm cannot be freed while this thread asks it.
      synchronized (state.lifecycle()) {
        if (!state.isOpen()) {
          return;
        }
        int async = CheckedNccl.ncclCommGetAsyncErrorRaw(comm, scratch);
        if (async == 0 || async == NcclResult.IN_PROGRESS.code()) {
          return;
        }
        e = CheckedNccl.ncclError("ncclCommGetAsyncError (" + state.rankText() + ", seen by the cluster's watchdog)",
            async, comm);
      }
      failure = e;
      state.abortedBecause(e.getMessage());
      state.abortFromOutside();
    }
  }
}
