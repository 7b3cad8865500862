package dev.commplan.runtime.nccl.calls;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.NcclDispatch;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.nccl.binding.NcclTypeSupport;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.rank.StepEvents;
import dev.commplan.runtime.nccl.streams.NcclStream;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.IdentityHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;

/**
 * A compiled schedule's NCCL calls: resolved once, when the schedule is compiled ({@link #of}), and issued
 * step by step at every enqueue ({@link #issueSteps}).
 *
 * <p><b>Resolved once</b> to NCCL's arguments: per call the function, device pointers (block address plus
 * byte offset, so in-place calls get NCCL's in-place pointers), count, {@code ncclDataType_t}, {@code
 * ncclRedOp_t}, root or peer, and the {@code ncclComm_t} it is issued on, in flat primitive arrays; per
 * step the range of its calls and its label. A call over a mesh's axis ({@code schedule.communicatorOf(call,
 * comm)}) is issued on that axis's communicator, with ranks (root, peer) of that group; Gather, Scatter and
 * AllToAll on an NCCL without their functions become their sends and receives here, once ({@link
 * SendRecvStandIns#viaSendRecv}), with that group's rank and size, and {@code Plan.describe()} says which path
 * a call takes ({@link #note}). Sends and receives whose peer is none on this rank issue nothing.
 *
 * <p><b>Issued per step</b>: {@code ncclGroupStart}, the calls, {@code ncclGroupEnd} (a step of one call
 * is issued alone, which NCCL treats as a group of one), through {@link NcclDispatch}, allocating nothing on
 * the Java heap (the only objects made are exceptions). A step's sends and receives are in its group, so
 * that a ring exchange does not serialize. Inside the group the calls use the {@code critical} downcalls,
 * since NCCL only records them there. After each step's group the step is recorded in the rank's flight
 * recorder (a reference to the step's {@link OperationLabel}, made here once), which is how a timeout names
 * the step still pending; with {@code -Dcommplan.nccl.stepEvents=true} also a CUDA event on the stream (one
 * downcall), so that it names exactly which step.
 *
 * <p>While the stream is being captured into a CUDA graph (by {@code graphs.GraphCapture}, or by the
 * caller's own code), an enqueue issues the NCCL calls only: no flight record entry and no CUDA event,
 * which would describe work that is not running (an event recorded in a capture cannot even be queried
 * afterwards), and nothing that queries or waits on the stream, which would invalidate the capture. The
 * same loop issues the calls in both cases.
 *
 * <p><b>Plans over a mesh's axes.</b> Each call is issued on its group's communicator (the plan's own, the
 * mesh's world, or an axis's), every call of a step in one NCCL group, on the stream given to the
 * enqueue, a stream of the plan's communicator (see {@link #issueStep} for why that is correct). The
 * flight record, the timeout and the watchdog's timing are the plan's communicator's; the axes'
 * communicators must be open at every enqueue and launch ({@link #checkGroupsUsable}).
 */
public final class NcclScheduleCalls {
  private final int[] stepStart; // calls of step i are [stepStart[i], stepStart[i + 1])
  private final int[] stepNumber;
  private final OperationLabel[] stepLabel; // plan, step, its calls (and axes) and fields: for the flight record
  private final String[][] notes; // per step and call of the schedule: how it is issued (note), or null
  private final Collective[] kind;
  private final long[] send;
  private final long[] recv;
  private final long[] count;
  private final int[] dataType;
  private final int[] op; // ncclRedOp_t, for reductions
  private final int[] rootOrPeer; // the root, or a send's or receive's peer, a rank of the call's group
  private final long[] comm; // the ncclComm_t each call is issued on: the plan's, or its axis's
  private final NcclMemory[] memories; // distinct blocks, checked open before each enqueue
  /** The ranks of the schedule's groups other than the compiling one (a mesh's axes), distinct. */
  private final NcclRank[] groups;
  /** Their states, asked at every enqueue (none for a plan without axes). */
  private final NcclRankState[] groupStates;
  /** The compiling communicator's rank: its state and flight record are asked at every enqueue. */
  private final NcclRank rank;
  private final NcclRankState state;
  private final StepEvents events;
  private final String planName;

