package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.lang.reflect.Proxy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench over meshes (issue 23, item 5) on the local backend: sweep over one axis, the many-buffers
 * comparison over two axes, the cost of building a mesh, and their command lines.
 */
class MeshBenchTest {
  @TempDir Path dir;

  private static PrintStream sink(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }

  private static String text(ByteArrayOutputStream bytes) {
    return bytes.toString(StandardCharsets.UTF_8);
  }

  @Test
  void everyMeshMistakeIsOneLineWithStatusTwoBeforeAnyWork() {
    String[][] cases = {
      {"sweep", "--mesh", "dp=2,tp=4"}, {"sweep", "--over", "tp"}, {"sweep", "--mesh", "dp=2,tp=4", "--over", "pp"},
      {"sweep", "--mesh", "dp=2,tp=4", "--over", "dp,tp"}, {"sweep", "--mesh", "dp=2,tp=4", "--over", "tp", "--ranks", "4"},
      {"sweep", "--mesh", "dp2,tp=4", "--over", "tp"}, {"sweep", "--mesh", "dp=x,tp=4", "--over", "tp"},
      {"sweep", "--mesh", "dp=0,tp=4", "--over", "tp"}, {"sweep", "--mesh", "dp=2,dp=4", "--over", "dp"},
      {"sweep", "--mesh", "rank=2,tp=4", "--over", "tp"}, {"sweep", "--mesh", "1dp=2", "--over", "1dp"},
      {"sweep", "--mesh", "dp=2,tp=4", "--over", "tp", "--root", "4"}, {"sweep", "--mesh", "dp=64,tp=64", "--over", "tp"},
      {"sweep", "--mesh", "", "--over", "tp"}, {"sweep", "--mesh", "dp=2,,tp=2", "--over", "tp"},
      {"sweep", "--mesh", "dp=99999,tp=99999", "--over", "tp"},
      {"sweep", "--mesh", "a=2000000000,b=2000000000,c=2000000000,d=2000000000", "--over", "a"}, {"sweep", "--mesh", "dp=2,tp=2", "--over", ""},
      {"many", "--mesh", "dp=2,tp=2", "--over", "pp"}, {"many", "--mesh", "dp=2,tp=2", "--over", "tp,tp"},
      {"many", "--mesh", "dp=2,tp=2", "--plan", "generated"}, {"many", "--axis-blocks"}, {"many", "--over", "dp"},
      {"mesh-cost", "--backend", "gloo"}, {"mesh-cost", "--meshes", "2xx4"}, {"mesh-cost", "--meshes", "2x0"},
      {"mesh-cost", "--mesh", "dp=2", "--meshes", "2x2"}, {"mesh-cost", "--backend", "mpi", "--ranks", "2"},
      {"mesh-cost", "--meshes", "2x2", "--ranks", "4"}, {"mesh-cost", "--ranks", "0"}, {"mesh-cost", "--reps", "0"},
      {"mesh-cost", "--meshes", "16x32"}, {"mesh-cost", "--over", "tp"}, {"mesh-cost", "--mesh", "dp=2,tp"},
    };
    for (String[] args : cases) {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      long t0 = System.nanoTime();
      int status = BenchMain.run(args, sink(out), sink(err));
      String e = text(err);
      String what = String.join(" ", args) + " -> " + e;
      assertEquals(2, status, what);
      assertEquals("", text(out), what);
      assertTrue(e.startsWith("error: "), what);
      assertEquals(1, e.lines().count(), what);
      assertTrue((System.nanoTime() - t0) / 1e9 < 5, "not up front: " + what);
    }
    assertEquals("error: --over dp,tp: sweep runs over one axis of the mesh (one of dp, tp) (--help lists the commands"
        + " and options)", firstLine("sweep", "--mesh", "dp=2,tp=4", "--over", "dp,tp"));
    assertEquals("error: --over pp: 'pp' is not an axis of --mesh dp=2,tp=4; its axes are dp, tp (--help lists the"
        + " commands and options)", firstLine("sweep", "--mesh", "dp=2,tp=4", "--over", "pp"));
    assertEquals("error: --ranks 4 is not the ranks of --mesh dp=2,tp=4 (2 x 4 = 8); give --ranks 8 or leave it out"
        + " (--help lists the commands and options)", firstLine("sweep", "--mesh", "dp=2,tp=4", "--over", "tp", "--ranks", "4"));
    // the name and size rules are Mesh.Builder.axis's own, in its words
    assertTrue(firstLine("sweep", "--mesh", "dp=2,dp=4", "--over", "dp").contains("axis 'dp' is declared twice"));
    assertTrue(firstLine("sweep", "--mesh", "rank=2,tp=4", "--over", "tp").contains("axis name 'rank' is reserved"));
    assertTrue(firstLine("sweep", "--mesh", "dp=0,tp=4", "--over", "tp").contains("axis 'dp' has size 0"));
    assertTrue(firstLine("sweep", "--mesh", "dp=2,tp=4", "--over", "tp", "--root", "4")
        .contains("--root 4 is not a rank of 4 (the ranks of a group along tp)"));
    assertTrue(firstLine("sweep", "--mesh", "dp=2,tp=4").contains("sweep --mesh needs --over AXIS"));
  }

