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
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

class TpSampleTest {

  static List<TpSample.RankResult> train(MeshShape shape, Tamper tamper) {
    try (Cluster cluster = Backends.cluster("local", shape.ranks())) {
      return cluster.call(comm -> TpSample.trainRank(comm, shape, tamper));
    }
  }

  static MeshShape mesh(String text) {
    return MeshShape.parse(text, TpSample.AXES, "tp");
  }

  /** The report of {@code results}, and whether its check passed. */
  record Printed(boolean ok, String out) {}

  static Printed print(List<TpSample.RankResult> results, MeshShape shape) {
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    boolean ok = TpSample.printAll(results, shape, "local", new PrintStream(bytes, true, StandardCharsets.UTF_8));
    return new Printed(ok, bytes.toString(StandardCharsets.UTF_8));
  }

  @ParameterizedTest(name = "{0}")
  @ValueSource(strings = {"dp=1,tp=8", "dp=2,tp=4", "dp=4,tp=2", "dp=8,tp=1", "tp=4,dp=2", "dp=1,tp=1", "dp=2,tp=2"})
  void everyRankEndsWhereTheOneHostModelEnds(String text) {
    MeshShape shape = mesh(text);
    List<TpSample.RankResult> results = train(shape, Tamper.NONE);
    ParallelMlp.Reference reference = ParallelMlp.reference(TpSample.BLOCKS);
    int tp = shape.size("tp");
    assertEquals(shape.ranks(), results.size());
    for (int r = 0; r < results.size(); r++) {
      TpSample.RankResult result = results.get(r);
      int t = shape.coordinate(r, "tp");
      assertTrue(LossTable.maxDiff(result.losses(), reference.losses()) < ParallelMlp.TOLERANCE,
          "rank " + r + ": " + Arrays.toString(result.losses()) + "\none host " + Arrays.toString(reference.losses()));
      for (int l = 0; l < TpSample.BLOCKS; l++) {
        float[] shard = result.shards()[l];
        assertEquals(ParallelMlp.shardParams(tp), shard.length);
        assertTrue(LossTable.maxDiff(shard, ParallelMlp.shard(reference.params()[l], t, tp)) < ParallelMlp.TOLERANCE,
            "rank " + r + ", block " + l);
        // Training moved every shard of both blocks: the gradients reached block 0 through block 1.
        assertTrue(LossTable.maxDiff(shard, ParallelMlp.shard(ParallelMlp.init(l), t, tp)) > 100 * ParallelMlp.TOLERANCE,
            "rank " + r + ", block " + l);
      }
      // The replicas of one shard agree exactly: they stepped with the same averaged gradient.
      for (int other = 0; other < results.size(); other++) {
        if (shape.coordinate(other, "tp") == t) {
          for (int l = 0; l < TpSample.BLOCKS; l++) {
            assertArrayEquals(result.shards()[l], results.get(other).shards()[l], "ranks " + r + " and " + other);
          }
        }
      }
    }
    assertTrue(print(results, shape).ok());
  }

  /**
   * Every reduction is needed, and the check catches its absence: without the forward all-reduce (tp > 1),
   * the backward one (tp > 1), the dp average (dp > 1), or with SUM for AVG over dp, the sample fails.
   */
  @ParameterizedTest(name = "{0}")
  @EnumSource(value = Tamper.class, names = "NONE", mode = EnumSource.Mode.EXCLUDE)
  void aMissingOrWrongReductionFailsTheCheck(Tamper tamper) {
    MeshShape shape = mesh("dp=2,tp=4");
    Printed printed = print(train(shape, tamper), shape);
    assertFalse(printed.ok(), printed.out());
    assertTrue(printed.out().lines().anyMatch(l -> l.startsWith("rank ") && l.endsWith("  WRONG")), printed.out());
    assertTrue(printed.out().lines().anyMatch(l -> l.matches(
        "check: FAILED, \\d of 8 ranks differ from the one-host model by more than 1e-05 \\(max \\|diff\\| .*\\)")),
        printed.out());
  }

