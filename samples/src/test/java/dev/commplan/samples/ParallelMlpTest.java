package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import java.util.Random;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

/**
 * The tp and 3d samples' model, with no communication at all: the Megatron split (the sum over a tp group
 * of the shards' partial results is the whole block's result, forward and backward), the gradient against
 * finite differences, and the one-host reference against float training on one rank.
 */
class ParallelMlpTest {
  private static final int ROWS = 5;

  private static float[] random(long seed, int n) {
    Random random = new Random(seed);
    float[] v = new float[n];
    for (int i = 0; i < n; i++) {
      v[i] = (float) random.nextGaussian();
    }
    return v;
  }

  /** A whole block with non-zero biases, so that a shard that drops or repeats them shows. */
  private static float[] wholeBlock() {
    float[] p = ParallelMlp.init(3);
    float[] noise = random(9, p.length);
    for (int i = 0; i < p.length; i++) {
      p[i] += 0.1f * noise[i];
    }
    return p;
  }

  @ParameterizedTest(name = "tp = {0}")
  @ValueSource(ints = {1, 2, 4, 8, 16})
  void theShardsSplitAAndBAndEachHoldsAllOfB2(int tp) {
    float[] whole = wholeBlock();
    int cols = ParallelMlp.cols(tp);
    int[] seen = new int[whole.length];
    for (int t = 0; t < tp; t++) {
      float[] s = ParallelMlp.shard(whole, t, tp);
      assertEquals(ParallelMlp.shardParams(tp), s.length);
      for (int i = 0; i < ParallelMlp.WIDTH; i++) {
        for (int j = 0; j < cols; j++) {
          int at = ParallelMlp.offsetA(1) + i * ParallelMlp.HIDDEN + t * cols + j; // A[i][t cols + j]
          assertEquals(whole[at], s[ParallelMlp.offsetA(tp) + i * cols + j]);
          seen[at]++;
          int atB = ParallelMlp.offsetB(1) + (t * cols + j) * ParallelMlp.WIDTH + i; // B[t cols + j][i]
          assertEquals(whole[atB], s[ParallelMlp.offsetB(tp) + j * ParallelMlp.WIDTH + i]);
          seen[atB]++;
        }
      }
      for (int j = 0; j < cols; j++) {
        assertEquals(whole[ParallelMlp.offsetBiasA(1) + t * cols + j], s[ParallelMlp.offsetBiasA(tp) + j]);
        seen[ParallelMlp.offsetBiasA(1) + t * cols + j]++;
      }
      assertArrayEquals(Arrays.copyOfRange(whole, ParallelMlp.offsetBiasB(1), whole.length),
          Arrays.copyOfRange(s, ParallelMlp.offsetBiasB(tp), s.length));
    }
    for (int i = 0; i < ParallelMlp.offsetBiasB(1); i++) {
      assertEquals(1, seen[i], "element " + i + " of A, a and B is in exactly one shard");
    }
  }

  @ParameterizedTest(name = "tp = {0}")
  @ValueSource(ints = {2, 4, 8, 16})
  void theSumOfThePartialOutputsIsTheBlocksOutput(int tp) {
    float[] whole = wholeBlock();
    float[] x = random(5, ROWS * ParallelMlp.WIDTH);
    float[] expected = ParallelMlp.addBias(whole, 1,
        ParallelMlp.partialForward(whole, 1, x, ROWS, new float[ROWS * ParallelMlp.HIDDEN]), ROWS);
    float[] sum = new float[ROWS * ParallelMlp.WIDTH];
    for (int t = 0; t < tp; t++) {
      float[] s = ParallelMlp.shard(whole, t, tp);
      float[] partial = ParallelMlp.partialForward(s, tp, x, ROWS, new float[ROWS * ParallelMlp.cols(tp)]);
      for (int i = 0; i < sum.length; i++) {
        sum[i] += partial[i];
      }
      // One shard alone is not the output: the all-reduce is needed.
      assertTrue(LossTable.maxDiff(ParallelMlp.addBias(s, tp, partial.clone(), ROWS), expected) > 1e-2, "shard " + t);
    }
    ParallelMlp.addBias(ParallelMlp.shard(whole, 0, tp), tp, sum, ROWS);
    assertTrue(LossTable.maxDiff(sum, expected) < 1e-5, Arrays.toString(sum) + "\n" + Arrays.toString(expected));
  }

  @ParameterizedTest(name = "tp = {0}")
  @ValueSource(ints = {2, 4, 8})
  void theShardsGradientsAreSlicesOfTheWholeAndTheirInputGradientsSumToTheWhole(int tp) {
    float[] whole = wholeBlock();
    float[] x = random(5, ROWS * ParallelMlp.WIDTH);
    float[] dOut = random(6, ROWS * ParallelMlp.WIDTH);
    float[] hidden = new float[ROWS * ParallelMlp.HIDDEN];
    ParallelMlp.partialForward(whole, 1, x, ROWS, hidden);
    float[] wholeGrad = new float[whole.length];
    float[] wholeDx = ParallelMlp.backward(whole, 1, x, hidden, dOut, ROWS, wholeGrad);
    float[] dx = new float[wholeDx.length];
    for (int t = 0; t < tp; t++) {
      float[] s = ParallelMlp.shard(whole, t, tp);
      float[] h = new float[ROWS * ParallelMlp.cols(tp)];
      ParallelMlp.partialForward(s, tp, x, ROWS, h);
      float[] grad = new float[s.length];
      float[] part = ParallelMlp.backward(s, tp, x, h, dOut, ROWS, grad);
      for (int i = 0; i < dx.length; i++) {
        dx[i] += part[i];
      }
      assertTrue(LossTable.maxDiff(grad, ParallelMlp.shard(wholeGrad, t, tp)) < 1e-5, "shard " + t);
      assertTrue(LossTable.maxDiff(part, wholeDx) > 1e-2, "one shard's part is not the input gradient");
    }
    assertTrue(LossTable.maxDiff(dx, wholeDx) < 1e-5, Arrays.toString(dx) + "\n" + Arrays.toString(wholeDx));
  }

