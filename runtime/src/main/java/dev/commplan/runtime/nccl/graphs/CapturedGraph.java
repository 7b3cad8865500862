package dev.commplan.runtime.nccl.graphs;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.calls.NcclScheduleCalls;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.RankGraphs;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A compiled schedule captured into one CUDA graph for one stream ({@link GraphCapture#capture}): the
 * executable graph ({@code cudaGraphExec_t}), launched with one {@code cudaGraphLaunch}.
 *
 * <p>What a launch does on the host, besides the graph launch: the schedule's checks (the communicator
 * usable, the stream not destroyed, every memory block the graph points into still open) and its flight
 * record (one entry per step, and with step events on, a CUDA event after the graph). The plan has done
 * its own checks and the host-access guard's marks before ({@code Plan.launch}). Nothing of this is in
 * the graph: a replay runs only the NCCL kernels captured once.
 *
 * <p><b>Lifetime.</b> One atomic state: IDLE, LAUNCHING (the rank's thread is inside {@code
 * cudaGraphLaunch}), CLOSED, or CLOSE_PENDING (closed while launching). {@link #closeBecause} may come
 * from another thread (the cluster's watchdog aborting the communicator): it destroys an idle graph at
 * once, and leaves a launching one to the launching thread, which destroys it as soon as its {@code
 * cudaGraphLaunch} has returned. So an executable graph is never destroyed under a launch of it, and a
 * launch never starts on a destroyed one; a launch pays two uncontended compare-and-sets for it.
 *
 * <p>A plan over a mesh's axes captures calls on several communicators of one family into one graph; the
 * graph is registered with each of them ({@link RankGraphs}), since NCCL waits in {@code ncclCommDestroy}
 * and {@code ncclCommAbort} of any of them until the graph is gone: closing one axis destroys it too.
 */
public final class CapturedGraph implements CompiledSchedule.Capture, RankGraphs.Graph {
  private static final int IDLE = 0;
  private static final int LAUNCHING = 1;
  private static final int CLOSED = 2;
  private static final int CLOSE_PENDING = 3;

  private final NcclScheduleCalls calls;
  /** The compiling communicator's rank: its fence, watchdog and flight record serve every launch. */
  private final NcclRank rank;
  private final Stream stream;
  /** The graphs of every communicator whose calls the graph captured (the plan's, and its axes'). */
  private final RankGraphs[] registries;
  private final long exec;
  /** The steps' labels, "(in a CUDA graph launch)": a launch's flight record. */
  private final OperationLabel[] stepLabel;
  private final AtomicInteger state = new AtomicInteger(IDLE);
  private volatile String closedBecause;

  CapturedGraph(NcclScheduleCalls calls, Stream stream, RankGraphs[] registries, long exec) {
    this.calls = calls;
    this.rank = calls.rank();
    this.stream = stream;
    this.registries = registries;
    this.exec = exec;
    this.stepLabel = new OperationLabel[calls.steps()];
    for (int s = 0; s < stepLabel.length; s++) {
      OperationLabel step = calls.stepLabel(s);
      stepLabel[s] = new OperationLabel(calls.planName(), step.step(), step.bucket(),
          step.collective() + " (in a CUDA graph launch)", step.fields());
    }
  }

  /**
   * {@code cudaGraphLaunch} of the whole schedule, or, while someone else captures the stream, the
   * schedule's calls recorded into that capture (a graph launch cannot be captured into another graph
   * here; the plan's {@code execute} does the same).
   */
  @Override
  public void launch(boolean capturing) {
    if (capturing) {
      calls.issueSteps(stream, 0, Integer.MAX_VALUE, true);
      return;
    }
    long s = calls.checkUsable(stream);
    if (!state.compareAndSet(IDLE, LAUNCHING)) {
      throw closed();
    }
    int rc;
    try {
      rc = launchGraph(s);
    } finally {
      if (!state.compareAndSet(LAUNCHING, IDLE)) {
        destroyNow(); // closed from another thread while this one launched
      }
    }
    if (rc != 0) {
      throw CheckedCuda.cudaError("cudaGraphLaunch (" + calls.planName() + ")", rc);
    }
    recordLaunch(s);
  }

  /**
   * {@code cudaGraphLaunch}, timed by the cluster's watchdog like a blocking {@code ncclGroupEnd}: NCCL's
   * guide warns that a graph launch can block when one process drives several GPUs, and a launch that
   * waits forever must end in a timeout, not a hang.
   */
  private int launchGraph(long cudaStream) {
    rank.meetGroup();
    rank.state().watchdog().enter(stepLabel.length > 0 ? stepLabel[0] : null);
    int rc = CheckedCuda.cudaGraphLaunchRaw(exec, cudaStream);
    rank.state().watchdog().leave();
    return rc;
  }

  /** A launch's flight record: the steps, in order, and (with step events on) an event after the graph. */
  private void recordLaunch(long cudaStream) {
    for (int step = 0; step < stepLabel.length; step++) {
      rank.events().record(stepLabel[step], 0);
    }
    rank.events().markLast(cudaStream);
  }

  @Override
  public boolean isGraph() {
    return true;
  }

  @Override
  public void close() {
    closeBecause("the captured plan was closed");
  }

  /** Closes it, naming why in later messages; destroys it now, or after a launch in progress. Idempotent. */
  @Override
  public void closeBecause(String why) {
    while (true) {
      int s = state.get();
      if (s == CLOSED || s == CLOSE_PENDING) {
        return;
      }
      if (closedBecause == null) {
        closedBecause = why;
      }
      if (s == IDLE && state.compareAndSet(IDLE, CLOSED)) {
        destroyNow();
        return;
      }
      if (s == LAUNCHING && state.compareAndSet(LAUNCHING, CLOSE_PENDING)) {
        return;
      }
    }
  }

  /** {@return whether it was closed (and is destroyed, or will be when the launch in progress returns)} */
  public boolean isClosed() {
    int s = state.get();
    return s == CLOSED || s == CLOSE_PENDING;
  }

  private void destroyNow() {
    state.set(CLOSED);
    for (RankGraphs registry : registries) {
      registry.remove(this);
    }
    CheckedCuda.cudaGraphExecDestroy(exec);
  }

  private IllegalStateException closed() {
    return new IllegalStateException(this + " was destroyed (" + closedBecause + "); it cannot be launched");
  }

  @Override
  public String toString() {
    return "the CUDA graph of " + calls.planName() + " on " + stream;
  }
}