  /** Where an axis has size 1 there is nothing to reduce over it, so leaving its reduction out changes nothing. */
  @ParameterizedTest(name = "{1} on {0}")
  @CsvSource(delimiter = '|', value = {"dp=8,tp=1|TP_FORWARD_NOT_REDUCED", "dp=8,tp=1|TP_BACKWARD_NOT_REDUCED",
      "dp=1,tp=8|DP_NOT_AVERAGED", "dp=1,tp=8|DP_SUMMED"})
  void aReductionOverAnAxisOfOneRankIsNotNeeded(String text, Tamper tamper) {
    MeshShape shape = mesh(text);
    assertTrue(print(train(shape, tamper), shape).ok());
  }

  @Test
  void aRankThatDiffersIsMarkedWrong() {
    MeshShape shape = mesh("dp=2,tp=2");
    List<TpSample.RankResult> results = new java.util.ArrayList<>(train(shape, Tamper.NONE));
    float[][] shards = results.get(3).shards().clone();
    shards[1] = shards[1].clone();
    shards[1][7] += 1e-3f;
    results.set(3, new TpSample.RankResult(results.get(3).losses(), shards));
    Printed printed = print(results, shape);
    assertFalse(printed.ok());
    assertTrue(printed.out().contains("rank 2 (dp 1, tp 0): 2 blocks x 144 parameters (A columns 0..7, B rows 0..7),"
        + " max |diff| vs one host: loss "), printed.out());
    assertTrue(printed.out().lines().anyMatch(l -> l.startsWith("rank 2 (dp 1, tp 0): ") && l.endsWith("  ok")));
    assertTrue(printed.out().lines().anyMatch(l -> l.startsWith("rank 3 (dp 1, tp 1): ") && l.endsWith("  WRONG")));
    assertTrue(printed.out().contains("\ncheck: FAILED, 1 of 4 ranks differ from the one-host model by more than 1e-05"),
        printed.out());
  }

  @Test
  void thePackedResultRoundTrips() {
    TpSample.RankResult result = train(mesh("dp=1,tp=2"), Tamper.NONE).get(1);
    TpSample.RankResult back = TpSample.RankResult.unpack(result.pack(), TpSample.BLOCKS);
    assertArrayEquals(result.losses(), back.losses());
    assertTrue(Arrays.deepEquals(result.shards(), back.shards()));
  }

