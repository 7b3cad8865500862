package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.conformance.CollectiveReference;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.conformance.MeshSuite;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.runtime.nccl.calls.SendRecvStandIns;
import dev.commplan.runtime.nccl.rank.CloseTimeline;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Splits, meshes and plans over axes on NCCL (issue 23), on the one GPU of the test machine, so on
 * meshes of one rank (1×1 and 1×1×1): {@code ncclCommSplit} of a 1-rank communicator works on NCCL 2.28.3
 * and collectives run on the new one. What a rank of one can show: the split's own stream, device, label
 * and memory sharing; every collective and point-to-point pattern over each axis against the reference
 * ({@link MeshSuite}, on both Gather/Scatter/AllToAll paths); a plan over axes (its steps mixing calls on
 * the world and its axes in one NCCL group) executed and captured into a CUDA graph, the graph destroyed
 * before an axis it captured is closed; one family failing together after an abort, a fatal code and a
 * timeout in one of its communicators, every other one saying which group failed and why; split refused
 * on a closed parent. With two ranks, a rank that never splits times the others out.
 *
 * <p>Between real peers, at each world size of {@link GpuRanks} of 2 or more ({@code -Dcommplan.gpu.ranks};
 * several ranks on one GPU with NCCL 2.30 and the opt-in): 1×2 and 2×1 on 2 ranks, 2×2 on 4, 2×4, 4×2 and
 * 2×2×2 on 8, each group made by {@code ncclCommSplit}, every collective and point-to-point pattern over each
 * axis (and each pair of axes of the 2×2×2) against the reference on both Gather/Scatter/AllToAll paths, and
 * the plan over the axes executed and captured, launched again after host writes. Skipped without a GPU.
 */
@NcclGpuTest
class NcclMeshGpuTest {
  private static final Duration GENEROUS = Duration.ofSeconds(120);
  private static final int H = 5;

  @AfterEach
  void bothPathsBackToTheDefault() {
    SendRecvStandIns.viaSendRecv(Boolean.getBoolean(SendRecvStandIns.VIA_SEND_RECV_PROPERTY));
  }

  // ---------------------------------------------------------------- correctness

  @Test
  void everyCollectiveAndTransferOverEachAxisOfOneByOneAndOneByOneByOneMeshes() {
    List<MeshSuite.Shape> shapes = List.of(new MeshSuite.Shape(List.of("dp", "tp"), new int[] {1, 1}),
        new MeshSuite.Shape(List.of("pp", "dp", "tp"), new int[] {1, 1, 1}));
    List<String> failures = new ArrayList<>();
    try (Cluster cluster = NcclBackend.cluster(1)) {
      for (boolean viaSendRecv : new boolean[] {false, true}) {
        SendRecvStandIns.viaSendRecv(viaSendRecv); // Gather, Scatter, AllToAll on their functions, then as sends/receives
        for (MeshSuite.Shape shape : shapes) {
          assertTimeoutPreemptively(GENEROUS, () -> cluster.call(world -> MeshSuite.runOnRank(world, shape)))
              .forEach(f -> f.forEach(line -> failures.add((viaSendRecv ? "send/recv path: " : "") + line)));
        }
      }
    }
    assertEquals(List.of(), failures);
  }

  static Stream<Integer> ranks() {
    return GpuRanks.requested().stream();
  }

