package dev.commplan.runtime.local;

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
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Splits and meshes on the local backend, beyond the conformance kit's (LocalConformanceTest runs its {@code
 * SplitSuite} and {@code MeshSuite}): its threads all stop, the runtime's refusals of bad meshes and of plans
 * over axes a mesh lacks (the same on every backend), and the words of its timeouts in a group, which name the
 * missing rank in the group and in the world. Hangs fail the test (preemptive timeouts) instead of stalling
 * the build.
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

  /** A split's stream is a worker thread of its own, which stops with its cluster (the check after each test). */
  @Test
  void theWorkersOfSplitsLeftOpenStopWithTheirCluster() {
    cluster(4).run(world -> {
      Communicator half = world.split(world.rank() % 2, 0);
      half.split(0, 0, "quarter").stream().synchronize(); // left open: the cluster closes them
      Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build();
      mesh.axes("tp", "dp").stream().synchronize();
    });
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