  private static String firstLine(String... args) {
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    BenchMain.run(args, sink(new ByteArrayOutputStream()), sink(err));
    return text(err).lines().findFirst().orElse("");
  }

  private static Sweep.Config sweepOver(MeshSpec mesh, String over, int root) {
    return new Sweep.Config("local", mesh.ranks(), Coll.values(), DataType.F32, ReduceOp.SUM, root, 64, 4096, 8, 2, 2,
        SteadyState.Rule.fixed(1), 0, 60, 1, Long.MAX_VALUE, 0, true, mesh, over);
  }

  /**
   * Every collective over each axis of 2x2 and 2x4, in and out of place: every group's result equals the
   * reference for that group (its size, its ranks, inputs that depend on the group), and the columns are the
   * group's.
   */
  @Test
  void sweepOverEachAxisOfTwoByTwoAndTwoByFourChecksEveryGroup() throws Exception {
    for (String meshText : new String[] {"dp=2,tp=2", "dp=2,tp=4"}) {
      MeshSpec mesh = MeshSpec.parse("--mesh", meshText);
      for (String over : mesh.names()) {
        int group = mesh.size(over);
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Path csvFile = dir.resolve("sweep-" + meshText + "-" + over + ".csv");
        List<Sweep.Row> rows;
        try (Csv csv = new Csv(csvFile)) {
          rows = Sweep.run(sweepOver(mesh, over, group - 1), sink(out), sink(new ByteArrayOutputStream()), csv);
        }
        String what = meshText + " over " + over + ":\n" + text(out);
        assertTrue(rows.size() >= Coll.values().size(), what);
        for (Sweep.Row r : rows) {
          assertEquals(group, r.ranks(), what);
          assertEquals(0, r.outOfPlace().wrong(), r + "\n" + what);
          assertEquals(r.coll().hasInPlace() ? 0 : -1, r.inPlace().wrong(), r + "\n" + what);
        }
        int groups = mesh.ranks() / group;
        assertTrue(text(out).contains("# AllReduce  backend local  ranks " + group + "  mesh " + mesh.describe() + " over "
            + over + " (" + groups + " groups of " + group + " at once, world of " + mesh.ranks() + ")  type float"), what);
        List<List<String>> csv = Csv.read(csvFile);
        List<String> header = csv.get(0);
        List<String> first = csv.get(1);
        assertEquals(meshText, first.get(header.indexOf("mesh")));
        assertEquals(over, first.get(header.indexOf("over")));
        assertEquals(Integer.toString(mesh.ranks()), first.get(header.indexOf("world_ranks")));
        assertEquals(Integer.toString(group), first.get(header.indexOf("ranks")));
        Path svg = dir.resolve("busbw-" + over + ".svg");
        SvgPlot.bandwidth(List.of(csvFile), svg, "algbw", java.util.Set.of("out", "in"));
        assertTrue(java.nio.file.Files.readString(svg).contains("mesh " + meshText + " over " + over), what);
      }
    }
  }

  /** The groups' inputs differ (up to 11 groups), so that a rank in the wrong group gives wrong elements. */
  @Test
  void groupsOfAnAxisFillDifferentInputs() {
    for (int g = 1; g < 11; g++) {
      for (long i = 0; i < 11; i++) {
        assertNotEquals(Pattern.input(null, 0, i), Pattern.input(null, 0, g + i), "group " + g + ", element " + i);
      }
    }
  }