  private NcclScheduleCalls(Builder b, NcclMemory[] memories, NcclRank[] groups, NcclRank rank, String planName) {
    int n = b.size;
    this.stepStart = b.stepStart;
    this.stepNumber = b.stepNumber;
    this.stepLabel = b.stepLabel;
    this.notes = b.notes;
    this.kind = Arrays.copyOf(b.kind, n);
    this.send = Arrays.copyOf(b.send, n);
    this.recv = Arrays.copyOf(b.recv, n);
    this.count = Arrays.copyOf(b.count, n);
    this.dataType = Arrays.copyOf(b.dataType, n);
    this.op = Arrays.copyOf(b.op, n);
    this.rootOrPeer = Arrays.copyOf(b.rootOrPeer, n);
    this.comm = Arrays.copyOf(b.comm, n);
    this.memories = memories;
    this.groups = groups;
    this.groupStates = new NcclRankState[groups.length];
    for (int g = 0; g < groups.length; g++) {
      groupStates[g] = groups[g].state();
    }
    this.rank = rank;
    this.state = rank.state();
    this.events = rank.events();
    this.planName = planName;
  }

  /** The downcalls as they are made at compile time, in arrays that grow. */
  private static final class Builder {
    final int[] stepStart;
    final int[] stepNumber;
    final OperationLabel[] stepLabel;
    final String[][] notes;
    Collective[] kind = new Collective[16];
    long[] send = new long[16];
    long[] recv = new long[16];
    long[] count = new long[16];
    int[] dataType = new int[16];
    int[] op = new int[16];
    int[] rootOrPeer = new int[16];
    long[] comm = new long[16];
    int size;

    Builder(int steps) {
      stepStart = new int[steps + 1];
      stepNumber = new int[steps];
      stepLabel = new OperationLabel[steps];
      notes = new String[steps][];
    }

    void add(Collective k, long s, long r, long n, int type, int reduction, int rootOrPeerRank, long handle) {
      if (size == kind.length) {
        int grown = size * 2;
        kind = Arrays.copyOf(kind, grown);
        send = Arrays.copyOf(send, grown);
        recv = Arrays.copyOf(recv, grown);
        count = Arrays.copyOf(count, grown);
        dataType = Arrays.copyOf(dataType, grown);
        op = Arrays.copyOf(op, grown);
        rootOrPeer = Arrays.copyOf(rootOrPeer, grown);
        comm = Arrays.copyOf(comm, grown);
      }
      kind[size] = k;
      send[size] = s;
      recv[size] = r;
      count[size] = n;
      dataType[size] = type;
      op[size] = reduction;
      rootOrPeer[size] = rootOrPeerRank;
      comm[size] = handle;
      size++;
    }
  }

