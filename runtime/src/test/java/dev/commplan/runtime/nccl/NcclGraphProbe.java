package dev.commplan.runtime.nccl;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.HostTiming.Body;
import dev.commplan.runtime.nccl.HostTiming.Row;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.NcclDispatch;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.CudaGraphs;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;
import dev.commplan.runtime.nccl.calls.NcclScheduleCalls;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.timing.SteadyState;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.Locale;

/**
 * Issue 18's targets for captured plans, on one GPU (1 rank), every row waited for with {@code
 * cudaStreamSynchronize} so that rows compare like for like:
 *
 * <ul>
 *   <li>(a) the 200 × 256 float plan (coalesced by the builder into one call), captured, {@code launch()}
 *       against one raw {@code ncclAllReduce} over the same 51,200 floats through the raw FFM binding:
 *       target at most 0.75×. The floor is the same raw call captured into a graph by hand and launched
 *       with {@code cudaGraphLaunch} (and bench/native/graph_probe.c does both in C);
 *   <li>(b) a plan of 200 buffers over 4 data types (float, half, int32, double) and 2 ops (SUM, MAX):
 *       8 calls that cannot coalesce, captured, {@code launch()} against one raw float call over the same
 *       bytes: target at most 1.5×;
 *   <li>the issue's own figures again: 200 raw calls in one group, issued and captured;
 *   <li>the cost of the capture probe ({@code cudaStreamIsCapturing}) that every execute and launch pays.
 * </ul>
 *
 * Each row: median, min and p90 of {@code reps} runs in the steady state ({@link HostTiming}'s warm-up,
 * reported per row), wall time from the first call
 * to the end of the wait; {@code enqueue_us}, the calls alone; {@code heap_B/run}, Java heap bytes per
 * run ({@code ThreadMXBean.getThreadAllocatedBytes} over 200 runs without the wait). Ends with the two
 * ratios against their targets.
 *
 * <p>Run on the test class path: {@code dev.commplan.runtime.nccl.NcclGraphProbe [reps=200]
 * [warmup=auto|auto:MIN:MAX|runs]} (docs/bench.md, "CUDA graphs: what the probes measure").
 */
public final class NcclGraphProbe {
  private static final int K = 200;
  private static final int COUNT = 256;
  private static final DataType[] MIXED_TYPES = {DataType.F32, DataType.F16, DataType.I32, DataType.F64};
  private static final ReduceOp[] MIXED_OPS = {ReduceOp.SUM, ReduceOp.MAX};

  private NcclGraphProbe() {}

  public static void main(String[] args) {
    int reps = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    SteadyState.Rule warm = HostTiming.warmUp(args.length > 1 ? args[1] : null);
    System.out.println("# NcclGraphProbe (issue 18): 1 rank, out of place; median of " + reps + " runs after the"
        + " warm-up; every row waits with cudaStreamSynchronize");
    System.out.println("# " + warm.describe("run: the calls and the wait", "run"));
    System.out.println("# " + NcclBackend.describeEnvironment());
    System.out.println("# java " + System.getProperty("java.vm.version") + " on " + System.getProperty("os.arch")
        + ", " + Runtime.getRuntime().availableProcessors() + " cpus");
    try (Cluster cluster = NcclBackend.cluster(1)) {
      cluster.run(c -> measure((NcclCommunicator) c, reps, warm));
    }
  }

  static Plan plan(Communicator c, boolean mixed) {
    PlanBuilder b = new PlanBuilder(mixed ? "probe.Mixed200" : "probe.TwoHundred", c, 0);
    int[] send = new int[K];
    int[] recv = new int[K];
    for (int i = 0; i < K; i++) {
      DataType type = mixed ? MIXED_TYPES[i % MIXED_TYPES.length] : DataType.F32;
      send[i] = b.buffer("s" + i, type, COUNT, "{\"256\"}", null);
      recv[i] = b.buffer("r" + i, type, COUNT, "{\"256\"}", null);
    }
    for (int i = 0; i < K; i++) {
      ReduceOp op = mixed ? MIXED_OPS[(i / MIXED_TYPES.length) % MIXED_OPS.length] : ReduceOp.SUM;
      b.allReduce(0, send[i], recv[i], op);
    }
    return b.build();
  }

