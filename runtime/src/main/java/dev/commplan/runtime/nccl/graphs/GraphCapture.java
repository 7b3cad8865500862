package dev.commplan.runtime.nccl.graphs;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.calls.NcclScheduleCalls;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.rank.RankGraphs;
import java.util.List;

/**
 * A compiled schedule's capture into one CUDA graph ({@link #capture}), which a captured plan then launches
 * with one {@code cudaGraphLaunch} ({@link CapturedGraph}).
 *
 * <p>The capture mode is {@code cudaStreamCaptureModeThreadLocal}. NCCL's user guide ("Using NCCL with
 * CUDA Graphs", capture modes) says the default global mode is wrong when one process drives several
 * GPUs from several threads, which is this backend's cluster (a thread per GPU), and when capturing
 * point-to-point calls to peers not yet connected: in global mode a {@code cudaMalloc} or host copy made
 * meanwhile by another rank's thread would be refused, or would invalidate this capture. Relaxed mode
 * would also let an unsafe call on this thread slip into the capture unnoticed, and leave a graph that
 * is wrong on replay; thread-local refuses it on the spot. (PyTorch's {@code torch.cuda.graph} defaults
 * to global and lets users choose; NVIDIA Warp defaults to thread-local.) Thread-local requires {@code
 * cudaStreamEndCapture} on the thread that began the capture: {@link #capture} does both in one call.
 *
 * <p>A plan over a mesh's axes captures calls on several communicators of one family into one graph; the
 * graph is registered with each of them ({@link RankGraphs}), since NCCL waits in {@code ncclCommDestroy}
 * and {@code ncclCommAbort} of any of them until the graph is gone.
 */
public final class GraphCapture {
  private GraphCapture() {}

  /**
   * Captures every step of {@code calls} into one CUDA graph on {@code stream} ({@code cudaStreamBeginCapture}
   * in thread-local mode, the steps as {@link NcclScheduleCalls#issueStep} issues them, {@code
   * cudaStreamEndCapture}), instantiates it and registers it with every rank whose calls it captured ({@link
   * RankGraphs}), so that it is destroyed before their communicators. Runs nothing on the device. Every rank
   * must capture the plan at the same point: NCCL treats "captured" as a property of the operation that all
   * ranks share, and a first capture may connect the peers inside {@code ncclGroupEnd}, as a first execute
   * does.
   *
   * <p>If a step fails, the capture is still ended (and its partial graph destroyed) before the failure
   * is acted on ({@link NcclRankState#failed} may abort the communicator, which would free the stream).
   *
   * @param stream a stream of the compiling communicator, which the caller checked: usable, not the legacy
   *     stream, not being captured already
   * @param s its {@code cudaStream_t}
   */
  public static CapturedGraph capture(NcclScheduleCalls calls, Stream stream, long s) {
    long graph = record(calls, stream, s);
    long exec;
    try {
      exec = CheckedCuda.cudaGraphInstantiate(graph);
    } finally {
      CheckedCuda.cudaGraphDestroyQuietly(graph); // the executable graph does not need it
    }
    return register(calls, stream, exec);
  }

  /**
   * Records every step of {@code calls} on {@code s} between {@code cudaStreamBeginCapture} and {@code
   * cudaStreamEndCapture}, which is always called (the stream is unusable until then), and returns the graph; a
   * failure is thrown only once the capture has ended and its partial graph is destroyed.
   */
  private static long record(NcclScheduleCalls calls, Stream stream, long s) {
    int rc = CheckedCuda.cudaStreamBeginCaptureRaw(s, CheckedCuda.CAPTURE_MODE_THREAD_LOCAL);
    if (rc != 0) {
      throw CheckedCuda.cudaError("cudaStreamBeginCapture (" + calls.planName() + ")", rc);
    }
    NcclScheduleCalls.Failure failure = null;
    Throwable unexpected = null;
    try {
      for (int step = 0; step < calls.steps() && failure == null; step++) {
        failure = calls.issueStep(step, s);
      }
    } catch (RuntimeException | Error e) {
      unexpected = e;
    }
    int[] endRc = new int[1];
    long graph = CheckedCuda.cudaStreamEndCaptureRaw(s, endRc); // always: the stream is unusable until then
    if (failure != null || unexpected != null || endRc[0] != 0 || graph == 0) {
      if (graph != 0) {
        CheckedCuda.cudaGraphDestroyQuietly(graph);
      }
      throw captureFailed(calls, stream, failure, unexpected, endRc[0]);
    }
    return graph;
  }

  /**
   * What a failed capture throws: a step's failure (acted on by the rank's state, which may abort the
   * communicator: the capture has ended by now), else what was thrown unexpectedly, else {@code
   * cudaStreamEndCapture}'s error, else the invalidated capture; an end error rides on the first as suppressed.
   */
  private static RuntimeException captureFailed(NcclScheduleCalls calls, Stream stream,
      NcclScheduleCalls.Failure failure, Throwable unexpected, int endRc) {
    String planName = calls.planName();
    CudaException endError = endRc != 0 ? CheckedCuda.cudaError("cudaStreamEndCapture (" + planName + ")", endRc)
        : null;
    RuntimeException e;
    if (failure != null) {
      e = failure.thrown(calls.rank().state());
    } else if (unexpected instanceof RuntimeException r) {
      e = r;
    } else if (unexpected instanceof Error err) {
      if (endError != null) {
        err.addSuppressed(endError);
      }
      throw err;
    } else if (endError != null) {
      return endError;
    } else {
      e = new IllegalStateException(planName + ": the CUDA graph capture on " + stream + " was invalidated"
          + " (cudaStreamEndCapture returned no graph): a call this thread made during the capture is not"
          + " allowed while a stream captures");
    }
    if (endError != null) {
      e.addSuppressed(endError);
    }
    return e;
  }

  /**
   * The captured graph, registered with every communicator it captured calls of: NCCL waits for the graph in
   * the destroy or abort of each ({@link RankGraphs}), so closing any of them must destroy it first.
   */
  private static CapturedGraph register(NcclScheduleCalls calls, Stream stream, long exec) {
    List<NcclRank> groups = calls.groups();
    RankGraphs[] registries = new RankGraphs[1 + groups.size()];
    registries[0] = calls.rank().graphs();
    for (int g = 0; g < groups.size(); g++) {
      registries[g + 1] = groups.get(g).graphs();
    }
    CapturedGraph captured = new CapturedGraph(calls, stream, registries, exec);
    for (RankGraphs registry : registries) {
      if (!registry.add(captured)) { // a communicator was aborted (from outside) or closed meanwhile
        captured.closeBecause("its communicator was aborted");
        calls.rank().state().ensureUsable();
        calls.checkGroupsUsable();
        throw new IllegalStateException(calls.planName() + ": its communicator was aborted during the capture");
      }
    }
    return captured;
  }
}
