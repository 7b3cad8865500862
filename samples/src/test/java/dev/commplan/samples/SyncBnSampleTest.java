package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SyncBnSampleTest {

  private static float[][] wholeBatch(int ranks) {
    List<float[]> all = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      all.addAll(List.of(SyncBnSample.batch(r)));
    }
    return all.toArray(float[][]::new);
  }

  private static void assertClose(float[] expected, float[] actual, String what) {
    for (int c = 0; c < expected.length; c++) {
      assertEquals(expected[c], actual[c], 1e-5 * (1 + Math.abs(expected[c])), what + " channel " + c);
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 4, 5})
  void everyRankGetsTheWholeBatchsMeanAndVariance(int ranks) {
    List<SyncBnSample.RankResult> results;
    try (Cluster cluster = Backends.cluster("local", ranks)) {
      results = cluster.call(comm -> SyncBnSample.runRank(comm));
    }
    SyncBnSample.Moments single = SyncBnSample.moments(wholeBatch(ranks));
    for (int r = 0; r < ranks; r++) {
      SyncBnSample.RankResult result = results.get(r);
      assertEquals(4 + 3 * r, result.count());
      assertClose(single.mean(), result.mean(), "rank " + r + " mean");
      assertClose(single.var(), result.var(), "rank " + r + " var");
      assertArrayEquals(results.get(0).mean(), result.mean());
      assertArrayEquals(results.get(0).var(), result.var());
      if (ranks > 1) {
        // without the gather a rank would only know its own batch, which is far off
        assertTrue(LossTable.maxDiff(result.localMean(), single.mean()) > 0.1, "rank " + r);
      }
    }
  }

  @Test
  void combiningUnevenRandomBatchesIsTheSingleBatchComputation() {
    Random random = new Random(99);
    for (int trial = 0; trial < 20; trial++) {
      int ranks = 1 + random.nextInt(8);
      float[] counts = new float[ranks];
      float[] allMoments = new float[ranks * 2 * SyncBnSample.CHANNELS];
      List<float[]> all = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        float[][] batch = new float[1 + random.nextInt(30)][SyncBnSample.CHANNELS];
        double shift = 10 * random.nextGaussian();
        for (float[] sample : batch) {
          for (int c = 0; c < SyncBnSample.CHANNELS; c++) {
            sample[c] = (float) (shift + c + (0.1 + random.nextDouble() * 3) * random.nextGaussian());
          }
        }
        all.addAll(List.of(batch));
        SyncBnSample.Moments m = SyncBnSample.moments(batch);
        counts[r] = batch.length;
        System.arraycopy(m.mean(), 0, allMoments, r * 2 * SyncBnSample.CHANNELS, SyncBnSample.CHANNELS);
        System.arraycopy(m.var(), 0, allMoments, r * 2 * SyncBnSample.CHANNELS + SyncBnSample.CHANNELS, SyncBnSample.CHANNELS);
      }
      SyncBnSample.Moments single = SyncBnSample.moments(all.toArray(float[][]::new));
      SyncBnSample.Moments combined = SyncBnSample.combine(counts, allMoments);
      assertClose(single.mean(), combined.mean(), "trial " + trial + " mean");
      assertClose(single.var(), combined.var(), "trial " + trial + " var");
    }
  }

  @Test
  void theCommandPrintsLocalAndGlobalStatistics() {
    SampleRun run = SampleRun.main("syncbn");
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("syncbn: 4 ranks, 3 channels, local backend"), out);
    for (int r = 0; r < 4; r++) {
      assertTrue(out.contains("rank " + r + ": " + String.format("%2d", 4 + 3 * r) + " samples, local mean ["), out);
    }
    assertTrue(out.contains("syncbn (every rank):  mean ["), out);
    assertTrue(out.contains("one batch of all 34:  mean ["), out);
    assertTrue(out.contains("max |diff|: mean "), out);
  }
}