  @Test
  void theCommandExplainsEachAxisAndPrintsEveryStepAndRank() {
    SampleRun run = SampleRun.main("tp");
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("tp: a Megatron-style MLP, tensor-parallel over tp and data-parallel over dp, on 8 ranks"
        + " as the mesh [dp=2, tp=4], local backend\n"), out);
    assertTrue(out.contains("\nmesh: rank = 4 dp + tp; tp groups [0, 1, 2, 3] [4, 5, 6, 7]; dp groups [0, 4] [1, 5]"
        + " [2, 6] [3, 7]\n"), out);
    assertTrue(out.contains("\nover tp, 4 ranks a group: tp rank t holds columns 4t..4t+3 of A and a (column-parallel),"
        + " the same rows 4t..4t+3 of B (row-parallel), and b whole\n"), out);
    assertTrue(out.contains("\nover dp, 2 replicas: replica d trains on samples 16d..16d+15 of each batch; all-reduce"
        + " AVG over dp of the gradients and the loss (step 2)\n"), out);
    assertTrue(out.contains("\nstep  loss (mesh 2x4)  loss (one host)  |diff|\n"), out);
    for (int step = 0; step < ParallelMlp.STEPS; step++) {
      assertTrue(out.contains("\n" + String.format("%4d", step) + "  "), "step " + step + ": " + out);
    }
    for (int r = 0; r < 8; r++) {
      String start = "rank " + r + " (dp " + r / 4 + ", tp " + r % 4 + "): 2 blocks x 76 parameters (A columns " + 4 * (r % 4)
          + ".." + (4 * (r % 4) + 3) + ", B rows " + 4 * (r % 4) + ".." + (4 * (r % 4) + 3) + "), max |diff| vs one host: loss ";
      assertEquals(1, out.lines().filter(l -> l.startsWith(start) && l.endsWith("  ok")).count(), start + "\n" + out);
    }
    assertEquals(8, out.lines().filter(l -> l.matches("rank \\d \\(dp \\d, tp \\d\\): 2 blocks x 76 parameters .*  ok"))
        .count(), out);
    assertTrue(out.contains("\ncheck: PASS, all 8 ranks' parameters and the 8 loss curves match the one-host model"),
        out);
    SampleRun one = SampleRun.main("tp", "--mesh", "dp=1,tp=1");
    assertEquals(0, one.status(), one.err());
    assertTrue(one.out().contains("\ncheck: PASS, the rank's parameters and its loss curve match the one-host model"),
        one.out());
  }

  /** Every mistake on the command line is one line starting "error:", exit status 2, before any work. */
  @ParameterizedTest(name = "{0}")
  @CsvSource(delimiter = '|', value = {
      "tp --mesh dp=3,tp=2|error: --mesh [dp=3, tp=2]: dp=3 does not divide the batch of 32 samples",
      "tp --mesh dp=1,tp=3|error: --mesh [dp=1, tp=3]: tp=3 does not divide the model's 16 hidden units",
      "tp --mesh dp=2|error: --mesh 'dp=2': tp needs the axes dp, tp, and tp is missing (for example dp=2,tp=2)",
      "tp --mesh dp=2,tp=4,pp=1|error: --mesh 'dp=2,tp=4,pp=1': tp has no axis 'pp'; its axes are dp, tp",
      "tp --mesh dp=2,tp=x|error: --mesh 'dp=2,tp=x': the size of tp is a whole number, not 'x'",
      "tp --mesh dp=0,tp=2|error: --mesh 'dp=0,tp=2': the size of dp must be at least 1, was 0",
      "tp --mesh dp2,tp=2|error: --mesh 'dp2,tp=2': each axis is name=size, as in dp=2,tp=2",
      "tp --mesh dp=2,dp=2|error: --mesh 'dp=2,dp=2': axis 'dp' is given twice",
      "tp --mesh dp=2,tp=2 --mesh dp=1,tp=4|error: --mesh given twice",
      "tp --mesh|error: --mesh needs a value",
      "tp --ranks 4|error: --ranks 4 but the mesh [dp=2, tp=4] has 8 ranks: tp runs on its mesh's ranks",
      "tp --mesh dp=32,tp=16|error: --mesh [dp=32, tp=16] has 512 ranks, more than the local backend runs: at most 256",
      "seed --mesh dp=2,tp=2|error: --mesh is for tp and 3d; seed runs on --ranks N ranks",
      "3d --mesh pp=2,dp=3,tp=1|error: --mesh [pp=2, dp=3, tp=1]: dp=3 does not divide the batch of 32 samples into 4",
      "3d --mesh dp=2,tp=4|error: --mesh 'dp=2,tp=4': 3d needs the axes pp, dp, tp, and pp is missing",
      "3d --backend gloo|error: --backend is local, nccl or mpi, not 'gloo'"})
  void aMistakeIsOneLineAndExitStatus2(String args, String start) {
    SampleRun run = SampleRun.main(args.split(" "));
    assertEquals(2, run.status(), run.err());
    assertEquals("", run.out());
    assertEquals(1, run.err().lines().count(), run.err());
    assertTrue(run.err().startsWith(start), run.err());
    assertTrue(run.err().strip().endsWith("(--help lists the samples and options)"), run.err());
  }

  @Test
  void theHelpListsTheMeshSamples() {
    SampleRun run = SampleRun.main("--help");
    assertEquals(0, run.status());
    assertTrue(run.out().contains("\n    tp        Megatron-style tensor-parallel MLP"), run.out());
    assertTrue(run.out().contains("\n    3d        pipeline x data x tensor parallel"), run.out());
    assertTrue(run.out().contains("--mesh AXES"), run.out());
  }
}
