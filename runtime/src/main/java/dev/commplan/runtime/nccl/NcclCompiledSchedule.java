package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Stream;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * A schedule resolved once to NCCL's arguments: device pointers (block address plus byte offset, so
 * in-place calls get NCCL's in-place pointers), counts, {@code ncclDataType_t}, {@code ncclRedOp_t},
 * roots, in flat primitive arrays. {@link #enqueue} walks them and issues, per step, {@code
 * ncclGroupStart}, the calls, {@code ncclGroupEnd} (a step of one call is issued alone, which NCCL
 * treats as a group of one); it allocates nothing on the Java heap (the only
 * objects it makes are exceptions). Inside the group the calls use the {@code critical} downcalls, since
 * NCCL only records them there. After each step's group it records the step in the communicator's flight
 * recorder (a reference to the step's {@link OperationLabel}, made here once), which is how a timeout
 * names the step still pending; with {@code -Dcommplan.nccl.stepEvents=true} also a CUDA event on the
 * stream (one downcall), so that it names exactly which step.
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
  private final int[] opOrRoot;
  private final NcclMemory[] memories; // distinct blocks, checked open before each enqueue
  private final OperationLabel[] stepLabel; // plan, step, its calls and fields: for the flight record

  NcclCompiledSchedule(NcclCommunicator comm, Schedule schedule) {
    this.comm = comm;
    this.state = comm.state();
    this.events = comm.events();
    this.planName = schedule.planName(); // checked by PlanRules.checkSchedule in compile
    int calls = 0;
    for (Step step : schedule.steps()) {
      calls += step.calls().size();
    }
    List<Step> steps = schedule.steps();
    stepStart = new int[steps.size() + 1];
    stepNumber = new int[steps.size()];
    stepLabel = new OperationLabel[steps.size()];
    kind = new Collective[calls];
    send = new long[calls];
    recv = new long[calls];
    count = new long[calls];
    dataType = new int[calls];
    opOrRoot = new int[calls];
    Map<DeviceMemory, NcclMemory> distinct = new IdentityHashMap<>();
    int i = 0;
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      stepStart[s] = i;
      stepNumber[s] = step.number();
      stepLabel[s] = label(planName, step);
      for (CollectiveCall call : step.calls()) {
        String where = planName + ", step " + step.number() + ", " + call.collective().label() + " of "
            + call.fields();
        NcclMemory sm = memory(call.sendMemory(), where, "send");
        NcclMemory rm = memory(call.recvMemory(), where, "recv");
        distinct.put(sm, sm);
        distinct.put(rm, rm);
        comm.requireSupported(call.dataType(), call.op());
        kind[i] = call.collective();
        send[i] = sm.rawAddress() + call.sendByteOffset();
        recv[i] = rm.rawAddress() + call.recvByteOffset();
        count[i] = call.count();
        dataType[i] = NcclArgs.dataType(call.dataType());
        opOrRoot[i] = switch (call.collective().operand()) {
          case ROOT -> call.root();
          case OP -> NcclArgs.op(call.op());
          case NONE -> 0;
        };
        i++;
      }
    }
    stepStart[steps.size()] = i;
    memories = new ArrayList<>(distinct.values()).toArray(new NcclMemory[0]);
  }

  /** {@code plan p.X, step 0, all-reduce F32 SUM, count 16 + all-gather F32, count 4, fields [a, b]}. */
  private static OperationLabel label(String planName, Step step) {
    List<String> calls = new ArrayList<>();
    List<String> fields = new ArrayList<>();
    for (CollectiveCall call : step.calls()) {
      StringBuilder c = new StringBuilder(call.collective().label()).append(' ').append(call.dataType());
      switch (call.collective().operand()) {
        case OP -> c.append(' ').append(call.op());
        case ROOT -> c.append(" root ").append(call.root());
        case NONE -> { }
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

  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex) {
    if (fromIndex < 0) {
      throw new IndexOutOfBoundsException(planName + ": step index " + fromIndex + " is negative");
    }
    int endStep = Math.min(toIndex, stepNumber.length);
    state.ensureUsable();
    long s = comm.streamHandle(stream);
    for (NcclMemory m : memories) {
      if (m.isClosed()) {
        throw new IllegalStateException(planName + ": " + m + " was freed after the schedule was compiled");
      }
    }
    long c = comm.handle();
    for (int step = fromIndex; step < endStep; step++) {
      if (stepStart[step + 1] - stepStart[step] == 1) {
        enqueueAlone(stepStart[step], step, c, s);
        continue;
      }
      int rc = NcclCalls.groupStart();
      if (rc != 0) {
        throw state.failed("ncclGroupStart", rc);
      }
      int failed = -1;
      int failedRc = 0;
      for (int i = stepStart[step], end = stepStart[step + 1]; i < end; i++) {
        rc = NcclCalls.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], opOrRoot[i], c, s, true);
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
        RuntimeException e = state.failed(kind[failed].ncclFunction() + " (" + stepLabel[step] + ")", failedRc);
        if (endError != null) {
          e.addSuppressed(endError);
        }
        throw e;
      }
      if (endRc != 0) {
        throw state.failed("ncclGroupEnd (" + stepLabel[step] + ")", endRc);
      }
      events.record(stepLabel[step], s);
    }
  }

  /**
   * A step of one call skips ncclGroupStart/End: NCCL wraps every ungrouped call in a group of its own,
   * so the effect is the same with two downcalls fewer (on NCCL 2.28 the pair measured no host time worth
   * naming, docs/gpu.md). Plain downcalls: outside a group NCCL launches work and may block.
   */
  private void enqueueAlone(int i, int step, long c, long s) {
    state.enterBlocking(stepLabel[step]); // outside a group the call itself may wait for its peers
    int rc = NcclCalls.enqueue(kind[i], send[i], recv[i], count[i], dataType[i], opOrRoot[i], c, s, false);
    state.leaveBlocking();
    if (rc != 0) {
      throw state.failed(kind[i].ncclFunction() + " (" + stepLabel[step] + ")", rc);
    }
    events.record(stepLabel[step], s);
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