  private static ManyBuffers.Config manyOver(String mesh, List<String> over, boolean inPlace, boolean blocks) {
    MeshSpec m = MeshSpec.parse("--mesh", mesh);
    return new ManyBuffers.Config("local", m.ranks(), ManyBuffers.Case.uniform(6, 16), DataType.F32, ReduceOp.SUM,
        inPlace, 2, SteadyState.Rule.fixed(1), 60, 0, ManyBuffers.PlanSource.AUTO, true, m, over, blocks);
  }

  /** A plan over two axes, against the same calls made separately, grouped and flat per axis: every way right. */
  @Test
  void manyOverTwoAxesIsRightEveryWay() throws Exception {
    for (String mesh : new String[] {"dp=2,tp=2", "dp=2,tp=3"}) {
      for (boolean blocks : new boolean[] {false, true}) {
        for (boolean inPlace : new boolean[] {true, false}) {
          ByteArrayOutputStream out = new ByteArrayOutputStream();
          Path csvFile = dir.resolve("many.csv");
          List<ManyBuffers.Result> results;
          try (Csv csv = new Csv(csvFile)) {
            results = ManyBuffers.run(manyOver(mesh, List.of("tp", "dp"), inPlace, blocks), sink(out), csv);
          }
          String what = mesh + (blocks ? " blocks " : " alternate ") + (inPlace ? "in place" : "out of place") + ":\n"
              + text(out);
          assertEquals(ManyBuffers.MODES, results.stream().map(ManyBuffers.Result::mode).toList(), what);
          for (ManyBuffers.Result r : results) {
            assertEquals(0, r.wrong(), r + "\n" + what);
          }
          assertEquals(6, ManyBuffers.find(results, "separate").calls(), what);
          assertEquals(2, ManyBuffers.find(results, "flat").calls(), what);
          int planCalls = ManyBuffers.find(results, "plan").calls();
          // fields of one axis declared together coalesce into one call per axis
          assertTrue(blocks ? planCalls == 2 : planCalls >= 2 && planCalls <= 6, what);
          assertTrue(text(out).contains("# plan: PlanBuilder over mesh [" + mesh.replace(",", ", ") + "], axes tp, dp: 1"
              + " step, " + planCalls + " calls (over tp: "), what);
          assertTrue(text(out).contains("3 over tp (groups of " + mesh.charAt(mesh.length() - 1) + "), 3 over dp (groups"
              + " of 2)"), what);
          assertTrue(text(out).contains("# separate/plan "), what);
          assertTrue(text(out).contains("plan/flat "), what);
          List<List<String>> csv = Csv.read(csvFile);
          assertEquals(mesh, csv.get(1).get(csv.get(0).indexOf("mesh")), what);
          assertEquals("tp dp", csv.get(1).get(csv.get(0).indexOf("over")), what);
          Path svg = dir.resolve("many.svg");
          SvgPlot.manyBuffers(List.of(csvFile), svg);
          assertTrue(java.nio.file.Files.readString(svg).contains("mesh " + mesh + " " + (blocks ? "blocks" : "alternate")),
              what);
        }
      }
    }
  }

