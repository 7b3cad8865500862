package dev.commplan.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * Splits and meshes on any backend with splits ({@code AbstractCommunicator.splitGroup}): subclass it and
 * name the backend ({@link #backend()}). What a backend's split must do, whatever it runs on: group the ranks
 * by color and order them by key, then by rank ({@link #groupsOf}); give each split its own stream, its label
 * and a place in the family (closed with its parent at the latest; failed with it); let a mesh's world and
 * axes use each other's memory; lay a mesh out row-major; run a plan's calls on their axes' communicators,
 * coalesced per axis; and compare the ranks' meshes and plans through the backend's own calls, so that ranks
 * that disagree fail before anything runs. A rank that fails in one group ends every group of every rank.
 *
 * <p>The tests that need a mesh run at the smallest of {@link #worldSizes()} that has one (4, 6, 8, ...; {@link
 * MeshSuite#meshes}), and are skipped, saying so, where none has. {@link MeshSuite} runs every collective over
 * the axes.
 */
public abstract class SplitSuite extends BackendSuite {
  /** For subclasses. */
  protected SplitSuite() {}

  /**
   * The groups a split makes of {@code ranks} ranks that pass these colors and keys: the ranks of one color,
   * ordered by key, then by their rank. For a rank's place in its group: its index in its group's list.
   *
   * @param colors each rank's color
   * @param keys each rank's key
   * @return for each rank, the ranks of its group in their order there
   */
  public static List<List<Integer>> groupsOf(int[] colors, int[] keys) {
    List<List<Integer>> groups = new ArrayList<>();
    for (int r = 0; r < colors.length; r++) {
      int color = colors[r];
      groups.add(IntStream.range(0, colors.length).filter(k -> colors[k] == color).boxed()
          .sorted(Comparator.<Integer>comparingInt(k -> keys[k]).thenComparingInt(k -> k)).toList());
    }
    return groups;
  }

  @Test
  void splitGroupsByColorAndRanksByKeyThenByRank() {
    int n = largestWorld();
    int[] colors = IntStream.range(0, n).map(r -> r % 2).toArray();
    int[] keys = IntStream.range(0, n).map(r -> r % 4 >= 2 ? 0 : 100 - r).toArray(); // ties, and the rest reversed
    List<List<Integer>> groups = groupsOf(colors, keys);
    List<String> got = clusterOf(n).call(comm -> {
      try (Communicator half = comm.split(colors[comm.rank()], keys[comm.rank()]);
          I32Buffer x = I32Buffer.allocate(half, 1); I32Buffer all = I32Buffer.allocate(half, half.size())) {
        x.copyFrom(new int[] {comm.rank()});
        half.allGather(x, all, half.stream());
        half.stream().synchronize();
        return half.size() + " " + half.rank() + " " + Arrays.toString(all.toArray());
      }
    });
    for (int r = 0; r < n; r++) {
      List<Integer> group = groups.get(r);
      assertEquals(group.size() + " " + group.indexOf(r) + " " + group, got.get(r), "rank " + r + " of " + n);
    }
  }

  @Test
  void aNegativeColorIsRefusedNamingIt() {
    clusterOf(smallestWorld()).run(comm -> {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> comm.split(-1, 0));
      assertTrue(e.getMessage().contains("color -1"), e.getMessage());
    });
  }

  @Test
  void aSplitHasItsOwnStreamAndLabelAndClosesWithItsParent() {
    List<Communicator> splits;
    try (Cluster cluster = cluster(smallestWorld())) {
      splits = cluster.call(comm -> {
        Communicator child = comm.split(0, comm.rank());
        assertNotSame(comm.stream(), child.stream());
        assertSame(child, child.stream().communicator());
        assertEquals("split(color 0) of world", child.groupLabel());
        assertEquals(comm.size(), child.size());
        assertEquals(comm.rank(), child.rank());
        Communicator named = child.split(0, 0, "named");
        assertEquals("named", named.groupLabel());
        assertEquals("split(color 0) of named", named.split(0, 0).groupLabel());
        return child;
      });
    }
    for (Communicator child : splits) {
      assertTrue(child.isClosed(), child + " is still open after its parent closed");
    }
  }

  @Test
  void aMeshLaysRanksOutRowMajorAndNamesItsGroups() {
    int n = meshWorld();
    List<MeshSuite.Shape> shapes = MeshSuite.meshes(n);
    MeshSuite.Shape shape = shapes.getLast(); // 2×2×2 where there are 8 ranks
    List<String> names = shape.names();
    clusterOf(n).run(world -> {
      try (Mesh mesh = meshOf(world, shape)) {
        int rank = 0;
        for (String name : names) {
          rank = rank * mesh.size(name) + mesh.coordinate(name);
          assertEquals(mesh.coordinate(name), mesh.axis(name).rank(), name);
          assertEquals(mesh.size(name), mesh.axis(name).size(), name);
          assertEquals("axis " + name + " of mesh " + shape, mesh.axis(name).groupLabel());
        }
        assertEquals(world.rank(), rank, "row-major");
        String a = names.get(names.size() - 2);
        String b = names.getLast();
        Communicator ab = mesh.axes(a, b);
        assertSame(ab, mesh.axes(a, b), "made once, then cached");
        assertEquals(mesh.coordinate(a) * mesh.size(b) + mesh.coordinate(b), ab.rank());
        assertEquals(mesh.coordinate(b) * mesh.size(a) + mesh.coordinate(a), mesh.axes(b, a).rank(),
            "ranked in the order asked");
      }
    });
  }

  @Test
  void aMeshsWorldAndAxesUseEachOthersMemory() {
    int n = meshWorld();
    MeshSuite.Shape shape = MeshSuite.meshes(n).getFirst();
    String axis = shape.names().getFirst();
    clusterOf(n).run(world -> {
      try (Mesh mesh = meshOf(world, shape); F32Buffer onWorld = F32Buffer.allocate(world, 3)) {
        Communicator group = mesh.axis(axis);
        try (F32Buffer onAxis = F32Buffer.allocate(group, 3)) {
          onWorld.fill(world.rank());
          group.allReduce(onWorld, onAxis, ReduceOp.SUM, group.stream()); // the world's memory on the axis
          group.stream().synchronize();
          world.allReduce(onAxis, onWorld, ReduceOp.MAX, world.stream()); // the axis's memory on the world
          world.stream().synchronize();
          float sum = 0;
          float max = 0;
          for (int k = 0; k < mesh.size(axis); k++) {
            sum += MeshSuite.withCoordinate(mesh, world.rank(), axis, k);
          }
          for (int r = 0; r < world.size(); r++) {
            float theirs = 0;
            for (int k = 0; k < mesh.size(axis); k++) {
              theirs += MeshSuite.withCoordinate(mesh, r, axis, k);
            }
            max = Math.max(max, theirs);
          }
          assertEquals(sum, onAxis.get(2), "the sum over " + axis);
          assertEquals(max, onWorld.get(0), "the largest sum over " + axis + " of any rank");
        }
      }
    });
  }

  @Test
  void ranksThatBuildDifferentMeshesFailEveryOneBeforeSplitting() {
    int n = meshWorld();
    int[] sizes = MeshSuite.meshes(n).getFirst().sizes();
    String others = "[dp=" + sizes[0] + ", tp=" + sizes[1] + "]";
    String last = "[tp=" + sizes[1] + ", dp=" + sizes[0] + "]";
    CommPlanException e;
    try (Cluster cluster = cluster(n)) {
      e = assertThrows(CommPlanException.class, () -> cluster.run(world -> {
        Mesh.Builder b = Mesh.builder(world);
        if (world.rank() == n - 1) {
          b.axis("tp", sizes[1]).axis("dp", sizes[0]); // the other order
        } else {
          b.axis("dp", sizes[0]).axis("tp", sizes[1]);
        }
        b.build();
      }));
    }
    List<Integer> most = IntStream.range(0, n - 1).boxed().toList();
    for (Throwable t : allFailures(e)) { // every rank fails with the comparison, none with an abort
      assertMentions(t.getMessage(), "built different meshes", "ranks " + most + " built " + others,
          "rank " + (n - 1) + " built " + last);
    }
  }

  @Test
  void ranksThatDeclareACallOverDifferentAxesFailTheFingerprint() {
    int n = meshWorld();
    int[] sizes = MeshSuite.meshes(n).getFirst().sizes();
    PlanMismatchException e;
    try (Cluster cluster = cluster(n)) {
      CommPlanException failed = assertThrows(CommPlanException.class, () -> cluster.run(world -> {
        try (Mesh mesh = Mesh.builder(world).axis("dp", sizes[0]).axis("tp", sizes[1]).build()) {
          PlanBuilder b = new PlanBuilder("kit.Over", mesh, 0, "dp", "tp");
          int x = b.buffer("x", DataType.F32, 4, "{\"4\"}", null);
          b.collective(0, Collective.ALL_REDUCE, x, x, ReduceOp.SUM, -1, world.rank() == 0 ? "dp" : "tp");
          b.build().close();
        }
      }));
      e = assertInstanceOfCause(failed);
    }
    assertMentions(e.getMessage(), "over dp", "over tp");
  }

  @Test
  void aRankThatThrowsInOneGroupEndsEveryCommunicatorOfEveryRank() {
    int n = meshWorld();
    int[] sizes = MeshSuite.meshes(n).getFirst().sizes();
    CommPlanException e;
    try (Cluster cluster = cluster(n)) {
      e = assertThrows(CommPlanException.class, () -> cluster.run(world -> {
        try (Mesh mesh = Mesh.builder(world).axis("dp", sizes[0]).axis("tp", sizes[1]).build();
            F32Buffer x = F32Buffer.allocate(world, 4)) {
          if (world.rank() == n - 1) {
            throw new IllegalStateException("the last rank fails in its tp group");
          }
          Communicator tp = mesh.axis("tp");
          tp.allReduce(x, x, ReduceOp.SUM, tp.stream()); // the last rank's tp group waits here: it never comes
          tp.stream().synchronize();
          Communicator dp = mesh.axis("dp");
          dp.allReduce(x, x, ReduceOp.SUM, dp.stream()); // and every dp group has a rank of that tp group
          dp.stream().synchronize();
        }
      }));
    }
    assertMentions(e.getMessage(), "rank " + (n - 1));
    for (Throwable other : e.getSuppressed()) {
      assertMentions(causeChain(other), "the last rank fails in its tp group");
    }
  }

  @Test
  void aPlanOverTheMeshDescribesEachCallsAxis() {
    int n = meshWorld();
    int[] sizes = MeshSuite.meshes(n).getFirst().sizes();
    List<String> described = clusterOf(n).call(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("dp", sizes[0]).axis("tp", sizes[1]).build()) {
        PlanBuilder b = new PlanBuilder("kit.Describe", mesh, 0, "tp");
        int x = b.buffer("x", DataType.F32, 4, "{\"4\"}", null);
        int y = b.buffer("y", DataType.F32, 4, "{\"4\"}", null);
        b.collective(0, Collective.ALL_REDUCE, x, x, ReduceOp.SUM, -1, "tp");
        b.collective(0, Collective.ALL_REDUCE, y, y, ReduceOp.SUM, -1, "");
        try (Plan plan = b.build()) {
          return plan.describe();
        }
      }
    });
    assertMentions(described.getLast(), "groups: tp (" + sizes[1] + " ranks, this rank " + (sizes[1] - 1) + " there)",
        "all-reduce over tp F32 SUM", "all-reduce F32 SUM");
  }

  /** Fields over two axes declared in turn are laid out per axis, so each axis's calls coalesce into one. */
  @Test
  void callsOverTwoAxesDeclaredInTurnCoalesceIntoOneCallPerAxisAndRunThere() {
    int n = meshWorld();
    int[] sizes = MeshSuite.meshes(n).getFirst().sizes();
    List<Integer> calls = clusterOf(n).call(world -> {
      try (Mesh mesh = Mesh.builder(world).axis("dp", sizes[0]).axis("tp", sizes[1]).build()) {
        PlanBuilder b = new PlanBuilder("kit.Alternate", mesh, 0, "dp", "tp");
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
          for (int i = 0; i < 6; i++) {
            String axis = i % 2 == 0 ? "dp" : "tp";
            float want = 0;
            for (int k = 0; k < mesh.size(axis); k++) {
              want += i + MeshSuite.withCoordinate(mesh, world.rank(), axis, k);
            }
            for (float got : ((F32Buffer) plan.buffer(i)).toArray()) {
              assertEquals(want, got, "field x" + i + " over " + axis + " on world rank " + world.rank());
            }
          }
          return plan.schedule().steps().getFirst().calls().size();
        }
      }
    });
    assertEquals(IntStream.range(0, n).mapToObj(r -> 2).toList(), calls);
  }

  /** The smallest world size of {@link #worldSizes()} that has a mesh; the test is skipped where none has. */
  private int meshWorld() {
    int[] withMesh = Arrays.stream(worldSizes()).filter(n -> !MeshSuite.meshes(n).isEmpty()).sorted().toArray();
    Assumptions.assumeTrue(withMesh.length > 0, () -> "no world size of " + Arrays.toString(worldSizes())
        + " has a mesh (4, 6, 8, ...)");
    return withMesh[0];
  }

  static Mesh meshOf(Communicator world, MeshSuite.Shape shape) {
    Mesh.Builder b = Mesh.builder(world);
    for (int i = 0; i < shape.names().size(); i++) {
      b.axis(shape.names().get(i), shape.sizes()[i]);
    }
    return b.build();
  }

  private static PlanMismatchException assertInstanceOfCause(CommPlanException failed) {
    for (Throwable t : allFailures(failed)) {
      if (t instanceof PlanMismatchException mismatch) {
        return mismatch;
      }
    }
    throw new AssertionError("no rank failed with PlanMismatchException: " + causeChain(failed), failed);
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
