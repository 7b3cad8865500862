package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.MeshSuite;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestFactory;

/**
 * Splits and meshes on the local backend: {@code split}'s grouping and order, the mesh's row-major layout
 * and its groups, every collective and point-to-point pattern over each axis of 2-D meshes of 4, 6 and 8
 * ranks in every axis order and of a 2×2×2 mesh ({@link MeshSuite}), plans over axes, and a family that
 * fails together. Hangs fail the test (preemptive timeouts) instead of stalling the build.
 */
class LocalMeshTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);
  private final List<LocalCluster> clusters = new ArrayList<>();

  private LocalCluster cluster(int ranks) {
    return cluster(ranks, CommOptions.defaults());
  }

  private LocalCluster cluster(int ranks, CommOptions options) {
    LocalCluster cluster = new LocalCluster(ranks, options);
    clusters.add(cluster);
    return cluster;
  }

  @AfterEach
  void closeClustersAndCheckThreads() {
    clusters.forEach(LocalCluster::close);
    assertTimeoutPreemptively(GENEROUS, () -> {
      while (!LiveThreads.named("commplan-local-").isEmpty()) {
        Thread.sleep(10); // stopping is prompt; this only waits for threads that are just now exiting
      }
    }, () -> "backend threads left running, splits' streams included: " + LiveThreads.named("commplan-local-"));
  }

  @TestFactory
  Stream<DynamicTest> everyCollectiveAndTransferOverEachAxis() {
    List<DynamicTest> tests = new ArrayList<>();
    for (int ranks : new int[] {4, 6, 8}) {
      for (MeshSuite.Shape shape : MeshSuite.meshes(ranks)) {
        tests.add(DynamicTest.dynamicTest("mesh " + shape, () -> assertTimeoutPreemptively(GENEROUS, () -> {
          List<String> failures = new ArrayList<>();
          cluster(ranks).call(world -> MeshSuite.runOnRank(world, shape)).forEach(failures::addAll);
          assertEquals(List.of(), failures);
        })));
      }
    }
    return tests.stream();
  }

  @Test
  void splitGroupsByColorAndRanksByKeyThenByRank() {
    List<String> got = cluster(6).call(comm -> {
      // colors: even and odd ranks; keys reverse the order, with a tie between ranks 2 and 4
      int key = comm.rank() == 2 || comm.rank() == 4 ? 0 : 10 - comm.rank();
      try (Communicator half = comm.split(comm.rank() % 2, key)) {
        try (I32Buffer x = I32Buffer.allocate(half, 1); I32Buffer all = I32Buffer.allocate(half, half.size())) {
          x.copyFrom(new int[] {comm.rank()});
          half.allGather(x, all, half.stream());
          half.stream().synchronize();
          return half.size() + " " + half.rank() + " " + java.util.Arrays.toString(all.toArray());
        }
      }
    });
    // evens: rank 0 key 10, rank 2 key 0, rank 4 key 0 -> [2, 4, 0]; odds: keys 9, 7, 5 -> [5, 3, 1]
    assertEquals(List.of("3 2 [2, 4, 0]", "3 2 [5, 3, 1]", "3 0 [2, 4, 0]", "3 1 [5, 3, 1]", "3 1 [2, 4, 0]",
        "3 0 [5, 3, 1]"), got);
  }

  @Test
  void aNegativeColorIsRefusedNamingIt() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> cluster(1).communicator(0).split(-1, 0));
    assertTrue(e.getMessage().contains("color -1"), e.getMessage());
  }

  @Test
  void aSplitHasItsOwnStreamAndClosesWithItsParent() {
    LocalCluster cluster = cluster(2);
    List<Communicator> splits = cluster.call(comm -> {
      Communicator child = comm.split(0, comm.rank());
      assertNotSame(comm.stream(), child.stream());
      assertSame(child, child.stream().communicator());
      assertEquals("split(color 0) of world", child.groupLabel());
      return child;
    });
    cluster.close();
    for (Communicator child : splits) {
      assertTrue(child.isClosed(), child + " is still open after its parent closed");
    }
  }

  @Test
  void aMeshLaysRanksOutRowMajorAndNamesItsGroups() {
    List<String> got = cluster(8).call(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("pp", 2).axis("dp", 2).axis("tp", 2).build()) {
        int rank = (mesh.coordinate("pp") * 2 + mesh.coordinate("dp")) * 2 + mesh.coordinate("tp");
        assertEquals(world.rank(), rank);
        assertEquals(mesh.coordinate("tp"), mesh.axis("tp").rank());
        assertEquals("axis dp of mesh [pp=2, dp=2, tp=2]", mesh.axis("dp").groupLabel());
        Communicator dpTp = mesh.axes("dp", "tp");
        assertSame(dpTp, mesh.axes("dp", "tp"), "made once, then cached");
        assertEquals(mesh.coordinate("dp") * 2 + mesh.coordinate("tp"), dpTp.rank());
        Communicator tpDp = mesh.axes("tp", "dp");
        assertEquals(mesh.coordinate("tp") * 2 + mesh.coordinate("dp"), tpDp.rank(), "ranked in the order asked");
        return mesh.axis("pp").size() + "/" + dpTp.size() + "/" + mesh.axisNames();
      }
    });
    assertEquals("2/4/[pp, dp, tp]", got.getFirst());
  }

  @Test
  void badMeshesAreRefusedNamingTheAxesSizesAndWorld() {
    Communicator world = cluster(1).communicator(0);
    assertMentions(assertThrows(IllegalArgumentException.class,
        () -> Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()).getMessage(),
        "[dp=2, tp=2]", "multiply to 4", "world has 1 ranks");
    assertMentions(assertThrows(IllegalArgumentException.class,
        () -> Mesh.builder(world).axis("ranks", 1)).getMessage(), "'ranks' is reserved", "world of 1 ranks");
    assertMentions(assertThrows(IllegalArgumentException.class,
        () -> Mesh.builder(world).axis("tp", 1).axis("tp", 1)).getMessage(), "'tp' is declared twice", "[tp=1]");
    assertMentions(assertThrows(IllegalArgumentException.class,
        () -> Mesh.builder(world).axis("t p", 1)).getMessage(), "not a Java identifier");
    assertMentions(assertThrows(IllegalArgumentException.class,
        () -> Mesh.builder(world).axis("tp", 0)).getMessage(), "size 0");
    try (Mesh mesh = Mesh.builder(world).axis("tp", 1).build()) {
      assertMentions(assertThrows(IllegalArgumentException.class, () -> mesh.axis("dp")).getMessage(),
          "no axis 'dp'", "[tp]");
    }
  }

  @Test
  void ranksThatBuildDifferentMeshesFailEveryOneBeforeSplitting() {
    CommPlanException e = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster(4).run(world -> {
          Mesh.Builder b = Mesh.builder(world);
          if (world.rank() == 3) {
            b.axis("tp", 2).axis("dp", 2); // the other order
          } else {
            b.axis("dp", 2).axis("tp", 2);
          }
          b.build();
        })));
    // every rank fails with the comparison, none with an abort
    for (Throwable t : allFailures(e)) {
      assertMentions(t.getMessage(), "built different meshes", "ranks [0, 1, 2] built [dp=2, tp=2]",
          "rank 3 built [tp=2, dp=2]");
    }
  }

  @Test
  void aPlanOverAxesTheMeshLacksIsRefusedNamingBoth() {
    cluster(2).run(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("dp", 2).build()) {
        PlanBuildException e = assertThrows(PlanBuildException.class,
            () -> new PlanBuilder("test.P", mesh, 0, "dp", "tp"));
        assertMentions(e.getMessage(), "test.P", "[dp, tp]", "mesh has [dp]", "no tp");
      }
    });
  }

  @Test
  void ranksThatDeclareACallOverDifferentAxesFailTheFingerprint() {
    PlanMismatchException e = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(PlanMismatchException.class,
        () -> {
          try {
            cluster(4).run(world -> {
              try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
                PlanBuilder b = new PlanBuilder("test.Over", mesh, 0, "dp", "tp");
                int x = b.buffer("x", DataType.F32, 4, "{\"4\"}", null);
                b.collective(0, Collective.ALL_REDUCE, x, x, ReduceOp.SUM, -1, world.rank() == 0 ? "dp" : "tp");
                b.build().close();
              }
            });
          } catch (CommPlanException wrapped) {
            throw wrapped.getCause();
          }
        }));
    assertMentions(e.getMessage(), "over dp", "over tp");
  }

  @Test
  void aRankThatThrowsInOneGroupEndsEveryCommunicatorOfEveryRank() {
    CommPlanException e = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster(4).run(world -> {
          try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build();
              F32Buffer x = F32Buffer.allocate(world, 4)) {
            if (world.rank() == 3) {
              throw new IllegalStateException("rank 3 fails in its tp group");
            }
            Communicator tp = mesh.axis("tp");
            tp.allReduce(x, x, ReduceOp.SUM, tp.stream()); // ranks 2 and 3 meet here: rank 3 never comes
            tp.stream().synchronize();
            Communicator dp = mesh.axis("dp");
            dp.allReduce(x, x, ReduceOp.SUM, dp.stream());
            dp.stream().synchronize();
          }
        })));
    assertMentions(e.getMessage(), "rank 3");
    for (Throwable other : e.getSuppressed()) {
      assertMentions(causeChain(other), "rank 3 fails in its tp group");
    }
  }

  @Test
  void aRankThatStallsInOneGroupTimesOutNamingTheGroupAndTheRanks() {
    CommOptions shortTimeout = new CommOptions(Duration.ofMillis(500));
    CommPlanException e = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster(4, shortTimeout).run(world -> {
          try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build();
              F32Buffer x = F32Buffer.allocate(world, 4)) {
            Communicator tp = mesh.axis("tp");
            if (world.rank() != 3) { // world rank 3, rank 1 of its tp group {2, 3}, skips the group's all-reduce
              tp.allReduce(x, x, ReduceOp.SUM, tp.stream());
              tp.stream().synchronize();
            }
          }
        })));
    String all = causeChain(e) + String.join(" | ", allFailures(e).stream().map(LocalMeshTest::causeChain).toList());
    // the missing rank by its place in the group and in the world, as on MPI (issue 34)
    assertMentions(all, "timed out on rank 0 of axis tp of mesh [dp=2, tp=2]",
        "ranks [0] (world ranks [2]) arrived, ranks [1] (world ranks [3]) did not");
    assertTrue(allFailures(e).stream().anyMatch(t -> causeChain(t).contains("CommTimeoutException")
        || t instanceof CommTimeoutException || t.getCause() instanceof CommTimeoutException), all);
  }

  /**
   * Issue 34: a plan's call over an axis is checked against the axis's size, and its message names the axis, not
   * "ranks" (the world's size would be another number): an in-place AllToAll, an in-place AllGather whose count the
   * axis does not divide, and an AllGather into a buffer sized by the world.
   */
  @Test
  void planRulesOverAnAxisNameTheAxisAndItsSize() {
    List<String> messages = cluster(4).call(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
        List<String> found = new ArrayList<>();
        PlanBuilder a = new PlanBuilder("test.InPlaceAllToAll", mesh, 0, "tp");
        int tokens = a.buffer("tokens", DataType.F32, 6, "{\"6\"}", null);
        a.collective(0, Collective.ALL_TO_ALL, tokens, tokens, null, -1, "tp");
        found.add(assertThrows(PlanBuildException.class, a::build).getMessage());
        PlanBuilder g = new PlanBuilder("test.InPlaceAllGather", mesh, 0, "tp");
        int all = g.buffer("all", DataType.F32, 3, "{\"3\"}", null);
        g.collective(0, Collective.ALL_GATHER, all, all, null, -1, "tp");
        found.add(assertThrows(PlanBuildException.class, g::build).getMessage());
        PlanBuilder w = new PlanBuilder("test.GatherSizedByWorld", mesh, 0, "tp");
        int part = w.buffer("part", DataType.F32, 2, "{\"2\"}", null);
        int full = w.buffer("full", DataType.F32, 8, "{\"ranks\", \"2\"}", null);
        w.collective(0, Collective.ALL_GATHER, part, full, null, -1, "tp");
        found.add(assertThrows(PlanBuildException.class, w::build).getMessage());
        return found;
      }
    }).getFirst();
    assertMentions(messages.get(0), "[CommPlan/MissingInto]", "divisible by tp = 2 (the size of axis \"tp\"");
    assertMentions(messages.get(1), "[CommPlan/NotDivisible]", "is not divisible by tp = 2 (the size of axis \"tp\"",
        "a multiple of tp");
    assertMentions(messages.get(2), "must be tp × count(part) = 2 × 2 = 4", "tp = 2 (the size of axis \"tp\"");
    for (String message : messages) {
      assertTrue(!message.contains("ranks = "), message);
    }
  }

  /** Issue 34: a split of a group and a transfer in it that time out name the missing rank in the world too. */
  @Test
  void timeoutsOfASplitAndOfATransferInAGroupNameTheWorldRank() {
    CommOptions shortTimeout = new CommOptions(Duration.ofMillis(500));
    CommPlanException split = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster(4, shortTimeout).run(world -> {
          try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
            if (world.rank() != 3) { // world rank 3, rank 1 of tp group {2, 3}, does not split it
              mesh.axis("tp").split(0, 0, "half").close();
            }
          }
        })));
    String all = String.join(" | ", allFailures(split).stream().map(LocalMeshTest::causeChain).toList());
    assertMentions(all, "split #0 of axis tp of mesh [dp=2, tp=2] timed out on rank 0 of axis tp",
        "ranks [1] (world ranks [3]) of axis tp of mesh [dp=2, tp=2] did not call split");

    CommPlanException recv = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster(4, shortTimeout).run(world -> {
          try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build();
              F32Buffer x = F32Buffer.allocate(world, 4)) {
            Communicator tp = mesh.axis("tp");
            if (world.rank() == 2) { // waits for rank 1 of its tp group, world rank 3, which sends nothing
              tp.recv(x, 1, tp.stream());
              tp.stream().synchronize();
            }
          }
        })));
    assertMentions(String.join(" | ", allFailures(recv).stream().map(LocalMeshTest::causeChain).toList()),
        "waiting for rank 1 of axis tp of mesh [dp=2, tp=2] (world rank 3) to send to it");
  }

  @Test
  void aPlanOverTheMeshDescribesEachCallsAxis() {
    List<String> described = cluster(4).call(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
        PlanBuilder b = new PlanBuilder("test.Describe", mesh, 0, "tp");
        int x = b.buffer("x", DataType.F32, 4, "{\"4\"}", null);
        int y = b.buffer("y", DataType.F32, 4, "{\"4\"}", null);
        b.collective(0, Collective.ALL_REDUCE, x, x, ReduceOp.SUM, -1, "tp");
        b.collective(0, Collective.ALL_REDUCE, y, y, ReduceOp.SUM, -1, "");
        try (Plan plan = b.build()) {
          return plan.describe();
        }
      }
    });
    assertMentions(described.get(3), "groups: tp (2 ranks, this rank 1 there)", "all-reduce over tp F32 SUM",
        "all-reduce F32 SUM");
  }

  /** Fields over two axes declared in turn are laid out per axis, so each axis's calls coalesce into one. */
  @Test
  void callsOverTwoAxesDeclaredInTurnCoalesceIntoOneCallPerAxis() {
    List<Integer> calls = cluster(4).call(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
        PlanBuilder b = new PlanBuilder("test.Alternate", mesh, 0, "dp", "tp");
        for (int i = 0; i < 6; i++) {
          int x = b.buffer("x" + i, DataType.F32, 4, "{\"4\"}", null);
          b.collective(0, Collective.ALL_REDUCE, x, x, ReduceOp.SUM, -1, i % 2 == 0 ? "dp" : "tp");
        }
        try (Plan plan = b.build()) {
          for (int i = 0; i < 6; i++) {
            ((F32Buffer) plan.buffer(i)).fill(i + world.rank());
          }
          plan.execute(world.stream());
          world.stream().synchronize();
          for (int i = 0; i < 6; i++) { // over dp: ranks r and r^2 (tp the same); over tp: r and r^1
            int other = i % 2 == 0 ? world.rank() ^ 2 : world.rank() ^ 1;
            float want = 2 * i + world.rank() + other;
            for (float got : ((F32Buffer) plan.buffer(i)).toArray()) {
              assertEquals(want, got, "field x" + i + " on world rank " + world.rank());
            }
          }
          return plan.schedule().steps().getFirst().calls().size();
        }
      }
    });
    assertEquals(List.of(2, 2, 2, 2), calls);
  }

  private static List<Throwable> allFailures(Throwable e) {
    List<Throwable> all = new ArrayList<>();
    all.add(e.getCause() != null ? e.getCause() : e);
    for (Throwable s : e.getSuppressed()) {
      all.add(s.getCause() != null ? s.getCause() : s);
    }
    return all;
  }

  private static String causeChain(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable at = t; at != null; at = at.getCause()) {
      all.append(at.getClass().getSimpleName()).append(": ").append(at.getMessage()).append(" | ");
    }
    return all.toString();
  }

  private static void assertMentions(String text, String... parts) {
    for (String part : parts) {
      assertTrue(text.contains(part), () -> "'" + part + "' missing from: " + text);
    }
  }
}
