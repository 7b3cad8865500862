package dev.commplan.runtime.nccl;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.HostTiming.Body;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;
import dev.commplan.model.Collective;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.timing.SteadyState;
import java.util.ArrayList;
import java.util.List;

/**
 * Host cost of issuing collectives through the NCCL backend, on one GPU (1 rank: NCCL does an
 * out-of-place all-reduce as one device copy, so this measures call overhead, grouping and coalescing,
 * not bandwidth). 200 all-reduces of 256 float32 each, out of place, as
 *
 * <ol>
 *   <li>(a) 200 separate direct calls ({@code Communicator.allReduce});
 *   <li>(b) the same 200 inside one {@code groupStart/groupEnd};
 *   <li>(c) a compiled {@link Schedule} of 200 calls in one step ({@code CompiledSchedule.enqueue});
 *   <li>(d) one call over all 51,200 floats;
 * </ol>
 *
 * plus, for reference, the raw binding (plain and {@code critical} downcalls, {@code
 * cudaStreamSynchronize} instead of the backend's polling wait) and a 200-field Plan (which the
 * PlanBuilder coalesces). Each figure is wall time from the first call to the end of the stream wait,
 * median (and min, p90) of {@code reps} runs in the steady state (the warm-up of {@link HostTiming}, reported
 * per row); heap bytes per enqueue come from {@code
 * com.sun.management.ThreadMXBean.getThreadAllocatedBytes} over 200 enqueues without waiting.
 *
 * <p>Run: {@code .device/run dev.commplan.runtime.nccl.NcclHostCostProbe [reps=200] [warmup=auto|auto:MIN:MAX|runs]}.
 */
public final class NcclHostCostProbe {
  private static final int CALLS = 200;
  private static final int COUNT = 256;

  private NcclHostCostProbe() {}

  public static void main(String[] args) throws Exception {
    int reps = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    SteadyState.Rule warm = HostTiming.warmUp(args.length > 1 ? args[1] : null);
    System.out.println("# NcclHostCostProbe: " + CALLS + " all-reduces of " + COUNT + " float32, out of place, 1 rank;"
        + " median of " + reps + " runs after the warm-up; wall time to the end of the stream wait;"
        + " enqueue_us: the calls alone; heap_B/run: Java heap bytes allocated by one run of the variant (its 200"
        + " calls, or its one call), without the wait");
    System.out.println("# " + warm.describe("run: the calls and the wait", "run"));
    System.out.println("# " + NcclBackend.describeEnvironment());
    System.out.println("# java " + System.getProperty("java.vm.version") + " on " + System.getProperty("os.arch")
        + ", " + Runtime.getRuntime().availableProcessors() + " cpus");
    try (Cluster cluster = NcclBackend.cluster(1)) {
      cluster.run(c -> measure((NcclCommunicator) c, reps, warm));
    }
  }