  /** The meshes of {@code ranks} real peers: 1×2 and 2×1 on 2, else {@link MeshSuite#meshes} (2×2; 2×4, 4×2, 2×2×2). */
  static List<MeshSuite.Shape> meshesOf(int ranks) {
    if (ranks == 2) {
      return List.of(new MeshSuite.Shape(List.of("dp", "tp"), new int[] {1, 2}),
          new MeshSuite.Shape(List.of("dp", "tp"), new int[] {2, 1}));
    }
    return MeshSuite.meshes(ranks);
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void everyCollectiveAndTransferOverEachAxisBetweenRealPeersAndThePlanOverTheAxes(int ranks) {
    GpuRanks.assumeRunnable(ranks);
    List<MeshSuite.Shape> shapes = meshesOf(ranks);
    assumeTrue(!shapes.isEmpty(), "no mesh of real peers has " + ranks + " ranks");
    List<String> failures = new ArrayList<>();
    try (Cluster cluster = NcclBackend.cluster(ranks, CommOptions.timeout(GENEROUS))) {
      System.out.println("[commplan] " + cluster);
      for (boolean viaSendRecv : new boolean[] {false, true}) {
        SendRecvStandIns.viaSendRecv(viaSendRecv); // between runs: no rank is enqueuing
        for (MeshSuite.Shape shape : shapes) {
          String path = viaSendRecv ? "send/recv path: " : "";
          assertTimeoutPreemptively(GENEROUS.multipliedBy(2), () -> cluster.call(world -> {
            List<String> wrong = new ArrayList<>(MeshSuite.runOnRank(world, shape, CollectiveReference::typeAccumulation));
            try (Mesh mesh = meshOf(world, shape)) {
              String captured = MeshSuite.planOverAxes(mesh, 3);
              if (!captured.isEmpty()) {
                wrong.add("mesh " + shape + ", captured plan over its axes, world rank " + world.rank() + ": " + captured);
              }
            }
            return wrong;
          })).forEach(f -> f.forEach(line -> failures.add(path + line)));
        }
      }
    }
    assertEquals(List.of(), failures);
  }

  private static Mesh meshOf(Communicator world, MeshSuite.Shape shape) {
    Mesh.Builder b = Mesh.builder(world);
    for (int i = 0; i < shape.names().size(); i++) {
      b.axis(shape.names().get(i), shape.sizes()[i]);
    }
    return b.build();
  }

  @Test
  void aSplitHasItsOwnStreamOnTheSameDeviceSharesItsFamilysMemoryAndClosesWithItsParent() {
    List<Communicator> kept = new ArrayList<>();
    try (Cluster cluster = NcclBackend.cluster(1)) {
      cluster.run(world -> {
        NcclCommunicator w = (NcclCommunicator) world;
        float[] values = {1, 2, 3, 4, 5, 6, 7, 8};
        try (Communicator half = world.split(0, 0)) {
          NcclCommunicator h = (NcclCommunicator) half;
          assertEquals("split(color 0) of world", half.groupLabel());
          assertEquals("world", world.groupLabel());
          assertEquals(0, half.rank());
          assertEquals(1, half.size());
          assertEquals(w.device(), h.device());
          assertNotSame(world.stream(), half.stream());
          assertNotEquals(NcclInterop.cudaStream(world.stream()), NcclInterop.cudaStream(half.stream()));
          assertTrue(half.toString().contains("split(color 0) of world"), half.toString());
          assertTrue(h.sharesMemoryWith(world) && w.sharesMemoryWith(half), "one family, one device");
          try (F32Buffer a = F32Buffer.allocate(world, 8); F32Buffer b = F32Buffer.allocate(half, 8)) {
            a.copyFrom(values);
            half.allReduce(a, b, ReduceOp.SUM, half.stream()); // the world's memory on the split
            half.stream().synchronize();
            assertArrayEquals(values, b.toArray());
            a.fill(0f);
            world.broadcast(b, a, 0, world.stream()); // the split's memory on the world
            world.stream().synchronize();
            assertArrayEquals(values, a.toArray());
          }
        }
        Communicator child = world.split(3, 0, "kept");
        Communicator grandchild = child.split(0, 0);
        assertEquals("split(color 0) of kept", grandchild.groupLabel());
        kept.add(child);
        kept.add(grandchild);
      });
    }
    for (Communicator c : kept) {
      assertTrue(c.isClosed(), c + " is still open after its parent (the cluster's world) closed");
    }
  }

  // ---------------------------------------------------------------- plans over axes

  /**
   * gpu.MeshPlan on a mesh with axes dp and tp: step 0 all-reduces {@code a} over dp (in place), all-gathers
   * {@code b} over tp into {@code bAll}, and passes {@code r} around a ring over tp into {@code rIn};
   * step 1 broadcasts {@code a} over the world, reduce-scatters {@code c} over dp into {@code cOut} and
   * gathers {@code g} over tp into {@code gAll} (as sends and receives when {@link SendRecvStandIns#viaSendRecv}).
   * Handles in that order: a, b, bAll, r, rIn, c, cOut, g, gAll.
   */
  private static Plan meshPlan(Mesh mesh) {
    PlanBuilder b = new PlanBuilder("gpu.MeshPlan", mesh, 0, "dp", "tp");
    int a = b.buffer("a", DataType.F32, H, "{\"h\"}", null);
    int bIn = b.buffer("b", DataType.F32, H, "{\"h\"}", null);
    int bAll = b.buffer("bAll", DataType.F32, b.axisSize("tp") * H, "{\"tp\", \"h\"}", null);
    int r = b.buffer("r", DataType.F32, H, "{\"h\"}", null);
    int rIn = b.buffer("rIn", DataType.F32, H, "{\"h\"}", null);
    int c = b.buffer("c", DataType.F32, b.axisSize("dp") * H, "{\"dp\", \"h\"}", null);
    int cOut = b.buffer("cOut", DataType.F32, H, "{\"h\"}", null);
    int g = b.buffer("g", DataType.F32, H, "{\"h\"}", null);
    int gAll = b.buffer("gAll", DataType.F32, b.axisSize("tp") * H, "{\"tp\", \"h\"}", null);
    b.collective(0, Collective.ALL_REDUCE, a, a, ReduceOp.SUM, -1, "dp");
    b.collective(0, Collective.ALL_GATHER, bIn, bAll, null, -1, "tp");
    b.send(0, r, "(rank + 1) % ranks", "tp");
    b.recv(0, rIn, "(rank - 1) % ranks", "tp");
    b.collective(1, Collective.BROADCAST, a, a, null, 0, "");
    b.collective(1, Collective.REDUCE_SCATTER, c, cOut, ReduceOp.SUM, -1, "dp");
    b.collective(1, Collective.GATHER, g, gAll, null, 0, "tp");
    return b.build();
  }

  /** Round {@code round}'s values of field {@code field}: small whole numbers, exact in F32. */
  private static float[] values(int round, int field, int length) {
    float[] v = new float[length];
    for (int i = 0; i < length; i++) {
      v[i] = (round * 11 + field * 13 + i * 3) % 17;
    }
    return v;
  }

  /** Fills the inputs for {@code round}; after a run, on one rank, every output is its input. */
  private static void fill(Plan plan, int round) {
    for (int field : new int[] {0, 1, 3, 5, 7}) {
      ((F32Buffer) plan.buffer(field)).copyFrom(values(round, field, (int) plan.buffer(field).length()));
    }
  }

  private static void check(Plan plan, int round, String how) {
    int[][] outputOf = {{0, 0}, {2, 1}, {4, 3}, {6, 5}, {8, 7}};
    for (int[] pair : outputOf) {
      assertArrayEquals(values(round, pair[1], H), ((F32Buffer) plan.buffer(pair[0])).toArray(),
          how + ", round " + round + ": field #" + pair[0]);
    }
  }

  @Test
  void aPlanOverAxesRunsAndIsCapturedOnBothPathsAndItsGraphGoesBeforeTheAxes() {
    try (Cluster cluster = NcclBackend.cluster(1)) {
      for (boolean viaSendRecv : new boolean[] {false, true}) {
        SendRecvStandIns.viaSendRecv(viaSendRecv);
        cluster.run(world -> {
          Mesh mesh = Mesh.builder(world).axis("dp", 1).axis("tp", 1).build();
          Plan plan = meshPlan(mesh);
          String described = plan.describe();
          for (String part : List.of("groups: dp (1 rank, this rank 0 there), tp (1 rank, this rank 0 there)",
              "all-reduce over dp F32 SUM", "all-gather over tp F32", "send over tp F32 to rank 0",
              "reduce-scatter over dp F32 SUM", "gather over tp F32 root 0, count 5 ("
                  + (viaSendRecv || !NcclCollectives.hasGather()
                      ? "grouped ncclSend/ncclRecv" : "ncclGather") + ")")) {
            assertTrue(described.contains(part), () -> "'" + part + "' missing from: " + described);
          }
          fill(plan, 0);
          plan.execute(world.stream());
          world.stream().synchronize();
          check(plan, 0, "executed");
          CapturedPlan captured = plan.capture(world.stream());
          for (int round = 1; round <= 3; round++) {
            fill(plan, round);
            captured.launch();
            world.stream().synchronize();
            check(plan, round, "launched");
          }
          // Closing the axes first: NCCL waits in their ncclCommDestroy for graphs that captured them, so the
          // graph must go first (it is registered with each axis), or this hangs.
          assertTimeoutPreemptively(GENEROUS, mesh::close);
          IllegalStateException launch = assertThrows(IllegalStateException.class, captured::launch);
          assertTrue(launch.getMessage().contains("of axis") && launch.getMessage().contains("closed"),
              launch.getMessage());
          IllegalStateException execute = assertThrows(IllegalStateException.class, () -> plan.execute(world.stream()));
          assertTrue(execute.getMessage().contains("gpu.MeshPlan") && execute.getMessage().contains("of axis"),
              execute.getMessage());
          plan.close();
        });
      }
    }
  }

  // ---------------------------------------------------------------- one family fails together

  @Test
  void abortingOneAxisEndsTheWorldAndTheOtherAxisNamingTheGroup() {
    try (Cluster cluster = NcclBackend.cluster(1)) {
      cluster.run(world -> {
        Mesh mesh = Mesh.builder(world).axis("dp", 1).axis("tp", 1).build();
        PlanBuilder b = new PlanBuilder("gpu.Family", world, 0);
        int xh = b.buffer("x", DataType.F32, 8, "{\"8\"}", null);
        b.allReduce(0, xh, xh, ReduceOp.SUM);
        Plan plan = b.build();
        F32Buffer x = (F32Buffer) plan.buffer(xh);
        NcclCommunicator tp = (NcclCommunicator) mesh.axis("tp");
        Communicator dp = mesh.axis("dp");
        tp.allReduce(x, x, ReduceOp.SUM, tp.stream());
        tp.stream().synchronize(); // healthy before
        assertTimeoutPreemptively(GENEROUS, tp::abort);

        String tpGroup = "rank 0 of axis tp of mesh [dp=1, tp=1] (device ";
        RankAbortedException onWorld = assertThrows(RankAbortedException.class,
            () -> world.allReduce(x, x, ReduceOp.SUM, world.stream()));
        assertMentions(onWorld.getMessage(), "rank 0 of world", "its family failed", tpGroup, "by abort()");
        assertThrows(RankAbortedException.class, () -> world.stream().synchronize());
        RankAbortedException onDp = assertThrows(RankAbortedException.class,
            () -> dp.allReduce(x, x, ReduceOp.SUM, dp.stream()));
        assertMentions(onDp.getMessage(), "rank 0 of axis dp of mesh [dp=1, tp=1]", tpGroup);
        assertThrows(RankAbortedException.class, () -> dp.stream().synchronize());
        IllegalStateException onPlan = assertThrows(IllegalStateException.class, () -> plan.execute(world.stream()));
        assertMentions(onPlan.getMessage(), "plan gpu.Family", "cannot run it", "its family failed", tpGroup);
        IllegalStateException onTp = assertThrows(IllegalStateException.class,
            () -> tp.allReduce(x, x, ReduceOp.SUM, tp.stream()));
        assertMentions(onTp.getMessage(), "axis tp of mesh [dp=1, tp=1]", "was aborted (ncclCommAbort) by abort()");
        assertTrue(((NcclCommunicator) world).isAborted() && world.isClosed() && dp.isClosed());
        assertThrows(RankAbortedException.class, () -> world.split(0, 0), "no split of a failed family");
        plan.close();
        mesh.close();
      });
    }
  }

  @Test
  void aFatalCodeInASplitEndsItsParent() {
    NcclCommunicator world = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    try {
      NcclCommunicator child = (NcclCommunicator) world.split(1, 0, "child");
      RuntimeException e = child.failed("ncclAllReduce", NcclResult.INTERNAL_ERROR.code());
      assertInstanceOf(NcclException.class, e);
      assertTrue(child.isAborted() && world.isAborted());
      RankAbortedException later = assertThrows(RankAbortedException.class, () -> world.allocate(4));
      assertMentions(later.getMessage(), "rank 0 of world", "rank 0 of child", "ncclInternalError", "family failed");
    } finally {
      world.close();
    }
  }

  @Test
  void aTimeoutInASplitsSynchronizeEndsTheFamily() {
    GpuModel.assumeRealGpu("a GPU's copy bandwidth (1,000 queued 4 GiB device copies outlast the 1 s timeout)");
    // 1 s, not less: the split itself must finish inside it (NCCL 2.30's ncclCommSplit took over 100 ms on an H100)
    Duration t = Duration.ofSeconds(1);
    AtomicReference<String> world = new AtomicReference<>();
    AtomicReference<CommTimeoutException> timeout = new AtomicReference<>();
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.timeout(t))) {
      cluster.run(c -> {
        Communicator child = c.split(0, 0, "slow group");
        // 4 GiB device copies out of place (a 1-rank in-place all-reduce copies nothing), each over 2 ms at an
        // H100's or H200's memory bandwidth: 1,000 of them queued outlast the 1 s timeout several times over
        PlanBuilder b = new PlanBuilder("gpu.Slow", child, 0);
        long n = 1L << 30;
        int x = b.buffer("x", DataType.F32, n, "{\"n\"}", null);
        int y = b.buffer("y", DataType.F32, n, "{\"n\"}", null);
        b.allReduce(0, x, y, ReduceOp.SUM);
        Plan plan = b.build();
        for (int i = 0; i < 1000; i++) {
          plan.execute(child.stream());
        }
        timeout.set(assertThrows(CommTimeoutException.class, () -> child.stream().synchronize()));
        world.set(assertThrows(RankAbortedException.class, () -> c.stream().synchronize()).getMessage());
      });
    }
    assertMentions(timeout.get().getMessage(), "rank 0 of slow group (device", "timed out after PT1S", "gpu.Slow");
    assertMentions(world.get(), "rank 0 of world", "its family failed", "rank 0 of slow group", "timed out");
  }

  /** What NcclCloseProbe reads: each close records its parts (not their durations: timing is never asserted). */
  @Test
  void aClosedAxisRecordsWhereItsCloseWentAndAnAbortedOneCallsNoDestroy() {
    NcclCommunicator world = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    try {
      Mesh mesh = Mesh.builder(world).axis("dp", 1).axis("tp", 1).build();
      NcclCommunicator dp = (NcclCommunicator) mesh.axis("dp");
      assertEquals(null, dp.state().closeTimeline(), "nothing recorded before a close");
      mesh.close();
      CloseTimeline t = dp.state().closeTimeline();
      assertTrue(t != null && t.graphsNanos() >= 0 && t.destroyNanos() >= 0 && t.releaseNanos() >= 0, "" + t);
      assertEquals(t.totalNanos(), t.graphsNanos() + t.destroyNanos() + t.releaseNanos());
      NcclCommunicator child = (NcclCommunicator) world.split(0, 0, "child");
      child.state().abortFromOutside(); // the family (world too) is aborted: close frees, and destroys nothing
      child.close();
      CloseTimeline aborted = child.state().closeTimeline();
      assertTrue(aborted != null && aborted.destroyNanos() == 0, "no ncclCommDestroy after an abort: " + aborted);
    } finally {
      world.close();
    }
  }

  @Test
  void splitOnAClosedParentIsRefused() {
    NcclCommunicator world = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    world.close();
    IllegalStateException e = assertThrows(IllegalStateException.class, () -> world.split(0, 0));
    assertMentions(e.getMessage(), "NcclCommunicator[rank 0 of 1, device", "is closed");
    assertThrows(IllegalArgumentException.class, () -> world.split(-1, 0), "a negative color, before anything else");
  }

  /** Two ranks (two GPUs, or one shared): rank 1 never splits; rank 0 times out in ncclCommSplit, naming it and the group. */
  @Test
  void aRankThatNeverSplitsTimesOutTheOthersWithTwoRanks() {
    assumeTrue(NcclBackend.unavailableReason(2) == null, "needs 2 ranks: " + NcclBackend.unavailableReason(2));
    AtomicReference<Throwable> rank0 = new AtomicReference<>();
    try (Cluster cluster = NcclBackend.cluster(2, CommOptions.timeout(Duration.ofSeconds(2)))) {
      assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class, () -> cluster.run(c -> {
        if (c.rank() == 1) {
          return;
        }
        try {
          c.split(0, 0);
        } catch (RuntimeException e) {
          rank0.set(e);
          throw e;
        }
      })));
    }
    CommTimeoutException e = assertInstanceOf(CommTimeoutException.class, rank0.get());
    assertMentions(e.getMessage(), "blocked in ncclCommSplit", "every rank of world", "split(color 0, key 0)");
  }

  private static void assertMentions(String text, String... parts) {
    for (String part : parts) {
      assertTrue(text.contains(part), () -> "'" + part + "' missing from: " + text);
    }
  }
}
