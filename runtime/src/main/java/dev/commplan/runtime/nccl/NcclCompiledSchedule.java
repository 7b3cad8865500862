package dev.commplan.runtime.nccl;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.NcclDispatch;
import dev.commplan.runtime.nccl.calls.SendRecvStandIns;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.rank.RankGraphs;
import dev.commplan.runtime.nccl.rank.StepEvents;
import dev.commplan.runtime.nccl.streams.NcclStream;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.spi.OperationLabel;

/**
 * A schedule resolved once to NCCL's arguments ({@link NcclDowncalls}: device pointers, counts, {@code
 * ncclDataType_t}, {@code ncclRedOp_t}, roots and peers, the {@code ncclComm_t} of each call, in flat
 * primitive arrays). {@link #enqueue} walks them and issues, per step, {@code
 * ncclGroupStart}, the calls, {@code ncclGroupEnd} (a step of one call is issued alone, which NCCL
 * treats as a group of one); it allocates nothing on the Java heap (the only
 * objects it makes are exceptions). A step's sends and receives are in its group, so that a ring exchange
 * does not serialize; those whose peer is none on this rank are not issued; Gather, Scatter and AllToAll
 * on an NCCL without their functions become their sends and receives here, once ({@link SendRecvStandIns#viaSendRecv}),
 * and {@code Plan.describe()} says which path a call takes ({@link #callNote}). Inside the group the
 * calls use the {@code critical} downcalls, since
 * NCCL only records them there. After each step's group it records the step in the communicator's flight
 * recorder (a reference to the step's {@link OperationLabel}, made here once), which is how a timeout
 * names the step still pending; with {@code -Dcommplan.nccl.stepEvents=true} also a CUDA event on the
 * stream (one downcall), so that it names exactly which step.
 *
 * <p><b>CUDA graphs.</b> {@link #capture} records every step into one CUDA graph ({@link NcclGraph}).
 * While a stream is being captured, by {@link #capture} or by the caller's own code ({@link
 * #isCapturing}: one {@code cudaStreamIsCapturing}, asked once per execute), an enqueue issues the NCCL
 * calls only: no flight record entry and no CUDA event, which would describe work that is not running
 * (an event recorded in a capture cannot even be queried afterwards), and nothing that queries or waits
 * on the stream, which would invalidate the capture. The same loop issues the calls in both cases.
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
 * <p><b>Plans over a mesh's axes.</b> Each call is issued on its group's communicator (the plan's own, the
 * mesh's world, or an axis's), every call of a step in one NCCL group, on the stream given to the
 * enqueue, a stream of the plan's communicator (see {@link #issueStep} for why that is correct). The
 * flight record, the timeout and the watchdog's timing are the plan's communicator's; the axes'
 * communicators must be open at every enqueue and launch, and a captured graph is registered with
 * each of them.
 */
final class NcclCompiledSchedule implements CompiledSchedule {
  private final NcclCommunicator comm;
  /** The rank's state and flight record, asked at every enqueue. */
  private final NcclRankState state;
  private final StepEvents events;
  private final String planName;
  /** The schedule's NCCL calls, resolved once. */
  private final NcclDowncalls calls;
  private final int[] stepStart; // calls of step i are [stepStart[i], stepStart[i + 1])
  private final Collective[] kind;
  private final long[] send;
  private final long[] recv;
  private final long[] count;
  private final int[] dataType;
  private final int[] op;
  private final int[] rootOrPeer;
  private final long[] commOf; // the ncclComm_t of each call: the plan's, or its axis's
  private final OperationLabel[] stepLabel;
  private final OperationLabel[] graphStepLabel; // the same, "(CUDA graph launch)": a launch's record
  /** The states of the axes' communicators the calls also run on (none for a plan without axes). */
  private final NcclRankState[] groupStates;

  NcclCompiledSchedule(NcclCommunicator comm, Schedule schedule) {
    this.comm = comm;
    this.state = comm.state();
    this.events = comm.ncclRank().events();
    this.planName = schedule.planName(); // checked by AbstractCommunicator.compile
    this.calls = NcclDowncalls.of(comm, schedule);
    stepStart = calls.stepStart;
    kind = calls.kind;
    send = calls.send;
    recv = calls.recv;
    count = calls.count;
    dataType = calls.dataType;
    op = calls.op;
    rootOrPeer = calls.rootOrPeer;
    commOf = calls.comm;
    stepLabel = calls.stepLabel;
    graphStepLabel = new OperationLabel[stepLabel.length];
    for (int s = 0; s < stepLabel.length; s++) {
      graphStepLabel[s] = new OperationLabel(planName, stepLabel[s].step(), stepLabel[s].bucket(),
          stepLabel[s].collective() + " (in a CUDA graph launch)", stepLabel[s].fields());
    }
    groupStates = new NcclRankState[calls.groups.length];
    for (int g = 0; g < groupStates.length; g++) {
      groupStates[g] = calls.groups[g].state();
    }
  }

