package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class ZeroSampleTest {

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4})
  void zeroTrainsExactlyLikeDdpWithAnNthOfTheOptimizerState(int ranks) {
    int batch = Mlp.globalBatch(ranks);
    List<ZeroSample.RankResult> zero = ZeroSample.train("local", ranks, batch, DdpSample.STEPS);
    List<DdpSample.RankResult> ddp = DdpSample.train("local", ranks, batch, DdpSample.STEPS);
    int shard = (Mlp.PARAMS + ranks - 1) / ranks;
    for (int r = 0; r < ranks; r++) {
      assertTrue(LossTable.maxDiff(ddp.get(0).losses(), zero.get(r).losses()) < DdpSampleTest.TOLERANCE, "rank " + r);
      assertTrue(LossTable.maxDiff(ddp.get(0).params(), zero.get(r).params()) < 10 * DdpSampleTest.TOLERANCE, "rank " + r);
      assertArrayEquals(zero.get(0).params(), zero.get(r).params(), "rank " + r);
      assertEquals(2 * shard, zero.get(r).optimizerStateFloats(), "rank " + r);
    }
  }

  @Test
  void zeroIsNotWhatUnsynchronizedRanksWouldDo() {
    float[] zero = ZeroSample.train("local", 4, 32, DdpSample.STEPS).get(0).losses();
    float[] unsynchronized = Mlp.trainWithoutCommunication(DdpSample.STEPS, 32, 4, DdpSample.INIT_SEED);
    assertTrue(LossTable.maxDiff(zero, unsynchronized) > 100 * DdpSampleTest.TOLERANCE);
  }

  @Test
  void theShardCoversThePaddedVector() {
    assertEquals(41, ZeroSample.shard(4)); // 161 -> 164
    assertEquals(161, ZeroSample.shard(1));
    assertEquals(54, ZeroSample.shard(3)); // 161 -> 162
    assertEquals(21, ZeroSample.shard(8)); // 161 -> 168
  }

  @Test
  void theCommandPrintsThePaddingTheStateAndTheTable() {
    SampleRun run = SampleRun.main("zero");
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("zero: ZeRO-1 on 4 ranks, local backend"), out);
    assertTrue(out.contains("parameters: 161, padded to 164 = 4 ranks x shard 41 (3 padding zeros at the end)\n"), out);
    assertTrue(out.contains("optimizer state per rank (Adam m and v): zero 82 floats (2 x 41), ddp 322 floats (2 x 161)\n"), out);
    assertTrue(out.contains("step  loss (ddp)  loss (zero)  |diff|\n"), out);
    assertTrue(out.contains("max |diff| over 100 steps: "), out);
  }

  @Test
  void eightRanksPadBySeven() {
    SampleRun run = SampleRun.main("zero", "--ranks", "8");
    assertEquals(0, run.status(), run.err());
    assertTrue(run.out().contains("padded to 168 = 8 ranks x shard 21 (7 padding zeros at the end)"), run.out());
    assertTrue(run.out().contains("zero 42 floats (2 x 21)"), run.out());
  }
}