  /** The loss of two whole blocks on rows 3 .. 3 + ROWS of step 1's batch, as the samples compute it. */
  private static double loss(float[][] blocks) {
    float[] x = ParallelMlp.inputs(1, 3, ROWS);
    for (float[] p : blocks) {
      x = ParallelMlp.addBias(p, 1, ParallelMlp.partialForward(p, 1, x, ROWS, new float[ROWS * ParallelMlp.HIDDEN]),
          ROWS);
    }
    return ParallelMlp.squaredError(x, ParallelMlp.targets(1, 3, ROWS)) / (ROWS * ParallelMlp.WIDTH);
  }

  @Test
  void theGradientMatchesFiniteDifferencesThroughBothBlocks() {
    float[][] blocks = {wholeBlock(), ParallelMlp.init(1)};
    float[][] inputs = new float[2][];
    float[][] hidden = new float[2][ROWS * ParallelMlp.HIDDEN];
    float[] x = ParallelMlp.inputs(1, 3, ROWS);
    for (int l = 0; l < 2; l++) {
      inputs[l] = x;
      x = ParallelMlp.addBias(blocks[l], 1, ParallelMlp.partialForward(blocks[l], 1, x, ROWS, hidden[l]), ROWS);
    }
    float[] d = ParallelMlp.lossGradient(x, ParallelMlp.targets(1, 3, ROWS), ROWS);
    float[][] grad = new float[2][blocks[0].length];
    for (int l = 1; l >= 0; l--) {
      d = ParallelMlp.backward(blocks[l], 1, inputs[l], hidden[l], d, ROWS, grad[l]);
    }
    int n = blocks[0].length;
    // A, a, B and b of both blocks: block 0's gradient needs block 1's input gradient.
    for (int l = 0; l < 2; l++) {
      for (int i : new int[] {0, 37, 127, 128, 140, 144, 200, 271, 272, n - 1}) {
        float saved = blocks[l][i];
        double h = 1e-2;
        blocks[l][i] = saved + (float) h;
        double plus = loss(blocks);
        blocks[l][i] = saved - (float) h;
        double minus = loss(blocks);
        blocks[l][i] = saved;
        double numeric = (plus - minus) / (2 * h);
        assertEquals(numeric, grad[l][i], 2e-4 + 1e-2 * Math.abs(numeric), "block " + l + ", parameter " + i);
      }
    }
  }

  @Test
  void theReferenceMatchesFloatTrainingOnOneRankAndTheLossFalls() {
    ParallelMlp.Reference reference = ParallelMlp.reference(2);
    float[][] p = {ParallelMlp.init(0), ParallelMlp.init(1)};
    for (int step = 0; step < ParallelMlp.STEPS; step++) {
      float[] x = ParallelMlp.inputs(step, 0, ParallelMlp.BATCH);
      float[][] inputs = new float[2][];
      float[][] hidden = new float[2][ParallelMlp.BATCH * ParallelMlp.HIDDEN];
      for (int l = 0; l < 2; l++) {
        inputs[l] = x;
        x = ParallelMlp.addBias(p[l], 1, ParallelMlp.partialForward(p[l], 1, x, ParallelMlp.BATCH, hidden[l]),
            ParallelMlp.BATCH);
      }
      float[] y = ParallelMlp.targets(step, 0, ParallelMlp.BATCH);
      assertEquals(reference.losses()[step], ParallelMlp.squaredError(x, y) / (ParallelMlp.BATCH * ParallelMlp.WIDTH),
          1e-6, "step " + step);
      float[] d = ParallelMlp.lossGradient(x, y, ParallelMlp.BATCH);
      float[][] grad = new float[2][p[0].length];
      for (int l = 1; l >= 0; l--) {
        d = ParallelMlp.backward(p[l], 1, inputs[l], hidden[l], d, ParallelMlp.BATCH, grad[l]);
      }
      for (int l = 0; l < 2; l++) {
        ParallelMlp.sgd(p[l], grad[l]);
      }
    }
    for (int l = 0; l < 2; l++) {
      assertTrue(LossTable.maxDiff(p[l], reference.params()[l]) < ParallelMlp.TOLERANCE, "block " + l);
      assertTrue(LossTable.maxDiff(p[l], ParallelMlp.init(l)) > 100 * ParallelMlp.TOLERANCE, "block " + l + " moved");
    }
    float[] losses = reference.losses();
    assertTrue(losses[ParallelMlp.STEPS - 1] < 0.7 * losses[0], Arrays.toString(losses));
  }
}