  static long mixedBytes() {
    long total = 0;
    for (int i = 0; i < K; i++) {
      total += (long) COUNT * MIXED_TYPES[i % MIXED_TYPES.length].byteSize();
    }
    return total;
  }

  private static void measure(NcclCommunicator c, int reps, SteadyState.Rule warm) {
    Stream s = c.stream();
    long stream = NcclInterop.cudaStream(s);
    long comm = c.handle();
    int f32 = NcclEnums.dataType(DataType.F32);
    int sum = NcclEnums.op(ReduceOp.SUM);
    long flatCount = (long) K * COUNT;
    long mixedFloats = mixedBytes() / 4;
    try (F32Buffer send = F32Buffer.allocate(c, Math.max(flatCount, mixedFloats));
        F32Buffer recv = F32Buffer.allocate(c, Math.max(flatCount, mixedFloats));
        Plan coalesced = plan(c, false);
        Plan mixed = plan(c, true);
        CapturedPlan coalescedGraph = coalesced.capture(s);
        CapturedPlan mixedGraph = mixed.capture(s)) {
      long sp = NcclInterop.devicePointer(send);
      long rp = NcclInterop.devicePointer(recv);
      send.fill(1f);
      Runnable cudaWait = () -> check(Cuda.cudaStreamSynchronize(stream));

      Body rawFlat = () -> check(NcclCollectives.ncclAllReduce(sp, rp, flatCount, f32, sum, comm, stream));
      Body rawMixedFlat = () -> check(NcclCollectives.ncclAllReduce(sp, rp, mixedFloats, f32, sum, comm, stream));
      Body rawGroup = () -> {
        check(NcclCommunicators.ncclGroupStart());
        for (int i = 0; i < K; i++) {
          long off = (long) i * COUNT * 4;
          check(NcclCollectives.ncclAllReduceCritical(sp + off, rp + off, COUNT, f32, sum, comm, stream));
        }
        check(NcclCommunicators.ncclGroupEnd());
      };
      long rawFlatGraph = captureRaw(stream, rawFlat);
      long rawGroupGraph = captureRaw(stream, rawGroup);
      MemorySegment status = Arena.ofAuto().allocate(ValueLayout.JAVA_INT);
      try {
        HostTiming.Row.printHeader(66);
        Row rawOne = row("raw FFM: one ncclAllReduce over 51,200 floats", rawFlat, cudaWait, reps, warm);
        row("raw FFM: the same call captured by hand, cudaGraphLaunch (floor)",
            () -> check(CudaGraphs.cudaGraphLaunch(rawFlatGraph, stream)), cudaWait, reps, warm);
        row("(a) Plan 200 x 256 float (coalesced: " + calls(coalesced) + " call), execute",
            () -> coalesced.execute(s), cudaWait, reps, warm);
        long[] at = firstCall(coalesced);
        row("raw FFM: the plan's call alone (its addresses, as it issues it)", () -> check(NcclDispatch.enqueue(
            Collective.ALL_REDUCE, at[0], at[1], at[2], f32, sum, 0, comm, stream, false)), cudaWait, reps, warm);
        Row a = row("(a) the same plan captured, launch()", coalescedGraph::launch, cudaWait, reps, warm);
        Row rawMixed = row("raw FFM: one float call over the mixed plan's " + mixedBytes() + " bytes", rawMixedFlat,
            cudaWait, reps, warm);
        row("(b) Plan 200 buffers, 4 types x 2 ops (" + calls(mixed) + " calls), execute", () -> mixed.execute(s),
            cudaWait, reps, warm);
        Row b = row("(b) the same plan captured, launch()", mixedGraph::launch, cudaWait, reps, warm);
        row("raw FFM: 200 ncclAllReduce in one group (critical downcalls)", rawGroup, cudaWait, reps, warm);
        row("raw FFM: the same group captured by hand, cudaGraphLaunch",
            () -> check(CudaGraphs.cudaGraphLaunch(rawGroupGraph, stream)), cudaWait, reps, warm);
        row("cudaStreamIsCapturing x 1000 (the capture probe; enqueue_us / 1000 = one)", () -> {
          for (int i = 0; i < 1000; i++) {
            check(CudaGraphs.cudaStreamIsCapturing(stream, status));
          }
        }, () -> {}, reps, warm);
        System.out.println(String.format(Locale.ROOT,
            "# target (a): captured 200 x 256 plan / one raw flat call = %.2f (median %.1f / %.1f us; target <= 0.75)",
            a.medianUs() / rawOne.medianUs(), a.medianUs(), rawOne.medianUs()));
        System.out.println(String.format(Locale.ROOT,
            "# target (b): captured 4 types x 2 ops plan / one raw flat call over the same bytes = %.2f"
                + " (median %.1f / %.1f us; target <= 1.5)", b.medianUs() / rawMixed.medianUs(), b.medianUs(),
            rawMixed.medianUs()));
        System.out.println(String.format(Locale.ROOT, "# heap bytes per launch: (a) %.1f, (b) %.1f (target 0)",
            a.heapBytes(), b.heapBytes()));
      } finally {
        CheckedCuda.cudaGraphExecDestroy(rawFlatGraph);
        CheckedCuda.cudaGraphExecDestroy(rawGroupGraph);
      }
      float[] got = new float[(int) flatCount];
      // (the plans' results are checked by NcclCapturedPlanGpuTest; here the raw call's)
      recv.copyTo(0, got, 0, got.length);
      for (float f : got) {
        if (f != 1f) {
          throw new AssertionError("raw call: wrong result " + f);
        }
      }
      System.out.println("# raw results checked: every received element is 1.0");
    }
  }