  /** How the backend issues call {@code call} of step position {@code step} (Gather, Scatter, AllToAll), or null. */
  @Override
  public String callNote(int step, int call) {
    return calls.notes[step][call];
  }

  /**
   * One {@code cudaStreamIsCapturing} of {@code stream} (see the class comment), after the checks an
   * enqueue makes first (a closed or aborted communicator says so, rather than that its stream is gone).
   */
  @Override
  public boolean isCapturing(Stream stream) {
    state.ensureUsable();
    return comm.ncclRank().graphs().isCapturing(comm.streamHandle(stream));
  }

  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex) {
    enqueueSteps(stream, fromIndex, toIndex, isCapturing(stream));
  }

  /**
   * Issues steps {@code [fromIndex, toIndex)}; while {@code capturing}, the calls only (see the class
   * comment).
   */
  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex, boolean capturing) {
    if (fromIndex < 0) {
      throw new IndexOutOfBoundsException(planName + ": step index " + fromIndex + " is negative");
    }
    int endStep = Math.min(toIndex, stepLabel.length);
    state.ensureUsable();
    checkGroupsUsable();
    long s = comm.streamHandle(stream);
    checkMemoriesOpen();
    if (!capturing && fromIndex < endStep) {
      comm.meetGroup(); // every rank runs these steps; after the fence none blocks before its last launch
    }
    for (int step = fromIndex; step < endStep; step++) {
      Failure failure = issueStep(step, s);
      if (failure != null) {
        throw failure.thrown(state);
      }
      if (!capturing) {
        events.record(stepLabel[step], s);
      }
    }
  }

  /**
   * The axes' communicators are open: one closed on its own (a mesh closed before a plan over it) would
   * leave its calls pointing at a destroyed {@code ncclComm_t}. Aborted ones are the family's failure,
   * which the plan's own communicator already reported.
   */
  private void checkGroupsUsable() {
    for (NcclRankState g : groupStates) {
      if (!g.isOpen()) {
        RuntimeException why = g.notUsable();
        throw new IllegalStateException(planName + ": it runs calls over " + g.who() + ", which cannot be used: "
            + why.getMessage(), why);
      }
    }
  }

  private void checkMemoriesOpen() {
    for (NcclMemory m : calls.memories) {
      if (m.isClosed()) {
        throw new IllegalStateException(planName + ": " + m + " was freed after the schedule was compiled");
      }
    }
  }

  /**
   * What went wrong issuing a step, kept until it is safe to act on it: {@link NcclRankState#failed} may
   * abort the communicator (and free its streams), which must wait until a capture in progress has been
   * ended. Made only on failure.
   */
  private record Failure(String function, int rc, NcclException groupEndError) {
    RuntimeException thrown(NcclRankState state) {
      RuntimeException e = state.failed(function, rc);
      if (groupEndError != null) {
        e.addSuppressed(groupEndError);
      }
      return e;
    }
  }

  /**
   * Issues one step: {@code ncclGroupStart}, its calls ({@code critical} downcalls), {@code ncclGroupEnd};
   * a step of one call without the group. Returns null, or what failed (the group is closed either way).
   *
   * <p>A step of a plan over a mesh's axes has calls on several communicators of this rank (the world's
   * and its axes'), all on the one stream {@code s}, all in this one group. NCCL's user guide ("Group
   * Calls") allows it: the three uses of a group, several GPUs from one thread, aggregated operations and
   * merged sends and receives, "can be combined together" (only {@code ncclCommInitRank} cannot be
   * merged with others), and aggregation may use different communicators in one launch. It is also what
   * keeps such a step from deadlocking: each communicator's calls become a kernel of their own, and
   * kernels on one stream run one after another, so two ranks that order two shared communicators
   * differently could wait for each other forever (the guide's "Using multiple NCCL communicators
   * concurrently" warns of exactly this). Inside one group NCCL launches the communicators in one global
   * order, ascending {@code commHash} ({@code ncclGroupCommJoin} in NCCL's {@code group.h}; a split's
   * hash comes from its parent's, the split count and the color, the same on every rank), so every rank
   * launches any two communicators it shares in the same order, and the lowest communicator with work
   * left can always run: no cycle. The same holds in a CUDA graph: the capture records that order, and
   * every communicator of the group is captured (NCCL refuses a group mixing captured and uncaptured
   * ones; here they share the one stream).
   */
  private Failure issueStep(int step, long s) {
    int n = stepStart[step + 1] - stepStart[step];
    if (n == 0) {
      return null; // only sends and receives whose peer is none on this rank
    }
    if (n == 1) {
      return issueAlone(stepStart[step], step, s);
    }
    int rc = NcclDispatch.groupStart();
    if (rc != 0) {
      return new Failure("ncclGroupStart", rc, null);
    }
    int failed = -1;
    int failedRc = 0;
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      rc = NcclDispatch.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], op[i], rootOrPeer[i], commOf[i], s,
          true);
      if (rc != 0) {
        failed = i;
        failedRc = rc;
        break;
      }
    }
    state.watchdog().enter(stepLabel[step]); // a blocking communicator may wait here for its peers
    int endRc = NcclDispatch.groupEnd(); // always close the group, also after a failed call
    state.watchdog().leave();
    if (failed >= 0) {
      NcclException endError = endRc != 0 ? CheckedNccl.ncclError("ncclGroupEnd", endRc, commOf[failed]) : null;
      return new Failure(kind[failed].ncclFunction() + " (" + stepLabel[step] + ")", failedRc, endError);
    }
    if (endRc != 0) {
      return new Failure("ncclGroupEnd (" + stepLabel[step] + ")", endRc, null);
    }
    return null;
  }

  /**
   * A step of one call skips ncclGroupStart/End: NCCL wraps every ungrouped call in a group of its own,
   * so the effect is the same with two downcalls fewer (on NCCL 2.28 the pair measured no host time worth
   * naming, docs/perf/history.md). Plain downcalls: outside a group NCCL launches work and may block.
   */
  private Failure issueAlone(int i, int step, long s) {
    state.watchdog().enter(stepLabel[step]); // outside a group the call itself may wait for its peers
    int rc = NcclDispatch.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], op[i], rootOrPeer[i], commOf[i], s,
        false);
    state.watchdog().leave();
    return rc != 0 ? new Failure(kind[i].ncclFunction() + " (" + stepLabel[step] + ")", rc, null) : null;
  }

  // ---------------------------------------------------------------- CUDA graphs

  /**
   * Captures every step into one CUDA graph on {@code stream} ({@code cudaStreamBeginCapture} in
   * thread-local mode, the steps as {@link #enqueueSteps} issues them, {@code cudaStreamEndCapture}),
   * instantiates it and registers it with the rank ({@link RankGraphs}), so that it is destroyed before
   * the communicator. Runs nothing on the device. Every rank must capture the plan at the same point:
   * NCCL treats "captured" as a property of the operation that all ranks share, and a first capture may
   * connect the peers inside {@code ncclGroupEnd}, as a first execute does.
   *
   * <p>Where ranks of this process share the GPU, the recording is no graph unless asked for ({@link
   * GpuSharing#SHARED_CONTEXT_GRAPHS_PROPERTY}): each launch enqueues the steps again, as {@code execute} does.
   *
   * <p>If a step fails, the capture is still ended (and its partial graph destroyed) before the failure
   * is acted on ({@link NcclRankState#failed} may abort the communicator, which would free the stream).
   */
  @Override
  public Capture capture(Stream stream) {
    state.ensureUsable();
    checkGroupsUsable();
    long s = comm.streamHandle(stream);
    NcclStream ncclStream = (NcclStream) stream; // streamHandle checked it is one of ours
    if (s == 0) {
      throw new IllegalArgumentException(planName + ": cannot capture a CUDA graph on " + stream + ", the legacy"
          + " default stream (cudaStream_t 0), which CUDA does not capture; capture on the communicator's own"
          + " stream() or on a stream you created (NcclInterop.wrapStream)");
    }
    if (comm.inGroup()) {
      throw new IllegalStateException(planName + ": capture(...) between groupStart() and groupEnd(): the group's"
          + " calls would be issued at groupEnd(), after the capture ended; capture outside the group");
    }
    checkMemoriesOpen();
    RankGraphs graphs = comm.ncclRank().graphs();
    if (graphs.isCapturing(s)) {
      throw new IllegalStateException(planName + ": " + stream + " is already being captured into a CUDA graph"
          + " (by your own code): capture(...) makes a graph of its own and needs a stream that is not capturing;"
          + " inside your capture, call execute(stream), which records the plan into your graph");
    }
    if (!comm.ncclRank().family().sharing().graphs()) { // ranks of this process share the GPU: GpuSharing.SHARED_CONTEXT_GRAPHS_PROPERTY
      return CompiledSchedule.super.capture(stream);
    }
    int rc = CheckedCuda.cudaStreamBeginCaptureRaw(s, CheckedCuda.CAPTURE_MODE_THREAD_LOCAL);
    if (rc != 0) {
      throw CheckedCuda.cudaError("cudaStreamBeginCapture (" + planName + ")", rc);
    }
    Failure failure = null;
    Throwable unexpected = null;
    try {
      for (int step = 0; step < stepLabel.length && failure == null; step++) {
        failure = issueStep(step, s);
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
      CudaException endError = endRc[0] != 0 ? CheckedCuda.cudaError("cudaStreamEndCapture (" + planName + ")", endRc[0])
          : null;
      RuntimeException e;
      if (failure != null) {
        e = failure.thrown(state);
      } else if (unexpected instanceof RuntimeException r) {
        e = r;
      } else if (unexpected instanceof Error err) {
        if (endError != null) {
          err.addSuppressed(endError);
        }
        throw err;
      } else if (endError != null) {
        throw endError;
      } else {
        e = new IllegalStateException(planName + ": the CUDA graph capture on " + stream + " was invalidated"
            + " (cudaStreamEndCapture returned no graph): a call this thread made during the capture is not"
            + " allowed while a stream captures");
      }
      if (endError != null) {
        e.addSuppressed(endError);
      }
      throw e;
    }
    long exec;
    try {
      exec = CheckedCuda.cudaGraphInstantiate(graph);
    } finally {
      CheckedCuda.cudaGraphDestroyQuietly(graph); // the executable graph does not need it
    }
    // Registered with every communicator it captured calls of: NCCL waits for the graph in the destroy or
    // abort of each (see RankGraphs), so closing any of them must destroy it first.
    RankGraphs[] registries = new RankGraphs[1 + calls.groups.length];
    registries[0] = graphs;
    for (int g = 0; g < calls.groups.length; g++) {
      registries[g + 1] = calls.groups[g].ncclRank().graphs();
    }
    NcclGraph captured = new NcclGraph(this, ncclStream, registries, exec);
    for (RankGraphs registry : registries) {
      if (!registry.add(captured)) { // a communicator was aborted (from outside) or closed meanwhile
        captured.closeBecause("its communicator was aborted");
        state.ensureUsable();
        checkGroupsUsable();
        throw new IllegalStateException(planName + ": its communicator was aborted during the capture");
      }
    }
    return captured;
  }

  /** The checks of a graph launch; returns the stream's handle. */
  long checkLaunchable(NcclStream stream) {
    state.ensureUsable();
    checkGroupsUsable();
    long s = comm.streamHandle(stream);
    checkMemoriesOpen();
    return s;
  }

  /** A launch's flight record: the steps, in order, and (with step events on) an event after the graph. */
  void recordLaunch(long cudaStream) {
    for (int step = 0; step < graphStepLabel.length; step++) {
      events.record(graphStepLabel[step], 0);
    }
    events.markLast(cudaStream);
  }

  /**
   * {@code cudaGraphLaunch}, timed by the cluster's watchdog like a blocking {@code ncclGroupEnd}: NCCL's
   * guide warns that a graph launch can block when one process drives several GPUs, and a launch that
   * waits forever must end in a timeout, not a hang.
   */
  int launchGraph(long exec, long cudaStream) {
    comm.meetGroup();
    state.watchdog().enter(graphStepLabel.length > 0 ? graphStepLabel[0] : null);
    int rc = CheckedCuda.cudaGraphLaunchRaw(exec, cudaStream);
    state.watchdog().leave();
    return rc;
  }

  /** The exception for {@code cudaGraphLaunch} returning {@code rc}. */
  RuntimeException graphLaunchFailed(int rc) {
    return CheckedCuda.cudaError("cudaGraphLaunch (" + planName + ")", rc);
  }

  String planName() {
    return planName;
  }

  /** The number of NCCL calls one enqueue issues. */
  int callCount() {
    return kind.length;
  }

  @Override
  public String toString() {
    return "NcclCompiledSchedule[" + planName + ", " + stepLabel.length + " steps, " + kind.length
        + " calls, " + comm + "]";
  }
}
