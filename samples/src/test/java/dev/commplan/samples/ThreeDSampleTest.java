package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class ThreeDSampleTest {

  static List<ThreeDSample.RankResult> train(MeshShape shape, Tamper tamper) {
    try (Cluster cluster = Backends.cluster("local", shape.ranks())) {
      return cluster.call(comm -> ThreeDSample.trainRank(comm, shape, tamper));
    }
  }

  static MeshShape mesh(String text) {
    return MeshShape.parse(text, ThreeDSample.AXES, "3d");
  }

  record Printed(boolean ok, String out) {}

  static Printed print(List<ThreeDSample.RankResult> results, MeshShape shape) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    boolean ok = ThreeDSample.printAll(results, shape, "local", new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return new Printed(ok, bytes.toString(StandardCharsets.UTF_8));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"pp=2,dp=2,tp=2", "pp=1,dp=1,tp=1", "tp=2,dp=2,pp=2", "pp=4,dp=1,tp=2", "pp=2,dp=1,tp=4",
      "pp=1,dp=2,tp=4", "pp=2,dp=4,tp=1", "pp=3,dp=1,tp=2"})
  void everyRankEndsWhereTheOneHostModelEnds(String text) {
    MeshShape shape = mesh(text);
    int stages = shape.size("pp");
    int tp = shape.size("tp");
    List<ThreeDSample.RankResult> results = train(shape, Tamper.NONE);
    ParallelMlp.Reference reference = ParallelMlp.reference(stages);
    for (int r = 0; r < results.size(); r++) {
      ThreeDSample.RankResult result = results.get(r);
      int stage = shape.coordinate(r, "pp");
      int t = shape.coordinate(r, "tp");
      if (stage == stages - 1) {
        assertTrue(LossTable.maxDiff(result.losses(), reference.losses()) < ParallelMlp.TOLERANCE,
            "rank " + r + ": " + Arrays.toString(result.losses()) + "\none host " + Arrays.toString(reference.losses()));
      } else {
        assertArrayEquals(new float[ParallelMlp.STEPS], result.losses(), "only the last stage has the loss");
      }
      float[] expected = ParallelMlp.shard(reference.params()[stage], t, tp);
      assertTrue(LossTable.maxDiff(result.shard(), expected) < ParallelMlp.TOLERANCE, "rank " + r);
      // Every stage moved, the first included: the gradients came back through every hop and tp reduction.
      assertTrue(LossTable.maxDiff(result.shard(), ParallelMlp.shard(ParallelMlp.init(stage), t, tp))
          > 100 * ParallelMlp.TOLERANCE, "rank " + r);
    }
    assertTrue(print(results, shape).ok());
  }

  /** On 2x2x2 the model is tp's (2 blocks, the same data): the same loss curve as tp on 2x4, micro-batches and all. */
  @Test
  void onTwoStagesItTrainsWhatTpTrains() {
    float[] threeD = train(mesh("pp=2,dp=2,tp=2"), Tamper.NONE).get(7).losses();
    float[] tp = TpSampleTest.train(TpSampleTest.mesh("dp=2,tp=4"), Tamper.NONE).get(0).losses();
    assertTrue(LossTable.maxDiff(threeD, tp) < ParallelMlp.TOLERANCE, Arrays.toString(threeD) + "\n" + Arrays.toString(tp));
  }

  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Tamper.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
  void aMissingOrWrongReductionFailsTheCheck(Tamper tamper) {
    MeshShape shape = mesh("pp=2,dp=2,tp=2");
    Printed printed = print(train(shape, tamper), shape);
    assertFalse(printed.ok(), printed.out());
    assertTrue(printed.out().lines().anyMatch(l -> l.startsWith("rank ") && l.endsWith("  WRONG")), printed.out());
    assertTrue(printed.out().lines().anyMatch(l -> l.matches(
        "check: FAILED, \\d of 8 ranks differ from the one-host model by more than 1e-05 \\(max \\|diff\\| .*\\)")),
        printed.out());
  }

  @Test
  void thePackedResultRoundTrips() {
    ThreeDSample.RankResult result = train(mesh("pp=2,dp=1,tp=1"), Tamper.NONE).get(1);
    ThreeDSample.RankResult back = ThreeDSample.RankResult.unpack(result.pack());
    assertArrayEquals(result.losses(), back.losses());
    assertArrayEquals(result.shard(), back.shard());
  }

  @Test
  void theCommandExplainsEachAxisAndPrintsEveryStepAndRank() {
    SampleRun run = SampleRun.main("3d");
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("3d: pipeline x data x tensor parallel training of an MLP on 8 ranks as the mesh [pp=2,"
        + " dp=2, tp=2], local backend\n"), out);
    assertTrue(out.contains("\nmesh: rank = 4 pp + 2 dp + tp; pp groups [0, 4] [1, 5] [2, 6] [3, 7]; dp groups [0, 2]"
        + " [1, 3] [4, 6] [5, 7]; tp groups [0, 1] [2, 3] [4, 5] [6, 7]\n"), out);
    assertTrue(out.contains("\nover pp, 2 stages: stage s holds block s; GPipe, a replica's 16 samples as 4"
        + " micro-batches of 4: forward 5 ticks"), out);
    assertTrue(out.contains("\nover tp, 2 ranks a group: tp rank t holds columns 8t..8t+7 of its block's A and a"), out);
    assertTrue(out.contains("\nover dp, 2 replicas: replica d trains on samples 16d..16d+15 of each batch"), out);
    assertTrue(out.contains("\nmax |diff| over 10 steps, on every rank that has the loss (4 of 8): "), out);
    for (int r = 0; r < 8; r++) {
      int t = r % 2;
      String start = "rank " + r + " (pp " + r / 4 + ", dp " + (r / 2) % 2 + ", tp " + t + "): block " + r / 4
          + ", 144 parameters (A columns " + 8 * t + ".." + (8 * t + 7) + ", B rows " + 8 * t + ".." + (8 * t + 7)
          + "), max |diff| vs one host: " + (r >= 4 ? "loss " : "parameters ");
      assertEquals(1, out.lines().filter(l -> l.startsWith(start) && l.endsWith("  ok")).count(), start + "\n" + out);
    }
    assertTrue(out.contains("\ncheck: PASS, all 8 ranks' parameters and the 4 loss curves match the one-host model"),
        out);
    SampleRun one = SampleRun.main("3d", "--mesh", "pp=1,dp=1,tp=1");
    assertEquals(0, one.status(), one.err());
    assertTrue(one.out().contains("\ncheck: PASS, the rank's parameters and its loss curve match the one-host model"),
        one.out());
  }
}