  /**
   * The send and receive addresses and the count of {@code plan}'s first compiled call, read by reflection
   * (a probe's only view of them): to time exactly the NCCL call that its execute issues, without the plan.
   */
  private static long[] firstCall(Plan plan) {
    try {
      java.lang.reflect.Field compiled = Plan.class.getDeclaredField("compiled");
      compiled.setAccessible(true);
      java.lang.reflect.Field resolved = NcclCompiledSchedule.class.getDeclaredField("calls");
      resolved.setAccessible(true);
      NcclScheduleCalls calls = (NcclScheduleCalls) resolved.get(compiled.get(plan));
      long[] at = new long[3];
      String[] names = {"send", "recv", "count"};
      for (int i = 0; i < names.length; i++) {
        java.lang.reflect.Field f = NcclScheduleCalls.class.getDeclaredField(names[i]);
        f.setAccessible(true);
        at[i] = ((long[]) f.get(calls))[0];
      }
      return at;
    } catch (ReflectiveOperationException e) {
      throw new IllegalStateException(e);
    }
  }

  private static int calls(Plan plan) {
    return plan.schedule().steps().stream().mapToInt(step -> step.calls().size()).sum();
  }

  /** {@code body} captured (thread-local mode) into a graph and instantiated: the executable graph. */
  private static long captureRaw(long stream, Body body) {
    check(CudaGraphs.cudaStreamBeginCapture(stream, CudaGraphs.CAPTURE_MODE_THREAD_LOCAL));
    body.run();
    int[] rc = new int[1];
    long graph = CheckedCuda.cudaStreamEndCaptureRaw(stream, rc);
    check(rc[0]);
    try {
      return CheckedCuda.cudaGraphInstantiate(graph);
    } finally {
      CheckedCuda.cudaGraphDestroyQuietly(graph);
    }
  }

  private static void check(int rc) {
    if (rc != 0) {
      throw new IllegalStateException("native call returned " + rc);
    }
  }

  private static Row row(String name, Body body, Runnable wait, int reps, SteadyState.Rule warm) {
    Row row = HostTiming.measure(name, body, wait::run, reps, warm);
    row.print(66);
    return row;
  }

}
