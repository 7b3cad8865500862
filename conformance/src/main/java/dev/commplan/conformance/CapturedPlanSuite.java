package dev.commplan.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Case;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Expected;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.U8Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Captured plans ({@code Plan.capture}, {@link CapturedPlan}) on any backend: subclass it and name the
 * backend ({@link #backend()}); a backend that records a plan once and replays it (NCCL: a CUDA graph) says
 * so in {@link #expectsGraph}.
 *
 * <p>Correctness: every case of {@link CollectiveCorrectnessSuite}'s matrix (each collective × data type
 * × op or root × in and out of place) as a one-call plan, captured once and launched {@link #launches()}
 * times, with fresh random inputs written from the host between launches and the receive side poisoned
 * before each; every launch is checked on every rank against the independent reference ({@link
 * CollectiveReference}). Then a multi-step plan (coalesced calls, a later step reading an earlier one's
 * output) launched {@link #manyLaunches()} times, exact integers, checked every time; and the launches
 * interleaved with {@code execute} and {@code executeStep}.
 *
 * <p>Misuse, each a clear exception: launch after close, launch after the plan was closed, capture and
 * launch once the communicator is closed, launch after a bound buffer was freed, another communicator's
 * stream; and the host-access guard across launches.
 *
 * <p>The per-rank logic of the matrix is static ({@link #launchCasesOnRank}, {@link #launchMixedOnRank}) so
 * that a backend whose ranks are processes runs it too ({@link ProcessConformance}).
 */
public abstract class CapturedPlanSuite extends BackendSuite {
  /** For subclasses. */
  protected CapturedPlanSuite() {}

  /**
   * Whether the backend records a captured plan once and replays it ({@link CapturedPlan#isGraph()}: a CUDA
   * graph on NCCL) at {@code ranks} ranks. The default: false, a backend whose {@code launch()} enqueues the
   * plan's calls again ({@code CompiledSchedule.capture}'s default).
   *
   * @param ranks the world size
   * @return what {@link CapturedPlan#isGraph()} must say
   */
  protected boolean expectsGraph(int ranks) {
    return false;
  }

  /** {@return the launches per case of the matrix, each on fresh inputs} */
  protected int launches() {
    return 4;
  }

  /** {@return the launches of the multi-step plan} */
  protected int manyLaunches() {
    return 200;
  }

  /** Per-rank element count of the matrix's cases (odd, so that slicing bugs show). */
  public static final long COUNT = 37;

  // ---------------------------------------------------------------- the matrix

  @TestFactory
  Stream<DynamicNode> everyCollectiveLaunchedAgainAndAgain() {
    return Arrays.stream(worldSizes()).mapToObj(ranks -> DynamicContainer.dynamicContainer(ranks + " ranks",
        Stream.of(Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.ALL_GATHER, Collective.BROADCAST)
            .map(collective -> DynamicTest.dynamicTest(collective.label(), () -> {
              List<Case> cases = new ArrayList<>();
              for (DataType type : DataType.values()) {
                cases.addAll(CollectiveCorrectnessSuite.cases(collective, type, ranks));
              }
              List<List<String>> failures = clusterOf(ranks).call(comm -> launchCasesOnRank(comm, cases, COUNT,
                  launches(), this::accumulationRoundoff, expectsGraph(ranks)));
              for (List<String> f : failures) {
                assertEquals(List.of(), f.subList(0, Math.min(10, f.size())));
              }
            }))));
  }

  /**
   * Every case in {@code cases} on {@code comm}'s rank (every rank calls it with the same cases): a plan of
   * the one collective, captured, launched {@code launches} times on fresh inputs, each launch checked.
   *
   * @param comm this rank's communicator
   * @param cases the cases, each a plan of one call
   * @param count the per-rank element count
   * @param launches the launches of each case
   * @param roundoff the unit roundoff of the backend's floating-point reductions per type
   * @param expectsGraph what {@link CapturedPlan#isGraph()} must say
   * @return what was wrong (empty when right)
   */
  public static List<String> launchCasesOnRank(Communicator comm, List<Case> cases, long count, int launches,
      ToDoubleFunction<DataType> roundoff, boolean expectsGraph) {
    List<String> failures = new ArrayList<>();
    int rank = comm.rank();
    int n = comm.size();
    for (Case c : cases) {
      CasePlan p = CasePlan.build(comm, c, count);
      try (Plan plan = p.plan(); CapturedPlan captured = plan.capture(comm.stream())) {
        if (captured.isGraph() != expectsGraph) {
          failures.add(c + ": isGraph() is " + captured.isGraph());
        }
        for (int launch = 0; launch < launches; launch++) {
          long salt = launch + 1;
          long[][] inputs = new long[n][];
          for (int r = 0; r < n; r++) {
            inputs[r] = CollectiveCorrectnessSuite.randomInputs(c, count, r, salt);
          }
          Expected expected = CollectiveCorrectnessSuite.expected(c, count, inputs, roundoff.applyAsDouble(c.type()));
          p.write(inputs[rank], expected.poison(rank, c.type()));
          captured.launch();
          comm.stream().synchronize();
          String failure = CollectiveCorrectnessSuite.checkRank(c, count, expected, rank, p.result());
          if (failure != null) {
            failures.add("launch " + launch + " of the captured plan: " + failure);
            break;
          }
        }
      }
    }
    return failures;
  }

  /** One collective of the matrix as a plan of one call, with its buffers as the case needs them. */
  record CasePlan(Case c, long count, Plan plan, Buffer send, Buffer recv, Buffer inputSlice, Buffer resultSlice) {
    static CasePlan build(Communicator comm, Case c, long count) {
      int n = comm.size();
      int r = comm.rank();
      DataType type = c.type();
      long size = type.byteSize();
      PlanBuilder b = new PlanBuilder("captured." + c.collective().name(), comm, 0).fingerprintCheck(false);
      int send;
      int recv;
      switch (c.collective()) {
        case ALL_REDUCE, BROADCAST -> {
          send = b.buffer("x", type, count, "{\"n\"}", null);
          recv = c.inPlace() ? send : b.buffer("y", type, count, "{\"n\"}", null);
        }
        case ALL_GATHER -> {
          recv = b.buffer("all", type, n * count, "{\"ranks\", \"n\"}", null);
          send = c.inPlace() ? recv : b.buffer("part", type, count, "{\"n\"}", null);
        }
        case REDUCE_SCATTER -> {
          send = b.buffer("all", type, n * count, "{\"ranks\", \"n\"}", null);
          recv = c.inPlace() ? send : b.buffer("part", type, count, "{\"n\"}", null);
        }
        default -> throw new AssertionError(c);
      }
      switch (c.collective()) {
        case ALL_REDUCE -> b.allReduce(0, send, recv, c.op());
        case BROADCAST -> b.broadcast(0, send, recv, c.root());
        case ALL_GATHER -> b.allGather(0, send, recv);
        case REDUCE_SCATTER -> b.reduceScatter(0, send, recv, c.op());
        default -> throw new AssertionError(c);
      }
      Plan plan = b.build();
      Buffer s = plan.buffer(send);
      Buffer v = plan.buffer(recv);
      Buffer inputSlice = c.inPlace() && c.collective() == Collective.ALL_GATHER
          ? Buffer.view(type, v.memory(), v.byteOffset() + r * count * size, count) : s;
      Buffer resultSlice = c.inPlace() && c.collective() == Collective.REDUCE_SCATTER
          ? Buffer.view(type, s.memory(), s.byteOffset() + r * count * size, count) : v;
      return new CasePlan(c, count, plan, s, v, inputSlice, resultSlice);
    }

    /** Writes this rank's input (and first poisons what the collective must overwrite), from the host. */
    void write(long[] input, long[] poison) {
      if (!c.inPlace() || c.collective() == Collective.ALL_GATHER) {
        TypedBits.write(recv, poison);
      }
      TypedBits.write(inputSlice, input);
    }

    long[] result() {
      return TypedBits.read(resultSlice);
    }
  }

  // ---------------------------------------------------------------- a multi-step plan, many launches

  /**
   * Step 0: two I32 all-reduces SUM (coalesced), an in-place I32 all-gather, a U8 reduce-scatter MAX;
   * step 1: a broadcast from the last rank of what step 0's first all-reduce wrote. Exact integers, so
   * each launch is checked bit for bit.
   */
  record Mixed(Plan plan, I32Buffer a, I32Buffer b, I32Buffer gathered, U8Buffer parts, U8Buffer slice,
      I32Buffer copy) implements AutoCloseable {
    static Mixed build(Communicator comm) {
      int n = comm.size();
      PlanBuilder b = new PlanBuilder("captured.Mixed", comm, 0);
      int a = b.buffer("a", DataType.I32, 5, "{\"5\"}", null);
      int bb = b.buffer("b", DataType.I32, 3, "{\"3\"}", null);
      int gathered = b.buffer("gathered", DataType.I32, 2L * n, "{\"ranks\", \"2\"}", null);
      int parts = b.buffer("parts", DataType.U8, 3L * n, "{\"ranks\", \"3\"}", null);
      int slice = b.buffer("slice", DataType.U8, 3, "{\"3\"}", null);
      int copy = b.buffer("copy", DataType.I32, 5, "{\"5\"}", null);
      b.allReduce(0, a, a, ReduceOp.SUM);
      b.allReduce(0, bb, bb, ReduceOp.SUM);
      b.allGather(0, gathered, gathered);
      b.reduceScatter(0, parts, slice, ReduceOp.MAX);
      b.broadcast(1, a, copy, n - 1);
      Plan plan = b.build();
      return new Mixed(plan, (I32Buffer) plan.buffer(a), (I32Buffer) plan.buffer(bb), (I32Buffer) plan.buffer(gathered),
          (U8Buffer) plan.buffer(parts), (U8Buffer) plan.buffer(slice), (I32Buffer) plan.buffer(copy));
    }

    /** Inputs of round {@code i} on rank {@code r} of {@code n}, written from the host. */
    void write(int i, int r, int n) {
      a.copyFrom(new int[] {i, r, i * r, 7, -i});
      b.copyFrom(new int[] {r + i, 1, -r});
      gathered.fill(-1);
      gathered.set(2L * r, 1000 * i + r);
      gathered.set(2L * r + 1, -1000 * i - r);
      for (int k = 0; k < 3 * n; k++) {
        parts.setUnsigned(k, (k * 37 + r * 101 + i * 13) % 256);
      }
      slice.fill((byte) 0);
      copy.fill(-7);
    }

    /** What is wrong with round {@code i}'s results on rank {@code r}, or null. */
    String check(int i, int r, int n) {
      int sumR = n * (n - 1) / 2;
      int[] wantA = {n * i, sumR, i * sumR, 7 * n, -i * n};
      List<String> wrong = new ArrayList<>();
      if (!Arrays.equals(a.toArray(), wantA)) {
        wrong.add("a " + Arrays.toString(a.toArray()) + " != " + Arrays.toString(wantA));
      }
      int[] wantB = {sumR + n * i, n, -sumR};
      if (!Arrays.equals(b.toArray(), wantB)) {
        wrong.add("b " + Arrays.toString(b.toArray()) + " != " + Arrays.toString(wantB));
      }
      if (!Arrays.equals(copy.toArray(), wantA)) {
        wrong.add("copy " + Arrays.toString(copy.toArray()) + " != " + Arrays.toString(wantA));
      }
      int[] wantG = new int[2 * n];
      for (int k = 0; k < n; k++) {
        wantG[2 * k] = 1000 * i + k;
        wantG[2 * k + 1] = -1000 * i - k;
      }
      if (!Arrays.equals(gathered.toArray(), wantG)) {
        wrong.add("gathered " + Arrays.toString(gathered.toArray()) + " != " + Arrays.toString(wantG));
      }
      for (int j = 0; j < 3; j++) {
        int max = 0;
        for (int k = 0; k < n; k++) {
          max = Math.max(max, ((r * 3 + j) * 37 + k * 101 + i * 13) % 256);
        }
        if (slice.getUnsigned(j) != max) {
          wrong.add("slice[" + j + "] = " + slice.getUnsigned(j) + ", expected " + max);
        }
      }
      return wrong.isEmpty() ? null : "round " + i + " on rank " + r + ": " + wrong;
    }

    @Override
    public void close() {
      plan.close();
    }
  }

  /**
   * The multi-step plan captured once and launched {@code launches} times on {@code comm}'s rank, fresh
   * inputs written from the host before each, each launch checked; every 10th round runs {@code execute}
   * instead, and every 10th + 5 the two steps with {@code executeStep}, so that the three ways
   * interleave.
   *
   * @param comm this rank's communicator
   * @param launches the rounds
   * @return null when right, else what is wrong
   */
  public static String launchMixedOnRank(Communicator comm, int launches) {
    int r = comm.rank();
    int n = comm.size();
    try (Mixed m = Mixed.build(comm); CapturedPlan captured = m.plan().capture(comm.stream())) {
      for (int i = 0; i < launches; i++) {
        m.write(i, r, n);
        if (i % 10 == 9) {
          m.plan().execute(comm.stream());
        } else if (i % 10 == 4) {
          m.plan().executeStep(0, comm.stream());
          m.plan().executeStep(1, comm.stream());
        } else {
          captured.launch();
        }
        comm.stream().synchronize();
        String wrong = m.check(i, r, n);
        if (wrong != null) {
          return wrong;
        }
      }
    }
    return null;
  }

  @Test
  void aMultiStepPlanLaunchedManyTimesWithHostWritesInBetween() {
    for (int ranks : worldSizes()) {
      List<String> results = clusterOf(ranks).call(comm -> {
        String wrong = launchMixedOnRank(comm, manyLaunches());
        return wrong == null ? "" : wrong;
      });
      for (String result : results) {
        assertEquals("", result);
      }
    }
  }

  // ---------------------------------------------------------------- lifecycle and misuse

  private static Plan allReducePlan(Communicator comm, F32Buffer bound) {
    PlanBuilder b = new PlanBuilder("captured.Small", comm, 0);
    int x = b.buffer("x", DataType.F32, 8, "{\"8\"}", bound);
    int y = b.buffer("y", DataType.F32, 8, "{\"8\"}", null);
    b.allReduce(0, x, y, ReduceOp.SUM);
    return b.build();
  }

  @Test
  void captureRunsNothingAndLaunchRunsThePlan() {
    clusterOf(smallestWorld()).run(comm -> {
      try (Plan plan = allReducePlan(comm, null); CapturedPlan captured = plan.capture(comm.stream())) {
        F32Buffer x = (F32Buffer) plan.buffer(0);
        F32Buffer y = (F32Buffer) plan.buffer(1);
        assertSame(comm.stream(), captured.stream());
        assertEquals(expectsGraph(comm.size()), captured.isGraph());
        assertFalse(captured.isClosed());
        x.fill(2f);
        y.fill(-1f);
        comm.stream().synchronize();
        assertEquals(-1f, y.get(0), "capture() must not run the plan");
        captured.launch();
        comm.stream().synchronize();
        assertEquals(2f * comm.size(), y.get(7));
        assertTrue(captured.toString().contains("captured.Small"), captured.toString());
      }
    });
  }

  @Test
  void launchAfterCloseThrowsAndCloseIsIdempotent() {
    clusterOf(smallestWorld()).run(comm -> {
      try (Plan plan = allReducePlan(comm, null)) {
        CapturedPlan captured = plan.capture(comm.stream());
        captured.close();
        captured.close();
        assertTrue(captured.isClosed());
        IllegalStateException e = assertThrows(IllegalStateException.class, captured::launch);
        assertTrue(e.getMessage().contains("captured.Small") && e.getMessage().contains("close() was called"),
            e.getMessage());
        plan.execute(comm.stream()); // the plan itself goes on working
        comm.stream().synchronize();
        try (CapturedPlan again = plan.capture(comm.stream())) {
          again.launch();
          comm.stream().synchronize();
        }
      }
    });
  }

  @Test
  void closingThePlanClosesItsCapturedPlans() {
    clusterOf(smallestWorld()).run(comm -> {
      Plan plan = allReducePlan(comm, null);
      CapturedPlan first = plan.capture(comm.stream());
      CapturedPlan second = plan.capture(comm.stream());
      assertNotSame(first, second);
      first.launch();
      second.launch();
      comm.stream().synchronize();
      plan.close();
      assertTrue(first.isClosed() && second.isClosed());
      IllegalStateException e = assertThrows(IllegalStateException.class, first::launch);
      assertTrue(e.getMessage().contains("its plan was closed"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> plan.capture(comm.stream()));
      second.close(); // after the plan: a no-op
    });
  }

  @Test
  void aFreedBoundBufferMakesLaunchThrowNamingTheField() {
    clusterOf(smallestWorld()).run(comm -> {
      F32Buffer x = F32Buffer.allocate(comm, 8);
      try (Plan plan = allReducePlan(comm, x); CapturedPlan captured = plan.capture(comm.stream())) {
        x.fill(1f);
        captured.launch();
        comm.stream().synchronize();
        x.close();
        IllegalStateException e = assertThrows(IllegalStateException.class, captured::launch);
        assertTrue(e.getMessage().contains("field 'x'") && e.getMessage().contains("closed"), e.getMessage());
        assertThrows(IllegalStateException.class, () -> plan.capture(comm.stream()));
      }
    });
  }

  @Test
  void captureAndLaunchOnAClosedCommunicatorThrow() {
    try (Cluster cluster = cluster(1)) {
      cluster.run(comm -> {
        Plan plan = allReducePlan(comm, null);
        CapturedPlan captured = plan.capture(comm.stream());
        captured.launch();
        comm.stream().synchronize();
        comm.close(); // destroys its graphs before the communicator (NCCL would wait for them forever)
        assertTrue(captured.isClosed());
        IllegalStateException launch = assertThrows(IllegalStateException.class, captured::launch);
        assertTrue(launch.getMessage().contains("closed"), launch.getMessage());
        IllegalStateException capture = assertThrows(IllegalStateException.class, () -> plan.capture(comm.stream()));
        assertTrue(capture.getMessage().contains("communicator") && capture.getMessage().contains("closed"),
            capture.getMessage());
        captured.close();
        plan.close();
      });
    }
  }

  @Test
  void theHostAccessGuardWorksAcrossLaunches() {
    clusterOf(smallestWorld()).run(comm -> {
      try (Plan plan = allReducePlan(comm, null); CapturedPlan captured = plan.capture(comm.stream())) {
        F32Buffer x = (F32Buffer) plan.buffer(0);
        F32Buffer y = (F32Buffer) plan.buffer(1);
        for (int i = 0; i < 5; i++) {
          x.fill(i);
          captured.launch();
          BufferInFlightException read = assertThrows(BufferInFlightException.class, () -> y.get(0));
          assertTrue(read.getMessage().contains("field 'y'"), read.getMessage());
          assertThrows(BufferInFlightException.class, () -> x.set(0, 1f)); // the send side is read in flight
          comm.stream().synchronize();
          assertEquals((float) i * comm.size(), y.get(3));
        }
      }
    });
  }

  @Test
  void anotherCommunicatorsStreamIsRefused() {
    int ranks = Arrays.stream(worldSizes()).filter(r -> r >= 2).findFirst().orElse(0);
    if (ranks == 0) {
      return; // needs two ranks (two GPUs on NCCL)
    }
    List<dev.commplan.runtime.Stream> streams = new ArrayList<>();
    clusterOf(ranks).run(comm -> {
      synchronized (streams) {
        streams.add(comm.stream());
      }
    });
    clusterOf(ranks).run(comm -> {
      dev.commplan.runtime.Stream other = streams.stream().filter(s -> s.communicator() != comm).findFirst().orElseThrow();
      try (Plan plan = allReducePlan(comm, null)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> plan.capture(other));
        assertTrue(e.getMessage().contains("rank " + comm.rank()), e.getMessage());
      }
    });
  }
}