  /**
   * Resolves {@code schedule} (checked by {@code AbstractCommunicator.compile}) for {@code compiler}, the
   * communicator that compiles it.
   *
   * @param ranks the rank of an NCCL communicator ({@code compiler}, or one its calls run over), or null for
   *     any other communicator
   */
  public static NcclScheduleCalls of(Communicator compiler, Schedule schedule, Function<Communicator, NcclRank> ranks) {
    NcclRank owner = ranks.apply(compiler);
    String planName = schedule.planName();
    List<Step> steps = schedule.steps();
    Builder out = new Builder(steps.size());
    Map<DeviceMemory, NcclMemory> distinct = new IdentityHashMap<>();
    Set<NcclRank> groups = new LinkedHashSet<>();
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      out.stepStart[s] = out.size;
      out.stepNumber[s] = step.number();
      out.stepLabel[s] = label(planName, schedule, step);
      out.notes[s] = new String[step.calls().size()];
      for (int c = 0; c < step.calls().size(); c++) {
        CollectiveCall call = step.calls().get(c);
        String axis = schedule.axisOf(call);
        String where = planName + ", step " + step.number() + ", " + call.collective().label()
            + (axis.isEmpty() ? "" : " over " + axis) + " of " + call.fields();
        NcclRank over = group(owner, schedule.communicatorOf(call, compiler), where, ranks);
        if (over != owner) {
          groups.add(over);
        }
        NcclMemory sm = memory(owner, call.sendMemory(), where, "send", ranks);
        NcclMemory rm = memory(owner, call.recvMemory(), where, "recv", ranks);
        distinct.put(sm, sm);
        distinct.put(rm, rm);
        NcclTypeSupport.require(owner.version(), call.dataType(), call.op(), true);
        Collective collective = call.collective();
        long sendAt = sm.rawAddress() + call.sendByteOffset();
        long recvAt = rm.rawAddress() + call.recvByteOffset();
        int type = NcclEnums.dataType(call.dataType());
        int op = call.op() == null ? 0 : NcclEnums.op(call.op());
        long handle = over.comm();
        if (collective.pointToPoint()) {
          if (call.peer() >= 0) { // a peer outside the ranks: no call on this rank
            out.add(collective, sendAt, recvAt, call.count(), type, 0, call.peer(), handle);
          }
          continue;
        }
        if (collective == Collective.GATHER || collective == Collective.SCATTER || collective == Collective.ALL_TO_ALL) {
          out.notes[s][c] = SendRecvStandIns.path(collective);
        }
        if (SendRecvStandIns.isNative(collective)) {
          out.add(collective, sendAt, recvAt, call.count(), type, op, collective.hasRoot() ? call.root() : 0, handle);
        } else {
          SendRecvStandIns.viaSendRecv(collective, sendAt, recvAt, call.count() * call.dataType().byteSize(), call.root(),
              over.rank(), over.size(), (isSend, pointer, peer) -> out.add(isSend ? Collective.SEND : Collective.RECV,
                  pointer, pointer, call.count(), type, 0, peer, handle));
        }
      }
    }
    out.stepStart[steps.size()] = out.size;
    return new NcclScheduleCalls(out, new ArrayList<>(distinct.values()).toArray(new NcclMemory[0]),
        groups.toArray(new NcclRank[0]), owner, planName);
  }

  /** The number of NCCL calls one enqueue of the whole schedule issues. */
  public int size() {
    return kind.length;
  }

  /** {@return the number of steps} */
  public int steps() {
    return stepLabel.length;
  }

  /** {@return the flight record's label of step position {@code step}} */
  public OperationLabel stepLabel(int step) {
    return stepLabel[step];
  }

  /** {@return how call {@code call} of step position {@code step} is issued (Gather, Scatter, AllToAll), or null} */
  public String note(int step, int call) {
    return notes[step][call];
  }

  /** {@return the plan's name, for messages} */
  public String planName() {
    return planName;
  }

  /** {@return the compiling communicator's rank} */
  public NcclRank rank() {
    return rank;
  }

  /** {@return the ranks of the schedule's groups other than the compiling one (a mesh's axes), distinct} */
  public List<NcclRank> groups() {
    return List.of(groups);
  }

  /**
   * The rank of the communicator a call runs over: the compiling one, or one of its family (checked by
   * {@code AbstractCommunicator.compile}, which asked {@code sharesMemoryWith}; checked again here).
   */
  private static NcclRank group(NcclRank owner, Communicator over, String where,
      Function<Communicator, NcclRank> ranks) {
    NcclRank r = ranks.apply(over);
    if (r != null && (r == owner || r.sharesMemoryWith(owner))) {
      return r;
    }
    throw new IllegalArgumentException(where + ": it runs over " + over + ", which is not a communicator of "
        + owner + "'s family (a mesh's world and its axes, split from one communicator of this rank)");
  }

  private static NcclMemory memory(NcclRank owner, DeviceMemory memory, String where, String role,
      Function<Communicator, NcclRank> ranks) {
    NcclRank of = memory instanceof NcclMemory ? ranks.apply(memory.owner()) : null;
    if (!(memory instanceof NcclMemory nm) || of == null || !owner.sharesMemoryWith(of)) {
      throw new IllegalArgumentException(where + ": the " + role + " memory " + memory + " is not memory of "
          + owner + " or of its family");
    }
    if (nm.isClosed()) {
      throw new IllegalStateException(where + ": the " + role + " memory " + memory + " is closed");
    }
    return nm;
  }

  /**
   * {@code plan p.X, step 0, all-reduce over tp F32 SUM, count 16 + all-gather F32, count 4, fields [a, b]}: the
   * step's calls, each with its arguments, its axis and fields ({@link OperationLabel#ofCalls}), so that the flight
   * record on disk lines it up with the other ranks'.
   */
  private static OperationLabel label(String planName, Schedule schedule, Step step) {
    List<OperationLabel.Call> calls = new ArrayList<>();
    for (CollectiveCall call : step.calls()) {
      String axis = schedule.axisOf(call);
      calls.add(OperationLabel.Call.of(call.collective(), call.dataType(), call.op(), call.count(),
          call.collective().pointToPoint() ? call.peer() : call.root(), axis.isEmpty() ? null : axis, call.fields()));
    }
    return OperationLabel.ofCalls(planName, step.number(), step.bucket(), calls);
  }

  /**
   * Issues steps {@code [fromIndex, toIndex)} on {@code stream}, a stream of the compiling communicator; while
   * {@code capturing}, the calls only (see the class comment). Checks first ({@link #checkUsable}).
   */
  public void issueSteps(Stream stream, int fromIndex, int toIndex, boolean capturing) {
    if (fromIndex < 0) {
      throw new IndexOutOfBoundsException(planName + ": step index " + fromIndex + " is negative");
    }
    int endStep = Math.min(toIndex, stepLabel.length);
    long s = checkUsable(stream);
    long fenced = 0; // how long this rank waited at the fence: its first step's wait, for the flight record
    if (!capturing && fromIndex < endStep) {
      fenced = rank.meetGroup(); // every rank runs these steps; after the fence none blocks before its last launch
    }
    for (int step = fromIndex; step < endStep; step++) {
      Failure failure = issueStep(step, s);
      if (failure != null) {
        throw failure.thrown(state);
      }
      if (!capturing) {
        events.record(stepLabel[step], s, step == fromIndex ? fenced : 0);
      }
    }
  }

  /**
   * The axes' communicators are open: one closed on its own (a mesh closed before a plan over it) would
   * leave its calls pointing at a destroyed {@code ncclComm_t}. Aborted ones are the family's failure,
   * which the plan's own communicator already reported.
   */
  public void checkGroupsUsable() {
    for (NcclRankState g : groupStates) {
      if (!g.isOpen()) {
        RuntimeException why = g.notUsable();
        throw new IllegalStateException(planName + ": it runs calls over " + g.who() + ", which cannot be used: "
            + why.getMessage(), why);
      }
    }
  }

  /** Every memory block the calls point into is still open. */
  public void checkMemoriesOpen() {
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
  public record Failure(String function, int rc, NcclException groupEndError) {
    /** The exception to throw, made by {@code state} (which may abort the communicator first). */
    public RuntimeException thrown(NcclRankState state) {
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
  public Failure issueStep(int step, long s) {
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
      rc = NcclDispatch.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], op[i], rootOrPeer[i], comm[i], s,
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
      NcclException endError = endRc != 0 ? CheckedNccl.ncclError("ncclGroupEnd", endRc, comm[failed]) : null;
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
    int rc = NcclDispatch.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], op[i], rootOrPeer[i], comm[i], s,
        false);
    state.watchdog().leave();
    return rc != 0 ? new Failure(kind[i].ncclFunction() + " (" + stepLabel[step] + ")", rc, null) : null;
  }

  /**
   * The checks before the calls are issued or a graph of them is launched: the communicator usable, the axes'
   * too ({@link #checkGroupsUsable}), {@code stream} a live stream of the communicator, every memory block
   * the calls point into open ({@link #checkMemoriesOpen}); returns the stream's {@code cudaStream_t}.
   */
  public long checkUsable(Stream stream) {
    state.ensureUsable();
    checkGroupsUsable();
    long s = NcclStream.handleOf(stream, rank);
    checkMemoriesOpen();
    return s;
  }
}