  private static void measure(NcclCommunicator c, int reps, SteadyState.Rule warm) {
    Stream s = c.stream();
    F32Buffer send = F32Buffer.allocate(c, (long) CALLS * COUNT);
    F32Buffer recv = F32Buffer.allocate(c, (long) CALLS * COUNT);
    send.fill(1f);
    Buffer[] sv = new Buffer[CALLS];
    Buffer[] rv = new Buffer[CALLS];
    List<CollectiveCall> calls = new ArrayList<>();
    for (int i = 0; i < CALLS; i++) {
      long off = (long) i * COUNT * 4;
      sv[i] = Buffer.view(DataType.F32, send.memory(), off, COUNT);
      rv[i] = Buffer.view(DataType.F32, recv.memory(), off, COUNT);
      calls.add(new CollectiveCall(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, send.memory(), off,
          recv.memory(), off, COUNT, List.of("f" + i), false));
    }
    CompiledSchedule compiled = c.compile(new Schedule("probe.TwoHundred", 1, List.of(new Step(0, calls))));
    Plan plan = twoHundredFieldPlan(c, true);
    Plan unguarded = twoHundredFieldPlan(c, false);

    long comm = c.handle();
    long stream = NcclInterop.cudaStream(s);
    long sp = NcclInterop.devicePointer(send);
    long rp = NcclInterop.devicePointer(recv);
    int f32 = NcclEnums.dataType(DataType.F32);

    Body direct = () -> {
      for (int i = 0; i < CALLS; i++) {
        c.allReduce(sv[i], rv[i], ReduceOp.SUM, s);
      }
    };
    Body group = () -> {
      c.groupStart();
      for (int i = 0; i < CALLS; i++) {
        c.allReduce(sv[i], rv[i], ReduceOp.SUM, s);
      }
      c.groupEnd();
    };
    Body schedule = () -> compiled.enqueue(s);
    Body one = () -> c.allReduce(send, recv, ReduceOp.SUM, s);
    Body planExecute = () -> plan.execute(s);
    Body unguardedExecute = () -> unguarded.execute(s);
    // Ten back to back per wait: the enqueue column over 10 is the steady-state cost of one, which
    // tells the cost of issuing apart from the cost of the first issue after a wait.
    Body planTimesTen = () -> {
      for (int i = 0; i < 10; i++) {
        plan.execute(s);
      }
    };
    Body oneTimesTen = () -> {
      for (int i = 0; i < 10; i++) {
        c.allReduce(send, recv, ReduceOp.SUM, s);
      }
    };
    Body rawPlain = () -> {
      for (int i = 0; i < CALLS; i++) {
        long off = (long) i * COUNT * 4;
        check(NcclCollectives.ncclAllReduce(sp + off, rp + off, COUNT, f32, 0, comm, stream));
      }
    };
    Body rawGroupPlain = () -> {
      check(NcclCommunicators.ncclGroupStart());
      for (int i = 0; i < CALLS; i++) {
        long off = (long) i * COUNT * 4;
        check(NcclCollectives.ncclAllReduce(sp + off, rp + off, COUNT, f32, 0, comm, stream));
      }
      check(NcclCommunicators.ncclGroupEnd());
    };
    Body rawGroupCritical = () -> {
      check(NcclCommunicators.ncclGroupStart());
      for (int i = 0; i < CALLS; i++) {
        long off = (long) i * COUNT * 4;
        check(NcclCollectives.ncclAllReduceCritical(sp + off, rp + off, COUNT, f32, 0, comm, stream));
      }
      check(NcclCommunicators.ncclGroupEnd());
    };
    Body rawOne = () -> check(NcclCollectives.ncclAllReduce(sp, rp, (long) CALLS * COUNT, f32, 0, comm, stream));
    Body rawOneInGroup = () -> {
      check(NcclCommunicators.ncclGroupStart());
      check(NcclCollectives.ncclAllReduceCritical(sp, rp, (long) CALLS * COUNT, f32, 0, comm, stream));
      check(NcclCommunicators.ncclGroupEnd());
    };

    Runnable backendWait = s::synchronize;
    Runnable cudaWait = () -> check(Cuda.cudaStreamSynchronize(stream));

    HostTiming.Row.printHeader(58);
    row("(a) 200 direct calls", direct, backendWait, reps, warm);
    row("(b) 200 direct calls in one groupStart/groupEnd", group, backendWait, reps, warm);
    row("(c) compiled Schedule of 200 calls (one step, one group)", schedule, backendWait, reps, warm);
    row("(d) one direct call over 51,200 floats", one, backendWait, reps, warm);
    row("Plan of 200 @AllReduce fields (coalesced: " + plan.schedule().steps().get(0).calls().size() + " call)",
        planExecute, backendWait, reps, warm);
    row("raw FFM: 200 ncclAllReduce, plain downcalls", rawPlain, cudaWait, reps, warm);
    row("raw FFM: 200 in a group, plain downcalls", rawGroupPlain, cudaWait, reps, warm);
    row("raw FFM: 200 in a group, critical downcalls", rawGroupCritical, cudaWait, reps, warm);
    row("raw FFM: one call over 51,200 floats", rawOne, cudaWait, reps, warm);
    row("raw FFM: one call over 51,200 floats inside a group", rawOneInGroup, cudaWait, reps, warm);
    row("(a) again, waiting with cudaStreamSynchronize", direct, cudaWait, reps, warm);
    row("(c) again, waiting with cudaStreamSynchronize", schedule, cudaWait, reps, warm);
    row("Plan again, waiting with cudaStreamSynchronize", planExecute, cudaWait, reps, warm);
    row("(d) again, waiting with cudaStreamSynchronize", one, cudaWait, reps, warm);
    row("Plan, guard off (hostAccessGuard(false)), backend wait", unguardedExecute, backendWait, reps, warm);
    row("Plan, guard off, waiting with cudaStreamSynchronize", unguardedExecute, cudaWait, reps, warm);
    row("Plan x10 back to back, backend wait (enqueue: all 10)", planTimesTen, backendWait, reps, warm);
    row("(d) x10 back to back, backend wait (enqueue: all 10)", oneTimesTen, backendWait, reps, warm);
    row("wait only (empty stream), backend polling wait", () -> {}, backendWait, reps, warm);
    row("wait only (empty stream), cudaStreamSynchronize", () -> {}, cudaWait, reps, warm);

    float[] check = recv.toArray();
    for (float f : check) {
      if (f != 1f) {
        throw new AssertionError("wrong result " + f);
      }
    }
    System.out.println("# results checked: every received element is 1.0");
    plan.close();
    unguarded.close();
    send.close();
    recv.close();
  }

  private static Plan twoHundredFieldPlan(Communicator c, boolean guard) {
    PlanBuilder b = new PlanBuilder("probe.TwoHundredFields", c, 0).hostAccessGuard(guard);
    int[] sends = new int[CALLS];
    int[] recvs = new int[CALLS];
    for (int i = 0; i < CALLS; i++) {
      sends[i] = b.buffer("s" + i, DataType.F32, COUNT, "{\"256\"}", null);
    }
    for (int i = 0; i < CALLS; i++) {
      recvs[i] = b.buffer("r" + i, DataType.F32, COUNT, "{\"256\"}", null);
    }
    for (int i = 0; i < CALLS; i++) {
      b.allReduce(0, sends[i], recvs[i], ReduceOp.SUM);
    }
    return b.build();
  }

  private static void check(int rc) {
    if (rc != 0) {
      throw new IllegalStateException("native call returned " + rc);
    }
  }

  private static void row(String name, Body body, Runnable wait, int reps, SteadyState.Rule warm) {
    HostTiming.measure(name, body, wait::run, reps, warm).print(58);
  }

}
