package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.nccl.NcclBackend;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The samples but seed on the NCCL backend, each with its own check (check: PASS, or its max |diff| under
 * the tolerance), at the world sizes of {@code -D}{@value #RANKS_PROPERTY} (as the runtime's GPU tests read
 * it: {@code 2,4,8} runs several ranks on one GPU with NCCL 2.30 and {@code -Dcommplan.nccl.multiRankGpu=true});
 * by default as many ranks as GPUs, up to 4. ddp, zero, syncbn, pipeline and moe run on that many ranks; tp
 * on its meshes (1×1, 1×2, 2×2, and 2×4 and 4×2 on 8), 3d on 1×1×1, 2×1×1, 2×1×2 and 2×2×2. A size this
 * machine cannot run is skipped saying why; without a GPU the class is skipped.
 */
@Tag("gpu")
@ExtendWith(NeedsGpu.class)
class NcclSamplesTest {
  /** The runtime's GPU tests' property ({@code GpuRanks.PROPERTY} there): the world sizes, a comma list. */
  static final String RANKS_PROPERTY = "commplan.gpu.ranks";

  static List<Integer> ranks() {
    String text = System.getProperty(RANKS_PROPERTY, "");
    if (text.isBlank()) {
      return List.of(Math.min(4, NcclBackend.deviceCount()));
    }
    return Stream.of(text.split(",")).map(String::strip).map(Integer::valueOf).toList();
  }

  /** tp's meshes of each size: 1×1, 1×2, 2×2, and 2×4 and 4×2 (its batch and hidden units take powers of 2). */
  static Stream<String> tpMeshes() {
    List<String> meshes = new ArrayList<>();
    for (int n : ranks()) {
      meshes.addAll(switch (n) {
        case 1 -> List.of("dp=1,tp=1");
        case 2 -> List.of("dp=1,tp=2");
        case 4 -> List.of("dp=2,tp=2");
        case 8 -> List.of("dp=2,tp=4", "dp=4,tp=2");
        default -> List.of(NONE + n); // skipped, saying why: a test with no arguments would fail
      });
    }
    return meshes.stream();
  }

  /** 3d's meshes of each size: 1×1×1, 2×1×1, 2×1×2, 2×2×2. */
  static Stream<String> threeDMeshes() {
    return ranks().stream().map(n -> switch (n) {
      case 1 -> "pp=1,dp=1,tp=1";
      case 2 -> "pp=2,dp=1,tp=1";
      case 4 -> "pp=2,dp=1,tp=2";
      case 8 -> "pp=2,dp=2,tp=2";
      default -> NONE + n;
    });
  }

  /** What the mesh lists hold for a size with no mesh of that sample: skipped, saying so. */
  private static final String NONE = "no mesh of this sample has ";

  private static void assumeMesh(String mesh) {
    Assumptions.assumeFalse(mesh.startsWith(NONE), () -> mesh + " ranks (it takes 1, 2, 4 or 8)");
  }

  private static void assumeRunnable(int ranks) {
    String why = NcclBackend.unavailableReason(ranks);
    Assumptions.assumeTrue(why == null, () -> ranks + " ranks skipped: " + why);
  }

  private static int ranksOf(String mesh) {
    return Stream.of(mesh.split(",")).mapToInt(a -> Integer.parseInt(a.substring(a.indexOf('=') + 1))).reduce(1,
        (a, b) -> a * b);
  }

  private static double maxDiff(String out) {
    Matcher m = Pattern.compile("max \\|diff\\| over \\d+ steps: (\\S+)\n").matcher(out);
    assertTrue(m.find(), out);
    return Double.parseDouble(m.group(1));
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void ddp(int ranks, @TempDir Path dir) {
    assumeRunnable(ranks);
    SampleRun run = SampleRun.main("ddp", "--backend", "nccl", "--ranks", Integer.toString(ranks), "--out",
        dir.resolve("ddp.svg").toString());
    assertEquals(0, run.status(), run.err());
    assertTrue(run.out().contains(", nccl backend\n"), run.out());
    assertTrue(maxDiff(run.out()) < DdpSampleTest.TOLERANCE, run.out());
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void zero(int ranks) {
    assumeRunnable(ranks);
    SampleRun run = SampleRun.main("zero", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.err());
    assertTrue(maxDiff(run.out()) < DdpSampleTest.TOLERANCE, run.out());
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void syncbn(int ranks) {
    assumeRunnable(ranks);
    SampleRun run = SampleRun.main("syncbn", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.err());
    Matcher m = Pattern.compile("max \\|diff\\|: mean (\\S+), var (\\S+)\n").matcher(run.out());
    assertTrue(m.find(), run.out());
    assertTrue(Double.parseDouble(m.group(1)) < 1e-5 && Double.parseDouble(m.group(2)) < 1e-4, run.out());
  }

  /** Send and receive between neighbouring ranks; on one rank the one stage sends and receives nothing. */
  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void pipeline(int ranks) {
    assumeRunnable(ranks);
    SampleRun run = SampleRun.main("pipeline", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend; "), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void moe(int ranks) {
    assumeRunnable(ranks);
    SampleRun run = SampleRun.main("moe", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend; "), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }

  @ParameterizedTest(name = "--mesh {0}")
  @MethodSource("tpMeshes")
  void tp(String mesh) {
    assumeMesh(mesh);
    assumeRunnable(ranksOf(mesh));
    SampleRun run = SampleRun.main("tp", "--backend", "nccl", "--mesh", mesh);
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend\n"), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }

  @ParameterizedTest(name = "--mesh {0}")
  @MethodSource("threeDMeshes")
  void threeD(String mesh) {
    assumeMesh(mesh);
    assumeRunnable(ranksOf(mesh));
    SampleRun run = SampleRun.main("3d", "--backend", "nccl", "--mesh", mesh);
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend\n"), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }
}
