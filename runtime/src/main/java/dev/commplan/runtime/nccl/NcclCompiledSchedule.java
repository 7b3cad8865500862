package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Stream;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.nccl.internal.CudaGraphs;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A schedule resolved once to NCCL's arguments: device pointers (block address plus byte offset, so
 * in-place calls get NCCL's in-place pointers), counts, {@code ncclDataType_t}, {@code ncclRedOp_t},
 * roots and peers, in flat primitive arrays. {@link #enqueue} walks them and issues, per step, {@code
 * ncclGroupStart}, the calls, {@code ncclGroupEnd} (a step of one call is issued alone, which NCCL
 * treats as a group of one); it allocates nothing on the Java heap (the only
 * objects it makes are exceptions). A step's sends and receives are in its group, so that a ring exchange
 * does not serialize; those whose peer is none on this rank are not issued; Gather, Scatter and AllToAll
 * on an NCCL without their functions become their sends and receives here, once ({@link NcclCalls#viaSendRecv}),
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
 */
final class NcclCompiledSchedule implements CompiledSchedule {
  private final NcclCommunicator comm;
  /** The rank's state and flight record, asked at every enqueue. */
  private final NcclRankState state;
  private final StepEvents events;
  private final String planName;
  private final int[] stepStart; // calls of step i are [stepStart[i], stepStart[i + 1])
  private final int[] stepNumber;
  private final Collective[] kind;
  private final long[] send;
  private final long[] recv;
  private final long[] count;
  private final int[] dataType;
  private final int[] op; // ncclRedOp_t, for reductions
  private final int[] rootOrPeer; // the root, or a send's or receive's peer
  private final String[][] notes; // per step and call of the schedule: how it is issued (callNote), or null
  private final NcclMemory[] memories; // distinct blocks, checked open before each enqueue
  private final OperationLabel[] stepLabel; // plan, step, its calls and fields: for the flight record
  private final OperationLabel[] graphStepLabel; // the same, "(CUDA graph launch)": a launch's record

  NcclCompiledSchedule(NcclCommunicator comm, Schedule schedule) {
    this.comm = comm;
    this.state = comm.state();
    this.events = comm.events();
    this.planName = schedule.planName(); // checked by PlanRules.checkSchedule in compile
    List<Step> steps = schedule.steps();
    stepStart = new int[steps.size() + 1];
    stepNumber = new int[steps.size()];
    stepLabel = new OperationLabel[steps.size()];
    graphStepLabel = new OperationLabel[steps.size()];
    notes = new String[steps.size()][];
    Downcalls out = new Downcalls();
    Map<DeviceMemory, NcclMemory> distinct = new IdentityHashMap<>();
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      stepStart[s] = out.size;
      stepNumber[s] = step.number();
      stepLabel[s] = label(planName, step);
      graphStepLabel[s] = new OperationLabel(planName, step.number(),
          stepLabel[s].collective() + " (in a CUDA graph launch)", stepLabel[s].fields());
      notes[s] = new String[step.calls().size()];
      for (int c = 0; c < step.calls().size(); c++) {
        CollectiveCall call = step.calls().get(c);
        String where = planName + ", step " + step.number() + ", " + call.collective().label() + " of "
            + call.fields();
        NcclMemory sm = memory(call.sendMemory(), where, "send");
        NcclMemory rm = memory(call.recvMemory(), where, "recv");
        distinct.put(sm, sm);
        distinct.put(rm, rm);
        comm.requireSupported(call.dataType(), call.op(), true);
        Collective collective = call.collective();
        long sendAt = sm.rawAddress() + call.sendByteOffset();
        long recvAt = rm.rawAddress() + call.recvByteOffset();
        int type = NcclArgs.dataType(call.dataType());
        int op = call.op() == null ? 0 : NcclArgs.op(call.op());
        if (collective.pointToPoint()) {
          if (call.peer() >= 0) { // a peer outside the ranks: no call on this rank
            out.add(collective, sendAt, recvAt, call.count(), type, 0, call.peer());
          }
          continue;
        }
        if (collective == Collective.GATHER || collective == Collective.SCATTER || collective == Collective.ALL_TO_ALL) {
          notes[s][c] = NcclCalls.path(collective);
        }
        if (NcclCalls.isNative(collective)) {
          out.add(collective, sendAt, recvAt, call.count(), type, op, collective.hasRoot() ? call.root() : 0);
        } else {
          NcclCalls.viaSendRecv(collective, sendAt, recvAt, call.count() * call.dataType().byteSize(), call.root(),
              comm.rank(), comm.size(), (isSend, pointer, peer) ->
                  out.add(isSend ? Collective.SEND : Collective.RECV, pointer, pointer, call.count(), type, 0, peer));
        }
      }
    }
    stepStart[steps.size()] = out.size;
    kind = java.util.Arrays.copyOf(out.kind, out.size);
    send = java.util.Arrays.copyOf(out.send, out.size);
    recv = java.util.Arrays.copyOf(out.recv, out.size);
    count = java.util.Arrays.copyOf(out.count, out.size);
    dataType = java.util.Arrays.copyOf(out.dataType, out.size);
    op = java.util.Arrays.copyOf(out.op, out.size);
    rootOrPeer = java.util.Arrays.copyOf(out.rootOrPeer, out.size);
    memories = new ArrayList<>(distinct.values()).toArray(new NcclMemory[0]);
  }

  /** The NCCL downcalls of a schedule as they are made at compile time, before they go into flat arrays. */
  private static final class Downcalls {
    Collective[] kind = new Collective[16];
    long[] send = new long[16];
    long[] recv = new long[16];
    long[] count = new long[16];
    int[] dataType = new int[16];
    int[] op = new int[16];
    int[] rootOrPeer = new int[16];
    int size;

    void add(Collective k, long s, long r, long n, int type, int reduction, int rootOrPeerRank) {
      if (size == kind.length) {
        int grown = size * 2;
        kind = java.util.Arrays.copyOf(kind, grown);
        send = java.util.Arrays.copyOf(send, grown);
        recv = java.util.Arrays.copyOf(recv, grown);
        count = java.util.Arrays.copyOf(count, grown);
        dataType = java.util.Arrays.copyOf(dataType, grown);
        op = java.util.Arrays.copyOf(op, grown);
        rootOrPeer = java.util.Arrays.copyOf(rootOrPeer, grown);
      }
      kind[size] = k;
      send[size] = s;
      recv[size] = r;
      count[size] = n;
      dataType[size] = type;
      op[size] = reduction;
      rootOrPeer[size] = rootOrPeerRank;
      size++;
    }
  }

  /** How the backend issues call {@code call} of step position {@code step} (Gather, Scatter, AllToAll), or null. */
  @Override
  public String callNote(int step, int call) {
    return notes[step][call];
  }

  /** {@code plan p.X, step 0, all-reduce F32 SUM, count 16 + all-gather F32, count 4, fields [a, b]}. */
  private static OperationLabel label(String planName, Step step) {
    List<String> calls = new ArrayList<>();
    List<String> fields = new ArrayList<>();
    for (CollectiveCall call : step.calls()) {
      StringBuilder c = new StringBuilder(call.collective().label()).append(' ').append(call.dataType());
      if (call.op() != null) {
        c.append(' ').append(call.op());
      }
      if (call.collective().hasRoot()) {
        c.append(" root ").append(call.root());
      }
      if (call.collective().pointToPoint()) {
        c.append(call.collective() == Collective.SEND ? " to " : " from ")
            .append(call.peer() < 0 ? "no one" : "rank " + call.peer());
      }
      calls.add(c.append(", count ").append(call.count()).toString());
      fields.addAll(call.fields());
    }
    return new OperationLabel(planName, step.number(), String.join(" + ", calls), fields);
  }

  private NcclMemory memory(DeviceMemory memory, String where, String role) {
    if (!(memory instanceof NcclMemory nm) || memory.owner() != comm) {
      throw new IllegalArgumentException(where + ": the " + role + " memory " + memory + " is not memory of "
          + comm);
    }
    if (nm.isClosed()) {
      throw new IllegalStateException(where + ": the " + role + " memory " + memory + " is closed");
    }
    return nm;
  }

  /**
   * One {@code cudaStreamIsCapturing} of {@code stream} (see the class comment), after the checks an
   * enqueue makes first (a closed or aborted communicator says so, rather than that its stream is gone).
   */
  @Override
  public boolean isCapturing(Stream stream) {
    state.ensureUsable();
    return comm.graphs().isCapturing(comm.streamHandle(stream));
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
    int endStep = Math.min(toIndex, stepNumber.length);
    state.ensureUsable();
    long s = comm.streamHandle(stream);
    checkMemoriesOpen();
    long c = comm.handle();
    for (int step = fromIndex; step < endStep; step++) {
      Failure failure = issueStep(step, c, s);
      if (failure != null) {
        throw failure.thrown(state);
      }
      if (!capturing) {
        events.record(stepLabel[step], s);
      }
    }
  }

  private void checkMemoriesOpen() {
    for (NcclMemory m : memories) {
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
   */
  private Failure issueStep(int step, long c, long s) {
    int calls = stepStart[step + 1] - stepStart[step];
    if (calls == 0) {
      return null; // only sends and receives whose peer is none on this rank
    }
    if (calls == 1) {
      return issueAlone(stepStart[step], step, c, s);
    }
    int rc = NcclCalls.groupStart();
    if (rc != 0) {
      return new Failure("ncclGroupStart", rc, null);
    }
    int failed = -1;
    int failedRc = 0;
    for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
      rc = NcclCalls.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], op[i], rootOrPeer[i], c, s, true);
      if (rc != 0) {
        failed = i;
        failedRc = rc;
        break;
      }
    }
    state.enterBlocking(stepLabel[step]); // a blocking communicator may wait here for its peers
    int endRc = NcclCalls.groupEnd(); // always close the group, also after a failed call
    state.leaveBlocking();
    if (failed >= 0) {
      NcclException endError = endRc != 0 ? Checked.ncclError("ncclGroupEnd", endRc, c) : null;
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
   * naming, docs/gpu.md). Plain downcalls: outside a group NCCL launches work and may block.
   */
  private Failure issueAlone(int i, int step, long c, long s) {
    state.enterBlocking(stepLabel[step]); // outside a group the call itself may wait for its peers
    int rc = NcclCalls.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], op[i], rootOrPeer[i], c, s, false);
    state.leaveBlocking();
    return rc != 0 ? new Failure(kind[i].ncclFunction() + " (" + stepLabel[step] + ")", rc, null) : null;
  }

  // ---------------------------------------------------------------- CUDA graphs

  /**
   * Captures every step into one CUDA graph on {@code stream} ({@code cudaStreamBeginCapture} in
   * thread-local mode, the steps as {@link #enqueueSteps} issues them, {@code cudaStreamEndCapture}),
   * instantiates it and registers it with the rank ({@link NcclGraphs}), so that it is destroyed before
   * the communicator. Runs nothing on the device. Every rank must capture the plan at the same point:
   * NCCL treats "captured" as a property of the operation that all ranks share, and a first capture may
   * connect the peers inside {@code ncclGroupEnd}, as a first execute does.
   *
   * <p>If a step fails, the capture is still ended (and its partial graph destroyed) before the failure
   * is acted on ({@link NcclRankState#failed} may abort the communicator, which would free the stream).
   */
  @Override
  public Capture capture(Stream stream) {
    state.ensureUsable();
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
    NcclGraphs graphs = comm.graphs();
    if (graphs.isCapturing(s)) {
      throw new IllegalStateException(planName + ": " + stream + " is already being captured into a CUDA graph"
          + " (by your own code): capture(...) makes a graph of its own and needs a stream that is not capturing;"
          + " inside your capture, call execute(stream), which records the plan into your graph");
    }
    int rc = CudaGraphs.cudaStreamBeginCapture(s, CudaGraphs.CAPTURE_MODE_THREAD_LOCAL);
    if (rc != 0) {
      throw Checked.cudaError("cudaStreamBeginCapture (" + planName + ")", rc);
    }
    Failure failure = null;
    Throwable unexpected = null;
    try {
      long c = comm.handle();
      for (int step = 0; step < stepNumber.length && failure == null; step++) {
        failure = issueStep(step, c, s);
      }
    } catch (RuntimeException | Error e) {
      unexpected = e;
    }
    int[] endRc = new int[1];
    long graph = Checked.cudaStreamEndCaptureRaw(s, endRc); // always: the stream is unusable until then
    if (failure != null || unexpected != null || endRc[0] != 0 || graph == 0) {
      if (graph != 0) {
        Checked.cudaGraphDestroyQuietly(graph);
      }
      CudaException endError = endRc[0] != 0 ? Checked.cudaError("cudaStreamEndCapture (" + planName + ")", endRc[0])
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
      exec = Checked.cudaGraphInstantiate(graph);
    } finally {
      Checked.cudaGraphDestroyQuietly(graph); // the executable graph does not need it
    }
    NcclGraph captured = new NcclGraph(this, ncclStream, graphs, exec);
    if (!graphs.add(captured)) { // the communicator was aborted from outside meanwhile
      captured.closeBecause("its communicator was aborted");
      state.ensureUsable();
      throw new IllegalStateException(planName + ": its communicator was aborted during the capture");
    }
    return captured;
  }

  /** The checks of a graph launch; returns the stream's handle. */
  long checkLaunchable(NcclStream stream) {
    state.ensureUsable();
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
    state.enterBlocking(graphStepLabel.length > 0 ? graphStepLabel[0] : null);
    int rc = CudaGraphs.cudaGraphLaunch(exec, cudaStream);
    state.leaveBlocking();
    return rc;
  }

  /** The exception for {@code cudaGraphLaunch} returning {@code rc}. */
  RuntimeException graphLaunchFailed(int rc) {
    return Checked.cudaError("cudaGraphLaunch (" + planName + ")", rc);
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
    return "NcclCompiledSchedule[" + planName + ", " + stepNumber.length + " steps, " + kind.length
        + " calls, " + comm + "]";
  }
}
