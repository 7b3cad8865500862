package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class DdpSampleTest {
  /** Float rounding differs with the summation order (4 partial means, then their average), no more. */
  static final double TOLERANCE = 1e-5;

  private static float[] losses(int ranks, int batch) {
    return DdpSample.train("local", ranks, batch, DdpSample.STEPS).get(0).losses();
  }

  @Test
  void fourRanksMatchOneRankOnTheSameGlobalBatch() {
    float[] one = losses(1, 32);
    float[] four = losses(4, 32);
    assertTrue(LossTable.maxDiff(one, four) < TOLERANCE, "1 rank " + Arrays.toString(one) + "\n4 ranks " + Arrays.toString(four));
    assertTrue(MlpTest.mean(four, 90, 100) < 0.3 * MlpTest.mean(four, 0, 10), Arrays.toString(four));
  }

  @Test
  void theCurveIsPlainFullBatchTrainingAndNotWhatUnsynchronizedRanksWouldDo() {
    float[] four = losses(4, 32);
    float[] reference = Mlp.trainWithoutCommunication(DdpSample.STEPS, 32, 1, DdpSample.INIT_SEED);
    assertTrue(LossTable.maxDiff(reference, four) < TOLERANCE);
    // Four replicas that never average their gradients: the tolerance above could tell them apart.
    float[] unsynchronized = Mlp.trainWithoutCommunication(DdpSample.STEPS, 32, 4, DdpSample.INIT_SEED);
    assertTrue(LossTable.maxDiff(reference, unsynchronized) > 100 * TOLERANCE,
        "max diff " + LossTable.maxDiff(reference, unsynchronized));
  }

  @ParameterizedTest
  @ValueSource(ints = {2, 3, 4})
  void everyRankEndsWithTheSameParameters(int ranks) {
    List<DdpSample.RankResult> results = DdpSample.train("local", ranks, Mlp.globalBatch(ranks), 20);
    for (int r = 1; r < ranks; r++) {
      assertArrayEquals(results.get(0).params(), results.get(r).params(), "rank " + r);
      assertArrayEquals(results.get(0).losses(), results.get(r).losses(), "rank " + r);
    }
  }

  @Test
  void theBroadcastStartsEveryRankFromRankZerosWeights() {
    // Rank 1 draws other weights than rank 0 (so a missing broadcast would show), yet the first loss is
    // the loss of rank 0's weights on the whole batch.
    assertTrue(!Arrays.equals(Mlp.init(DdpSample.INIT_SEED), Mlp.init(DdpSample.INIT_SEED + 1)));
    float first = Mlp.lossAndGradient(Mlp.init(DdpSample.INIT_SEED), 0, 32, new float[Mlp.PARAMS]);
    assertEquals(first, losses(4, 32)[0], 1e-6);
  }

  @Test
  void theCommandPrintsTheTableAndWritesTheSvg(@TempDir Path dir) throws IOException {
    Path svg = dir.resolve("curves/loss.svg");
    SampleRun run = SampleRun.main("ddp", "--out", svg.toString());
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("ddp: MLP 8-16-1 (161 parameters), Adam, 100 steps, global batch 32 = 4 ranks x 8, local backend\n"), out);
    assertTrue(out.contains("step  loss (1 rank)  loss (4 ranks)  |diff|\n"), out);
    assertTrue(out.matches("(?s).*\n   0       1\\.\\d{6}        1\\.\\d{6}  .*"), out);
    assertTrue(out.contains("\n  99  "), out);
    assertTrue(out.contains("max |diff| over 100 steps: "), out);
    assertTrue(out.endsWith("loss curve: " + svg.toAbsolutePath() + "\n"), out);
    String text = Files.readString(svg, StandardCharsets.UTF_8);
    assertTrue(text.startsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""), text);
    assertTrue(text.contains(">1 rank</text>") && text.contains(">4 ranks</text>"), text);
    assertEquals(2 + 1, text.split("<polyline").length - 1, text); // two curves and the axes
  }

  @Test
  void anyRankCountGetsAnEvenSplit() {
    SampleRun run = SampleRun.main("ddp", "--ranks", "3", "--out", Path.of(System.getProperty("java.io.tmpdir"), "ddp-3.svg").toString());
    assertEquals(0, run.status(), run.err());
    assertTrue(run.out().contains("global batch 33 = 3 ranks x 11"), run.out());
  }
}
