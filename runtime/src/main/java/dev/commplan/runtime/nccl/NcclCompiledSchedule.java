package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.calls.NcclDirectCalls;
import dev.commplan.runtime.nccl.calls.NcclScheduleCalls;
import dev.commplan.runtime.nccl.graphs.GraphCapture;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.streams.NcclStream;
import dev.commplan.runtime.plan.CompiledSchedule;

/**
 * A schedule compiled for an NCCL communicator, as a plan sees it ({@link CompiledSchedule}): its NCCL calls,
 * resolved once and issued step by step ({@link NcclScheduleCalls}), and their capture into one CUDA graph
 * ({@link GraphCapture}). What needs the communicator is checked here: that a stream is one of its own, that
 * no group of its user is open during a capture, and whether its ranks capture graphs at all.
 *
 * <p>A plan's {@code execute} reaches NCCL in one line: {@code Plan.execute} → {@link #enqueueSteps} →
 * {@link NcclScheduleCalls#issueSteps} (the checks, then one NCCL group per step) → {@code
 * binding.NcclDispatch.enqueue} (the collective's function) → {@code binding.raw.NcclCollectives} (the
 * downcall). While a stream is being captured, by {@link #capture} or by the caller's own code ({@link
 * #isCapturing}: one {@code cudaStreamIsCapturing}, asked once per execute), an enqueue issues the NCCL calls
 * only.
 */
final class NcclCompiledSchedule implements CompiledSchedule {
  private final NcclRank rank;
  /** The communicator's direct calls, asked whether a group of the user's is open. */
  private final NcclDirectCalls direct;
  /** The rank's state, asked before anything else. */
  private final NcclRankState state;
  private final String planName;
  /** The schedule's NCCL calls, resolved once. */
  private final NcclScheduleCalls calls;

  /**
   * @param rank the compiling communicator's rank
   * @param direct its direct calls
   * @param calls the schedule's calls, resolved for it
   */
  NcclCompiledSchedule(NcclRank rank, NcclDirectCalls direct, NcclScheduleCalls calls) {
    this.rank = rank;
    this.direct = direct;
    this.state = rank.state();
    this.planName = calls.planName();
    this.calls = calls;
  }

  /** How the backend issues call {@code call} of step position {@code step} (Gather, Scatter, AllToAll), or null. */
  @Override
  public String callNote(int step, int call) {
    return calls.note(step, call);
  }

  /**
   * One {@code cudaStreamIsCapturing} of {@code stream} (see the class comment), after the checks an
   * enqueue makes first (a closed or aborted communicator says so, rather than that its stream is gone).
   */
  @Override
  public boolean isCapturing(Stream stream) {
    state.ensureUsable();
    return rank.graphs().isStreamCapturing(NcclStream.handleOf(stream, rank));
  }

  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex) {
    enqueueSteps(stream, fromIndex, toIndex, isCapturing(stream));
  }

  /** Issues steps {@code [fromIndex, toIndex)}; while {@code capturing}, the calls only ({@link NcclScheduleCalls}). */
  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex, boolean capturing) {
    calls.issueSteps(stream, fromIndex, toIndex, capturing);
  }

  /**
   * Captures every step into one CUDA graph on {@code stream} ({@link GraphCapture#capture}), once the
   * stream is known to be one of this communicator's, not the legacy stream and not being captured already,
   * and no group of the user's is open. Runs nothing on the device.
   *
   * <p>Where ranks of this process share the GPU, the recording is no graph unless asked for ({@link
   * GpuSharing#SHARED_CONTEXT_GRAPHS_PROPERTY}): each launch enqueues the steps again, as {@code execute} does.
   */
  @Override
  public Capture capture(Stream stream) {
    state.ensureUsable();
    calls.checkGroupsUsable();
    long s = NcclStream.handleOf(stream, rank);
    if (s == 0) {
      throw new IllegalArgumentException(planName + ": cannot capture a CUDA graph on " + stream + ", the legacy"
          + " default stream (cudaStream_t 0), which CUDA does not capture; capture on the communicator's own"
          + " stream() or on a stream you created (NcclInterop.wrapStream)");
    }
    if (direct.inGroup()) {
      throw new IllegalStateException(planName + ": capture(...) between groupStart() and groupEnd(): the group's"
          + " calls would be issued at groupEnd(), after the capture ended; capture outside the group");
    }
    calls.checkMemoriesOpen();
    if (rank.graphs().isStreamCapturing(s)) {
      throw new IllegalStateException(planName + ": " + stream + " is already being captured into a CUDA graph"
          + " (by your own code): capture(...) makes a graph of its own and needs a stream that is not capturing;"
          + " inside your capture, call execute(stream), which records the plan into your graph");
    }
    if (!rank.family().sharing().graphs()) { // ranks of this process share the GPU: SHARED_CONTEXT_GRAPHS_PROPERTY
      return CompiledSchedule.super.capture(stream);
    }
    return GraphCapture.capture(calls, stream, s);
  }

  @Override
  public String toString() {
    return "NcclCompiledSchedule[" + planName + ", " + calls.steps() + " steps, " + calls.size() + " calls, "
        + rank + "]";
  }
}
