package dev.commplan.runtime.nccl.rank;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.time.Duration;
import java.util.List;

/**
 * The host call a rank's thread is blocked in, if any, for the watchdog that times it ({@link
 * NcclWatchdog#watch}): a blocking communicator's {@code ncclGroupEnd} (or an ungrouped call, which is a
 * group of its own) may wait there for its peers to connect, {@code ncclCommSplit} for every rank of the
 * parent, {@code cudaGraphLaunch} for the other GPUs of the process. Written by the rank's thread,
 * read by the watchdog's; two volatile stores per call, nothing allocated.
 */
public final class NcclBlockedCall {
  /** What a rank is blocked in unless said otherwise: a group's (or an ungrouped call's) launch. */
  public static final String GROUP_END = "ncclGroupEnd (NCCL waits there for its peers to connect)";

  /** When the thread entered the call; 0 while it is in none. */
  private volatile long since;
  private volatile OperationLabel label;
  private volatile String call = GROUP_END;

  /** The thread enters a launch ({@link #GROUP_END}) of {@code label} (null: a user's group). */
  public void enter(OperationLabel label) {
    this.label = label;
    this.since = System.nanoTime();
  }

  /** The thread enters {@code call}, described for the message ({@code "ncclCommSplit (NCCL waits ...)"}). */
  public void enter(String call, OperationLabel label) {
    this.call = call;
    enter(label);
  }

  public void leave() {
    since = 0;
    call = GROUP_END;
  }

  /** {@return when the thread entered the call it is in ({@code System.nanoTime()}), or 0} */
  public long since() {
    return since;
  }

  /** {@return what the thread is blocked in, or null: for a timeout while waiting for the stream} */
  public OperationLabel label() {
    return label;
  }

  /** The watchdog's exception for a call blocked longer than {@code timeout}; {@code who}: {@code "rank 1 of ..."}. */
  public CommTimeoutException timedOut(String who, int rank, int device, Duration timeout, FlightRecorder recorder) {
    OperationLabel in = label;
    String summary = "nccl backend: " + who + " (device " + device + ") timed out after " + timeout
        + " blocked in " + call + (in != null ? ", at " + in : "")
        + "; the watchdog aborted the communicator (ncclCommAbort)";
    return new CommTimeoutException(summary, in != null ? in.planName() : null, in != null ? in.step() : -1,
        in != null ? in.collective() : call.substring(0, call.indexOf(' ')), in != null ? in.fields() : List.of(),
        rank, timeout, List.of(), recorder.format(), null);
  }

  /** The watchdog's failure again, for this thread (its own stack), caused by the original. */
  public static RuntimeException rethrowable(CommPlanException e) {
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
}
