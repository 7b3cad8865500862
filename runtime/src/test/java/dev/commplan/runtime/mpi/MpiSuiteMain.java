package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.conformance.CollectiveCorrectnessSuite;
import dev.commplan.conformance.CollectiveReference;
import dev.commplan.conformance.ProcessConformance;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * One process of the MPI correctness run, started by mpirun on every rank ({@link MpiMultiProcessTest}):
 * the conformance kit on this process's rank of {@code MPI_COMM_WORLD} ({@link ProcessConformance}: the
 * whole correctness matrix, each rank checked against the reference and compared bitwise with rank 0's where
 * every rank receives the same, the plans, point-to-point, captured plans, a split, and every mesh of this
 * world size), then what is MPI's own: a group of direct calls, a plan closed in flight, no allocation on the
 * hot paths, fp8 AVG refused. Prints the kit's line and one of its own per rank, and exits 0 when every rank
 * passed, 1 otherwise.
 *
 * <p>{@code --fault kill}: the last rank is killed (SIGKILL) in the middle of a plan; {@code --fault hang}: the last rank
 * never joins a plan's collectives, so the others time out (each prints its exception and exits 5). Both must end
 * the job, not hang it.
 */
public final class MpiSuiteMain {
  private MpiSuiteMain() {}

  public static void main(String[] args) {
    String fault = null;
    long[] counts = CollectiveCorrectnessSuite.DEFAULT_COUNTS;
    for (int i = 0; i < args.length; i++) {
      switch (args[i]) {
        case "--fault" -> fault = args[++i];
        case "--order" -> fault = "order";
        case "--counts" -> counts = Arrays.stream(args[++i].split(",")).mapToLong(Long::parseLong).toArray();
        default -> throw new IllegalArgumentException("unknown argument " + args[i]);
      }
    }
    int status;
    try (MpiCommunicator comm = MpiBackend.world()) {
      status = fault == null ? suite(comm, counts) : "order".equals(fault) ? order(comm) : fault(comm, fault);
    }
    MpiBackend.finalizeMpi();
    System.exit(status);
  }

  /**
   * The execute-order check across processes: plans t.A and t.B (the same shape) with the check on; rank
   * 1 executes them in the other order. MPI matches the calls by order and mixes the data, and every rank
   * must fail its synchronize with DisagreementException naming both plans (the agreement check, compared
   * right after each execute of an order-checked plan), or with the RankAbortedException that quotes it.
   */
  private static int order(MpiCommunicator comm) {
    int rank = comm.rank();
    try (dev.commplan.runtime.plan.Plan a = orderPlan(comm, "t.A"); dev.commplan.runtime.plan.Plan b = orderPlan(comm, "t.B")) {
      if (rank == 1) {
        b.execute(comm.stream());
        a.execute(comm.stream());
      } else {
        a.execute(comm.stream());
        b.execute(comm.stream());
      }
      comm.stream().synchronize();
      System.out.println("rank " + rank + ": order check missed the swap");
      return 1;
    } catch (dev.commplan.runtime.DisagreementException | dev.commplan.runtime.RankAbortedException e) {
      // its own finding, or the first finder's, quoted, where that rank's failure notice came first
      System.out.println("rank " + rank + ": order check caught " + e.getClass().getSimpleName() + ": " + e.getMessage());
      return 0;
    }
  }

  private static dev.commplan.runtime.plan.Plan orderPlan(MpiCommunicator comm, String name) {
    dev.commplan.runtime.plan.PlanBuilder b = new dev.commplan.runtime.plan.PlanBuilder(name, comm, 0).orderCheck(true);
    int x = b.buffer("x", dev.commplan.runtime.DataType.F32, 256, "{\"256\"}", null);
    b.allReduce(0, x, x, dev.commplan.annotations.ReduceOp.SUM);
    return b.build();
  }