  @Test
  void manyOverAMeshFromTheCommandLine() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"many", "--mesh", "dp=2,tp=2", "--buffers", "4", "--count", "8", "--iters",
        "2", "--warmup", "1", "--axis-blocks", "--quiet"}, sink(out), sink(err));
    assertEquals(0, status, text(err));
    assertTrue(text(out).contains("# mesh [dp=2, tp=2]: each buffer all-reduced over one axis of [dp, tp], in blocks"
        + " (--axis-blocks): 2 over dp (groups of 2), 2 over tp (groups of 2)"), text(out));
    assertTrue(text(out).contains("# backend local  ranks 4  "), text(out));
  }

  @Test
  void meshCostTimesBuildAndCloseOnLocalMeshesOfTwoAndThreeAxes() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    Path csvFile = dir.resolve("mesh-cost.csv");
    List<MeshSpec> meshes = List.of(MeshSpec.parseShape("--meshes", "1x2"), MeshSpec.parseShape("--meshes", "2x2"),
        MeshSpec.parseShape("--meshes", "1x2x2"), MeshSpec.parse("--mesh", "a=2,b=1,c=2"));
    List<MeshCost.Row> rows;
    try (Csv csv = new Csv(csvFile)) {
      rows = MeshCost.run(new MeshCost.Config("local", meshes, 3, SteadyState.Rule.fixed(2), 60, 0, true), sink(out),
          null, csv);
    }
    assertEquals(4, rows.size(), text(out));
    for (MeshCost.Row r : rows) {
      assertNull(r.refused(), r.toString());
      assertEquals(3, r.units(), r.toString());
      assertTrue(r.buildUs() > 0 && r.closeUs() > 0 && r.totalUs() > 0 && r.firstBuildUs() > 0, r.toString());
      assertEquals(2, r.warmup().calls(), r.toString());
    }
    assertTrue(text(out).contains("  [pp=1, dp=2, tp=2]         3  "), text(out));
    assertTrue(text(out).contains("  [a=2, b=1, c=2]            3  "), text(out));
    List<List<String>> csv = Csv.read(csvFile);
    assertEquals(5, csv.size());
    assertEquals("1x2x2", csv.get(3).get(csv.get(0).indexOf("mesh")));
    assertEquals("pp dp tp", csv.get(3).get(csv.get(0).indexOf("axes")));

    out.reset();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = BenchMain.run(new String[] {"mesh-cost", "--meshes", "1x1,2x1", "--reps", "2", "--warmup", "1",
        "--quiet"}, sink(out), sink(err));
    assertEquals(0, status, text(err));
    assertTrue(text(out).contains("# mesh-cost  backend local: "), text(out));
    assertEquals(2, text(out).lines().filter(l -> l.startsWith("  ")).count(), text(out));
  }

  @Test
  void defaultMeshesAreATwoAndAThreeAxisMeshOfTheRanks() {
    assertEquals(List.of("1x1", "1x1x1"), MeshCost.defaults(1).stream().map(MeshSpec::shape).toList());
    assertEquals(List.of("1x2", "1x1x2"), MeshCost.defaults(2).stream().map(MeshSpec::shape).toList());
    assertEquals(List.of("2x2", "1x2x2"), MeshCost.defaults(4).stream().map(MeshSpec::shape).toList());
    assertEquals(List.of("2x3", "1x2x3"), MeshCost.defaults(6).stream().map(MeshSpec::shape).toList());
    assertEquals(List.of("2x4", "2x2x2"), MeshCost.defaults(8).stream().map(MeshSpec::shape).toList());
    assertEquals(List.of("pp", "dp", "tp"), MeshCost.defaults(8).get(1).names());
  }

  /**
   * A backend that cannot split (NCCL and MPI before their split lands, or NCCL older than 2.18) is named,
   * with its own words, in one line; mesh-cost prints the refusal as its row.
   */
  @Test
  void aBackendThatRefusesSplitIsSaidSo() {
    Communicator refusing = refusingWorld();
    MeshSpec mesh = MeshSpec.parseShape("--meshes", "1x1");
    MeshSpec.SplitRefused e = assertThrows(MeshSpec.SplitRefused.class, () -> mesh.build(refusing));
    assertEquals("the fake backend refuses Communicator.split, so it cannot build mesh [dp=1, tp=1]: fake backend:"
        + " split(color, key) is not available yet", e.getMessage());
    MeshCost.Config config = new MeshCost.Config("fake", List.of(mesh), 3, SteadyState.Rule.fixed(2), 60, 0, true);
    MeshCost.Row row = MeshCost.measure(config, mesh, refusing, SteadyState.Consensus.ALONE);
    assertEquals(e.getMessage(), row.refused());
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    new MeshCostOutput(config, sink(out)).row(row, null);
    assertEquals("#     1  [dp=1, tp=1]          refused: " + e.getMessage(), text(out).strip());
    // what BenchMain prints: the refusal, not the cluster's "rank 0 of 1 failed: ..." around it
    assertEquals(e, BenchMain.refusal(new CommPlanException("rank 0 of 1 failed: " + e, e)));
  }

  /** A world of one rank whose backend has no split yet (what NCCL and MPI said before theirs landed). */
  private static Communicator refusingWorld() {
    return (Communicator) Proxy.newProxyInstance(MeshBenchTest.class.getClassLoader(), new Class<?>[] {Communicator.class},
        (proxy, method, args) -> switch (method.getName()) {
          case "size" -> 1;
          case "rank" -> 0;
          case "backendName" -> "fake";
          case "split" -> throw new UnsupportedOperationException("fake backend: split(color, key) is not available yet");
          case "toString" -> "the fake world";
          default -> throw new AssertionError(method.getName() + " was not expected");
        });
  }
}
