package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.spi.FlightRecorder;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The NCCL failure model on a real GPU (issue 5): error codes that leave the communicator usable and
 * fatal ones that abort it, use after abort, the flight record, the synchronize() timeout on one GPU
 * (more work than the timeout allows), and a rank that never arrives (two ranks).
 *
 * <p>With live peers in a mesh ({@code -Dcommplan.gpu.ranks=4} for a 2×2, {@code 8} for a 2×2×2; on one GPU
 * with NCCL 2.30 and the opt-in): world rank 1 fails inside its {@code tp} group, by throwing, by stalling
 * (an interruptible sleep far past the timeout), by exiting (in one JVM: its task returns early, leaving its
 * communicators to the cluster) or by aborting its {@code tp} communicator; every rank of every group ends
 * within its timeout (plus the cluster's grace periods), with an exception that names its rank (and its group,
 * where it is a split's), the cluster refuses more work, and nothing hangs. Skipped without a GPU.
 */
@NcclGpuTest
class NcclFailureGpuTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);

  @Test
  void invalidArgumentKeepsTheCommunicatorUsable() {
    NcclCommunicator nc = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    try (F32Buffer b = F32Buffer.allocate(nc, 16)) {
      long p = NcclInterop.devicePointer(b);
      // An invalid ncclDataType_t reaches NCCL only through the raw layer: the API cannot express it.
      int rc = NcclCollectives.ncclAllReduce(p, p, 16, 99, 0, nc.handle(), NcclInterop.cudaStream(nc.stream()));
      assertEquals(NcclResult.INVALID_ARGUMENT.code(), rc);
      NcclException e = assertInstanceOf(NcclException.class, nc.failed("ncclAllReduce", rc));
      assertEquals(NcclResult.INVALID_ARGUMENT, e.result());
      assertFalse(nc.isAborted(), "ncclInvalidArgument must not abort the communicator");
      float[] data = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
      b.copyFrom(data);
      nc.allReduce(b, b, ReduceOp.SUM, nc.stream());
      nc.stream().synchronize();
      assertArrayEquals(data, b.toArray(), "the communicator still works after ncclInvalidArgument");
    } finally {
      nc.close();
    }
  }

  @Test
  void aFatalCodeAbortsAndLaterUseSaysWhy() {
    NcclCommunicator nc = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    try {
      F32Buffer b = F32Buffer.allocate(nc, 16);
      RuntimeException e = nc.failed("ncclAllReduce", NcclResult.INTERNAL_ERROR.code());
      assertInstanceOf(NcclException.class, e);
      assertTrue(Arrays.stream(e.getSuppressed()).anyMatch(s -> s.getMessage().contains("aborted (ncclCommAbort)")),
          () -> Arrays.toString(e.getSuppressed()));
      assertTrue(nc.isAborted());
      assertTrue(b.isClosed(), "abort frees the communicator's memory");
      IllegalStateException later = assertThrows(IllegalStateException.class, () -> nc.allocate(4));
      assertTrue(later.getMessage().contains("ncclInternalError") && later.getMessage().contains("make a new"),
          later.getMessage());
    } finally {
      nc.close();
    }
  }

  @Test
  void abortThenUseIsAClearException() {
    NcclCommunicator nc = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    try {
      F32Buffer b = F32Buffer.allocate(nc, 16);
      nc.abort();
      IllegalStateException e = assertThrows(IllegalStateException.class,
          () -> nc.allReduce(b, b, ReduceOp.SUM, nc.stream()));
      assertTrue(e.getMessage().contains("was aborted"), e.getMessage());
      assertThrows(IllegalStateException.class, () -> nc.stream().synchronize());
    } finally {
      nc.close();
    }
  }

  @Test
  void theFlightRecordNamesEveryStepAndFinishesOnSynchronize() {
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.timeout(Duration.ofSeconds(30))
        .withAgreementCheck(false))) { // exact entries: none of the agreement check's calls
      cluster.run(c -> {
        try (Plan plan = twoSteps(c, "test.Record", 1024)) {
          for (int i = 0; i < 5; i++) {
            plan.execute(c.stream());
          }
          c.stream().synchronize();
        }
        FlightRecorder recorder = ((NcclCommunicator) c).flightRecorder();
        List<FlightRecorder.Entry> entries = recorder.snapshot();
        assertEquals(10, entries.size());
        assertTrue(entries.stream().allMatch(e -> e.state() == FlightRecorder.State.FINISHED), recorder.format());
        assertEquals("test.Record", entries.getLast().label().planName());
        assertEquals(1, entries.getLast().label().step());
        assertEquals(List.of("y"), entries.getLast().label().fields());
        System.err.println("[commplan] " + recorder.format());
      });
    }
  }

  /**
   * With per-step CUDA events on ({@value NcclCommunicator#STEP_EVENTS_PROPERTY}), plan steps and a
   * user's group of direct calls each record their event, the results are right, and a synchronize
   * marks every recorded operation finished. (Off is the default, which the other tests cover.)
   */
  @Test
  void withStepEventsOnPlansAndUserGroupsRecordTheirEvents() {
    String previous = System.setProperty(NcclCommunicator.STEP_EVENTS_PROPERTY, "true");
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.timeout(Duration.ofSeconds(30))
        .withAgreementCheck(false))) { // exact entries: none of the agreement check's calls
      cluster.run(c -> {
        float[] data = new float[1024];
        java.util.Random random = new java.util.Random(7);
        for (int i = 0; i < data.length; i++) {
          data[i] = random.nextFloat() - 0.5f;
        }
        try (Plan plan = twoSteps(c, "test.Events", 1024);
            F32Buffer a = F32Buffer.allocate(c, 1024);
            F32Buffer b = F32Buffer.allocate(c, 1024)) {
          a.copyFrom(data);
          for (int i = 0; i < 3; i++) {
            plan.execute(c.stream());
            c.groupStart();
            c.allReduce(a, b, ReduceOp.SUM, c.stream());
            c.groupEnd();
          }
          c.stream().synchronize();
          assertArrayEquals(data, b.toArray());
        }
        FlightRecorder recorder = ((NcclCommunicator) c).flightRecorder();
        List<FlightRecorder.Entry> entries = recorder.snapshot();
        assertEquals(9, entries.size(), recorder.format());
        assertTrue(entries.stream().allMatch(e -> e.state() == FlightRecorder.State.FINISHED), recorder.format());
      });
    } finally {
      if (previous == null) {
        System.clearProperty(NcclCommunicator.STEP_EVENTS_PROPERTY);
      } else {
        System.setProperty(NcclCommunicator.STEP_EVENTS_PROPERTY, previous);
      }
    }
  }

  @Test
  void synchronizeTimesOutOnOneGpuNamingThePendingStepAndAborts() {
    GpuModel.assumeRealGpu("a GPU's copy bandwidth (1,000 queued 1 GiB device copies outlast the 100 ms timeout)");
    Duration t = Duration.ofMillis(100);
    AtomicReference<CommTimeoutException> seen = new AtomicReference<>();
    AtomicLong detected = new AtomicLong();
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.timeout(t))) {
      assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class, () -> cluster.run(c -> {
        // Out of place (a 1-rank in-place all-reduce copies nothing), 1 GiB per buffer: each step is a
        // 1 GiB device copy (~0.5 ms); the ~1,000 the launch queue holds when synchronize starts outlast 100 ms.
        Plan plan = slowPlan(c, 256L << 20);
        for (int i = 0; i < 1000; i++) {
          plan.execute(c.stream());
        }
        long start = System.nanoTime();
        try {
          c.stream().synchronize();
        } catch (CommTimeoutException e) {
          detected.set(System.nanoTime() - start);
          seen.set(e);
          throw e;
        }
      })));
      CommTimeoutException e = seen.get();
      assertTrue(e != null, "synchronize should have timed out");
      System.err.println("[commplan] NCCL timeout after " + detected.get() / 1e6 + " ms:\n" + e.getMessage());
      assertEquals("test.Slow", e.planName());
      assertTrue(e.step() == 0 || e.step() == 1, e.summary());
      assertTrue(e.getMessage().contains("flight record of rank 0"), e.getMessage());
      assertTrue(detected.get() >= t.toNanos() && detected.get() < t.toNanos() + 1_000_000_000L,
          detected.get() / 1e6 + " ms");
      assertTrue(((NcclCluster) cluster).communicator(0).isAborted());
      IllegalStateException refused = assertThrows(IllegalStateException.class, () -> cluster.run(c -> {}));
      assertTrue(refused.getMessage().contains("aborted"), refused.getMessage());
    }
  }

  @Test
  void aRankThatNeverArrivesTimesOutTheOthersWithTwoRanks() {
    assumeTrue(NcclBackend.unavailableReason(2) == null, "needs 2 ranks: " + NcclBackend.unavailableReason(2));
    Duration t = Duration.ofSeconds(2);
    AtomicReference<Throwable> rank0 = new AtomicReference<>();
    long start = System.nanoTime();
    try (Cluster cluster = NcclBackend.cluster(2, CommOptions.timeout(t))) {
      assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class, () -> cluster.run(c -> {
        try (Plan plan = twoSteps(c, "test.Missing", 1024)) {
          plan.execute(c.stream());
          c.stream().synchronize(); // both ranks: healthy
          if (c.rank() == 1) {
            return; // never issues the second execute
          }
          plan.execute(c.stream());
          c.stream().synchronize();
        } catch (RuntimeException e) {
          rank0.set(e);
          throw e;
        }
      })));
    }
    long took = System.nanoTime() - start;
    CommTimeoutException e = assertInstanceOf(CommTimeoutException.class, rank0.get());
    System.err.println("[commplan] 2-GPU timeout, whole run " + took / 1e6 + " ms:\n" + e.getMessage());
    assertEquals("test.Missing", e.planName());
    assertEquals(0, e.rank());
    assertTrue(took < t.toNanos() + 20_000_000_000L, took / 1e6 + " ms");
  }

  /** How world rank 1 fails inside its {@code tp} group. */
  enum Failure { THROWS, STALLS, EXITS, ABORTS }

  private static final int CULPRIT = 1;

  static Stream<Arguments> meshFailures() {
    return GpuRanks.requested().stream() // every size, so that one without a mesh here shows as skipped, saying why
        .flatMap(n -> Arrays.stream(Failure.values()).map(f -> Arguments.of(n, f)));
  }

  @ParameterizedTest(name = "{1} inside axis tp, {0} ranks")
  @MethodSource("meshFailures")
  void aRankFailingInsideOneGroupOfAMeshEndsEveryRankOfEveryGroupWithinItsTimeout(int ranks, Failure how) {
    assumeTrue(ranks == 4 || ranks == 8, () -> "the meshes here are 2x2 (4 ranks) and 2x2x2 (8), not " + ranks + " ranks");
    GpuRanks.assumeRunnable(ranks);
    Duration t = Duration.ofSeconds(3);
    Duration limit = t.plusMillis(2 * NcclCluster.GRACE_MILLIS).plusSeconds(60); // set-up and close included
    Map<Integer, Throwable> ended = new ConcurrentHashMap<>();
    Set<Integer> returned = ConcurrentHashMap.newKeySet();
    AtomicReference<CommPlanException> run = new AtomicReference<>();
    AtomicReference<String> refused = new AtomicReference<>();
    long start = System.nanoTime();
    assertTimeoutPreemptively(limit, () -> {
      try (Cluster cluster = NcclBackend.cluster(ranks, CommOptions.timeout(t))) {
        run.set(assertThrows(CommPlanException.class, () -> cluster.run(world -> {
          try {
            if (failInMesh(world, how)) {
              returned.add(world.rank());
            }
          } catch (RuntimeException | Error e) {
            ended.put(world.rank(), e);
            throw e;
          }
        })));
        refused.set(assertThrows(IllegalStateException.class, () -> cluster.run(c -> {})).getMessage());
      }
    }, () -> how + " on " + ranks + " ranks: not every rank ended within " + limit + "; ended so far: " + ended);
    double seconds = (System.nanoTime() - start) / 1e9;
    String outcomes = ended.entrySet().stream().sorted(Map.Entry.comparingByKey())
        .map(e -> "rank " + e.getKey() + ": " + e.getValue()).collect(Collectors.joining("\n  "));
    System.out.println("[commplan] " + how + " inside axis tp on " + ranks + " ranks: every rank ended in " + seconds
        + " s\n  " + outcomes);
    assertEquals(ranks, ended.size() + returned.size(), () -> "every rank ends: " + outcomes + ", returned " + returned);
    assertEquals(how == Failure.EXITS ? Set.of(CULPRIT) : Set.of(), returned);
    for (Map.Entry<Integer, Throwable> e : ended.entrySet()) {
      if (e.getKey() == CULPRIT) { // its own failure: what it threw, the interrupt that ended its stall, or its use after abort
        assertTrue(how != Failure.ABORTS || e.getValue().getMessage().contains("aborted"), e.getValue().toString());
        continue;
      }
      assertInstanceOf(CommPlanException.class, e.getValue(), "rank " + e.getKey() + ": " + e.getValue());
      assertTrue(e.getValue().getMessage().matches("(?s).*rank \\d+.*"), "names a rank: " + e.getValue().getMessage());
    }
    assertTrue(ended.values().stream().anyMatch(e -> String.valueOf(e.getMessage()).contains("of axis tp of mesh")),
        () -> "some rank names the group that failed (axis tp): " + outcomes);
    assertTrue(refused.get().contains("aborted") || refused.get().contains("failed"), refused.get());
  }

  /**
   * Rank {@link #CULPRIT}'s task fails as {@code how} says in its third round; every rank's round is an
   * all-reduce over tp, one over dp and one over the world, each waited for. True when the task returned
   * without failing (the culprit that exits; nobody else gets that far).
   */
  private static boolean failInMesh(Communicator world, Failure how) {
    Mesh.Builder b = Mesh.builder(world);
    if (world.size() == 8) {
      b.axis("pp", 2);
    }
    Mesh mesh = b.axis("dp", 2).axis("tp", 2).build(); // left to the cluster on failure: it aborts them all
    Communicator tp = mesh.axis("tp");
    Communicator dp = mesh.axis("dp");
    F32Buffer x = F32Buffer.allocate(world, 64);
    for (int round = 0; round < 4; round++) {
      if (world.rank() == CULPRIT && round == 2) {
        switch (how) {
          case THROWS -> throw new IllegalStateException("rank " + CULPRIT + " fails on purpose inside axis tp");
          case STALLS -> {
            try {
              Thread.sleep(Duration.ofMinutes(10)); // until the cluster, aborting after the others' timeouts, interrupts
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
              throw new IllegalStateException("rank " + CULPRIT + " stalled until interrupted", e);
            }
          }
          case EXITS -> {
            return true; // its communicators stay as they are: the cluster aborts them with the others
          }
          case ABORTS -> ((NcclCommunicator) tp).abort(); // with live peers; its family (world, dp) goes too
        }
      }
      tp.allReduce(x, x, ReduceOp.SUM, tp.stream());
      tp.stream().synchronize();
      dp.allReduce(x, x, ReduceOp.SUM, dp.stream());
      dp.stream().synchronize();
      world.allReduce(x, x, ReduceOp.SUM, world.stream());
      world.stream().synchronize();
    }
    throw new AssertionError("rank " + world.rank() + " finished every round, though rank " + CULPRIT + " failed");
  }

  /** test.Slow: step 0 all-reduces x into xr, step 1 y into yr, out of place, {@code n} floats each. */
  private static Plan slowPlan(Communicator c, long n) {
    PlanBuilder b = new PlanBuilder("test.Slow", c, 0);
    String shape = "{\"" + n + "\"}";
    int x = b.buffer("x", DataType.F32, n, shape, null);
    int xr = b.buffer("xr", DataType.F32, n, shape, null);
    int y = b.buffer("y", DataType.F32, n, shape, null);
    int yr = b.buffer("yr", DataType.F32, n, shape, null);
    b.allReduce(0, x, xr, ReduceOp.SUM);
    b.allReduce(1, y, yr, ReduceOp.MAX);
    return b.build();
  }

  /** Step 0 all-reduces x (SUM), step 1 all-reduces y (MAX), {@code n} floats each, random data. */
  private static Plan twoSteps(Communicator c, String name, long n) {
    PlanBuilder b = new PlanBuilder(name, c, 0);
    String shape = "{\"" + n + "\"}";
    int x = b.buffer("x", DataType.F32, n, shape, null);
    int y = b.buffer("y", DataType.F32, n, shape, null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allReduce(1, y, y, ReduceOp.MAX);
    Plan plan = b.build();
    ((F32Buffer) plan.buffer(x)).fill(c.rank() + 0.5f);
    ((F32Buffer) plan.buffer(y)).fill(-c.rank());
    return plan;
  }
}