  private static int suite(MpiCommunicator comm, long[] counts) {
    long start = System.nanoTime();
    int rank = comm.rank();
    int n = comm.size();
    // MPI rounds 16-bit floats at every hop of its reduction, as NCCL does (docs/mpi/supported.md, "What is
    // supported": precision)
    ProcessConformance.Settings settings = ProcessConformance.Settings.defaults()
        .withAccumulationRoundoff(CollectiveReference::typeAccumulation).withCounts(counts);
    ProcessConformance.Result kit = ProcessConformance.runOnRank(comm, settings);
    List<String> failures = new ArrayList<>(kit.failures());
    String group = group(comm);
    if (group != null) {
      failures.add(group);
    }
    String closing = closedInFlight(comm);
    if (closing != null) {
      failures.add(closing);
    }
    String allocation = allocationFree(comm);
    if (allocation != null) {
      failures.add(allocation);
    }
    failures.addAll(fp8AverageRefused(comm));
    // How many ranks failed, so that every process (and rank 0's summary) knows.
    int failedRanks;
    try (I32Buffer flag = I32Buffer.allocate(comm, 1)) {
      flag.set(0, failures.isEmpty() ? 0 : 1);
      comm.allReduce(flag, flag, ReduceOp.SUM, comm.stream());
      comm.stream().synchronize();
      failedRanks = flag.get(0);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    // one println per line: mpirun interleaves the processes' output at each write
    System.out.println(kit.summary());
    System.out.println(String.format(java.util.Locale.ROOT, "mpi suite rank %d of %d: the conformance kit (%d collective"
        + " runs), group, close-in-flight, allocation and fp8-average checks: %s in %.1f s", rank, n, kit.collectiveRuns(),
        failures.isEmpty() ? "all right" : failures.size() + " wrong", seconds));
    for (String failure : failures.subList(0, Math.min(20, failures.size()))) {
      System.out.println("  FAIL " + failure);
    }
    if (rank == 0) {
      System.out.println(failedRanks == 0
          ? "mpi suite: all " + n + " ranks passed"
          : "mpi suite: " + failedRanks + " of " + n + " ranks failed");
    }
    System.out.flush();
    return failedRanks == 0 ? 0 : 1;
  }

  /**
   * AVG on fp8 is refused on MPI as on every backend ({@code [CommPlan/Fp8Average]}): a direct all-reduce,
   * reduce and reduce-scatter, and a plan's build. Returns what was wrong.
   */
  private static List<String> fp8AverageRefused(MpiCommunicator comm) {
    List<String> failures = new ArrayList<>();
    String tag = dev.commplan.model.RuleId.FP8_AVERAGE.tag();
    int n = comm.size();
    try (dev.commplan.runtime.F8E4M3Buffer e4m3 = dev.commplan.runtime.F8E4M3Buffer.allocate(comm, n);
        dev.commplan.runtime.F8E5M2Buffer e5m2 = dev.commplan.runtime.F8E5M2Buffer.allocate(comm, n)) {
      List<Runnable> calls = List.of(
          () -> comm.allReduce(e4m3, e4m3, ReduceOp.AVG, comm.stream()),
          () -> comm.reduce(e5m2, e5m2, ReduceOp.AVG, 0, comm.stream()),
          () -> comm.reduceScatter(e4m3, dev.commplan.runtime.Buffer.view(DataType.F8E4M3, e4m3.memory(),
              comm.rank(), 1), ReduceOp.AVG, comm.stream()));
      for (Runnable call : calls) {
        try {
          call.run();
          failures.add("fp8 AVG was not refused on rank " + comm.rank());
        } catch (IllegalArgumentException e) {
          if (!e.getMessage().startsWith(tag)) {
            failures.add("fp8 AVG refused without " + tag + ": " + e.getMessage());
          }
        }
      }
    }
    PlanBuilder b = new PlanBuilder("suite.Fp8Average", comm, 0);
    int g = b.buffer("g", DataType.F8E5M2, 4, "{\"4\"}", null);
    b.allReduce(0, g, g, ReduceOp.AVG);
    try (Plan plan = b.build()) {
      failures.add("a plan with fp8 AVG built on rank " + comm.rank() + ": " + plan.describe());
    } catch (dev.commplan.runtime.PlanBuildException e) {
      if (!e.getMessage().startsWith(tag)) {
        failures.add("fp8 AVG plan refused without " + tag + ": " + e.getMessage());
      }
    }
    return failures;
  }

  /**
   * Direct calls inside one group are in flight together and complete at synchronize: an all-reduce, an
   * in-place all-gather and an in-place reduce-scatter AVG of I32 (SumPostDiv), issued between
   * groupStart and groupEnd. Returns null when right.
   */
  private static String group(MpiCommunicator comm) {
    int r = comm.rank();
    int n = comm.size();
    try (I32Buffer sum = I32Buffer.allocate(comm, 3);
        I32Buffer gathered = I32Buffer.allocate(comm, 2L * n);
        I32Buffer parts = I32Buffer.allocate(comm, 2L * n)) {
      sum.copyFrom(new int[] {r, -r, 7});
      gathered.fill(-1);
      gathered.set(2L * r, 10 * r);
      gathered.set(2L * r + 1, 10 * r + 1);
      for (int i = 0; i < 2 * n; i++) {
        parts.set(i, i * 100 + r);
      }
      dev.commplan.runtime.Buffer slice = dev.commplan.runtime.Buffer.view(DataType.I32, parts.memory(), 8L * r, 2);
      dev.commplan.runtime.Buffer mine = dev.commplan.runtime.Buffer.view(DataType.I32, gathered.memory(), 8L * r, 2);
      comm.groupStart();
      comm.allReduce(sum, sum, ReduceOp.SUM, comm.stream());
      comm.allGather(mine, gathered, comm.stream());
      comm.reduceScatter(parts, slice, ReduceOp.AVG, comm.stream());
      comm.groupEnd();
      comm.stream().synchronize();
      int total = n * (n - 1) / 2;
      int[] wantGathered = new int[2 * n];
      for (int k = 0; k < n; k++) {
        wantGathered[2 * k] = 10 * k;
        wantGathered[2 * k + 1] = 10 * k + 1;
      }
      int[] wantParts = new int[2 * n];
      for (int i = 0; i < 2 * n; i++) {
        wantParts[i] = i * 100 + r; // only the rank's own slice is written...
      }
      for (int i = 2 * r; i < 2 * r + 2; i++) {
        wantParts[i] = (n * i * 100 + total) / n; // ...with the average over ranks of i·100 + k
      }
      if (!Arrays.equals(sum.toArray(), new int[] {total, -total, 7 * n})
          || !Arrays.equals(gathered.toArray(), wantGathered) || !Arrays.equals(parts.toArray(), wantParts)) {
        return "group on rank " + r + ": sum " + Arrays.toString(sum.toArray()) + ", gathered "
            + Arrays.toString(gathered.toArray()) + ", parts " + Arrays.toString(parts.toArray()) + "; expected "
            + Arrays.toString(new int[] {total, -total, 7 * n}) + ", " + Arrays.toString(wantGathered) + ", "
            + Arrays.toString(wantParts);
      }
      return null;
    }
  }

  /**
   * Closing a plan whose last step is still in flight completes it before the memory is freed (as
   * cudaFree waits), and the communicator goes on working. Returns null when right.
   */
  private static String closedInFlight(MpiCommunicator comm) {
    PlanBuilder b = new PlanBuilder("suite.ClosedInFlight", comm, 0);
    int big = b.buffer("big", DataType.F32, 1 << 16, "{\"1 << 16\"}", null);
    b.allReduce(0, big, big, ReduceOp.SUM);
    Plan plan = b.build();
    ((F32Buffer) plan.buffer(big)).fill(1f);
    plan.execute(comm.stream());
    plan.close(); // no synchronize: the all-reduce is in flight
    try (I32Buffer one = I32Buffer.allocate(comm, 1)) {
      one.set(0, 1);
      comm.allReduce(one, one, ReduceOp.SUM, comm.stream());
      comm.stream().synchronize();
      return one.get(0) == comm.size() ? null
          : "after closing a plan in flight on rank " + comm.rank() + ": all-reduce gave " + one.get(0);
    }
  }

  /**
   * A compiled plan's execute and synchronize allocate nothing on the Java heap once warm: the four
   * collectives, in place (ReduceScatter's scratch copy and AVG's division included), over two steps.
   */
  private static String allocationFree(MpiCommunicator comm) {
    int n = comm.size();
    PlanBuilder b = new PlanBuilder("suite.AllocationFree", comm, 0);
    int grads = b.buffer("grads", DataType.F32, 1000, "{\"1000\"}", null);
    int shards = b.buffer("shards", DataType.F32, 8L * n, "{\"ranks\", \"8\"}", null);
    int gathered = b.buffer("gathered", DataType.I32, 4L * n, "{\"ranks\", \"4\"}", null);
    int params = b.buffer("params", DataType.F64, 16, "{\"16\"}", null);
    b.allReduce(0, grads, grads, ReduceOp.SUM);
    b.allGather(0, gathered, gathered);
    b.reduceScatter(0, shards, shards, ReduceOp.AVG);
    b.broadcast(1, params, params, 0);
    // issue 17's collectives and transfers: the same, no allocation per execute
    int reduced = b.buffer("reduced", DataType.F32, 64, "{\"64\"}", null);
    int part = b.buffer("part", DataType.I32, 4, "{\"4\"}", null);
    int all = b.buffer("all", DataType.I32, 4L * n, "{\"ranks\", \"4\"}", null);
    int whole = b.buffer("whole", DataType.U8, 8L * n, "{\"ranks\", \"8\"}", null);
    int x = b.buffer("x", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
    int y = b.buffer("y", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
    b.collective(2, Collective.REDUCE, reduced, reduced, ReduceOp.AVG, n - 1);
    b.collective(2, Collective.GATHER, part, all, null, 0);
    b.collective(2, Collective.SCATTER, whole, whole, null, 0);
    b.collective(2, Collective.ALL_TO_ALL, x, y, null, -1);
    int ring = b.buffer("ring", DataType.F32, 16, "{\"16\"}", null);
    int fromRing = b.buffer("fromRing", DataType.F32, 16, "{\"16\"}", null);
    int stage = b.buffer("stage", DataType.F32, 16, "{\"16\"}", null);
    int fromStage = b.buffer("fromStage", DataType.F32, 16, "{\"16\"}", null);
    b.send(3, ring, "(rank + 1) % ranks");
    b.recv(3, fromRing, "(rank - 1) % ranks");
    b.send(3, stage, "rank + 1");
    b.recv(3, fromStage, "rank - 1");
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
    try (Plan plan = b.build()) {
      for (int i = 0; i < 300; i++) {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      }
      int runs = 200;
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < runs; i++) {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      }
      long bytes = threads.getCurrentThreadAllocatedBytes() - before;
      if (bytes != 0) {
        return "plan suite.AllocationFree on rank " + comm.rank() + ": " + runs + " runs of execute + synchronize"
            + " allocated " + bytes + " bytes on the Java heap, expected none";
      }
    }
    return directAllocationFree(comm, threads);
  }

  /**
   * Direct calls allocate nothing once warm either: an all-reduce and a reduce-scatter AVG in place, each
   * synchronized, then a group of a ring's send and receive.
   */
  private static String directAllocationFree(MpiCommunicator comm, com.sun.management.ThreadMXBean threads) {
    int n = comm.size();
    int next = (comm.rank() + 1) % n;
    int previous = (comm.rank() + n - 1) % n;
    try (F32Buffer x = F32Buffer.allocate(comm, 256); F32Buffer shards = F32Buffer.allocate(comm, 4L * n);
        I32Buffer out = I32Buffer.allocate(comm, 8); I32Buffer in = I32Buffer.allocate(comm, 8)) {
      dev.commplan.runtime.Buffer mine = dev.commplan.runtime.Buffer.view(DataType.F32, shards.memory(),
          16L * comm.rank(), 4);
      Runnable calls = () -> {
        comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
        comm.reduceScatter(shards, mine, ReduceOp.AVG, comm.stream());
        comm.stream().synchronize();
        if (n > 1) {
          comm.groupStart();
          comm.send(out, next, comm.stream());
          comm.recv(in, previous, comm.stream());
          comm.groupEnd();
          comm.stream().synchronize();
        }
      };
      for (int i = 0; i < 300; i++) {
        calls.run();
      }
      int runs = 200;
      long before = threads.getCurrentThreadAllocatedBytes();
      for (int i = 0; i < runs; i++) {
        calls.run();
      }
      long bytes = threads.getCurrentThreadAllocatedBytes() - before;
      return bytes == 0 ? null : "direct calls on rank " + comm.rank() + ": " + runs + " runs of all-reduce, reduce-scatter"
          + " AVG in place and a grouped send and receive allocated " + bytes + " bytes on the Java heap, expected none";
    }
  }

  /** A two-step plan (a large all-reduce, then a broadcast); the last rank fails in the middle of it. */
  private static int fault(MpiCommunicator comm, String fault) {
    int rank = comm.rank();
    int last = comm.size() - 1;
    PlanBuilder b = new PlanBuilder("faults.TwoSteps", comm, 0);
    int grads = b.buffer("grads", DataType.F32, 1 << 18, "{\"1 << 18\"}", null);
    int params = b.buffer("params", DataType.F32, 1 << 10, "{\"1 << 10\"}", null);
    b.allReduce(0, grads, grads, ReduceOp.SUM);
    b.broadcast(1, params, params, 0);
    try (Plan plan = b.build()) {
      ((F32Buffer) plan.buffer(grads)).fill(1f);
      plan.execute(comm.stream()); // once for real: everyone is connected and the plan works
      comm.stream().synchronize();
      System.out.println("rank " + rank + ": first run done, grads[0] = " + ((F32Buffer) plan.buffer(grads)).get(0));
      System.out.flush();
      if (rank == last && fault.equals("kill")) {
        plan.executeStep(0, comm.stream()); // step 0 in flight...
        System.out.println("rank " + rank + ": killed (SIGKILL) in the middle of plan faults.TwoSteps");
        System.out.flush();
        try { // ...and the process is killed, as by the OOM killer or a crash: no finalize, no shutdown hook
          new ProcessBuilder("kill", "-KILL", Long.toString(ProcessHandle.current().pid())).inheritIO().start().waitFor();
          Thread.sleep(60_000);
        } catch (Exception e) {
          System.out.println("rank " + rank + ": could not kill itself (" + e + "); halting instead");
        }
        Runtime.getRuntime().halt(9);
      }
      if (rank == last && fault.equals("hang")) {
        System.out.println("rank " + rank + ": not joining the second run");
        System.out.flush();
        try {
          Thread.sleep(600_000);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
        return 3;
      }
      try {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      } catch (dev.commplan.runtime.CommPlanException e) {
        System.out.println("rank " + rank + ": " + e.getClass().getSimpleName() + ": " + e.getMessage());
        System.out.flush();
        return 5;
      }
      System.out.println("rank " + rank + ": second run done (the fault did not stop it)");
      return 4;
    }
  }
}
