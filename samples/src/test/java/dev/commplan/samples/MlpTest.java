package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

/** The model's math, with no communication at all. */
class MlpTest {

  @Test
  void gradientMatchesFiniteDifferences() {
    float[] params = Mlp.init(3L);
    float[] grad = new float[Mlp.PARAMS];
    Mlp.lossAndGradient(params, 5, 16, grad);
    // every parameter group: W1, b1, W2, b2
    for (int i : new int[] {0, 7, 77, 127, 128, 140, 144, 151, 159, 160}) {
      double h = 1e-2;
      float[] plus = params.clone();
      float[] minus = params.clone();
      plus[i] += (float) h;
      minus[i] -= (float) h;
      float[] ignored = new float[Mlp.PARAMS];
      double numeric = (Mlp.lossAndGradient(plus, 5, 16, ignored) - Mlp.lossAndGradient(minus, 5, 16, ignored))
          / (plus[i] - minus[i]);
      assertEquals(numeric, grad[i], 2e-3 + 1e-2 * Math.abs(numeric), "parameter " + i);
    }
  }

  @Test
  void meanOfEqualSliceGradientsIsTheWholeBatchGradient() {
    // Why AVG is the right reduction: 4 slices of 8 averaged = the gradient of the 32-sample batch.
    float[] params = Mlp.init(3L);
    float[] whole = new float[Mlp.PARAMS];
    float wholeLoss = Mlp.lossAndGradient(params, 64, 32, whole);
    double[] mean = new double[Mlp.PARAMS];
    double meanLoss = 0;
    float[] part = new float[Mlp.PARAMS];
    for (int r = 0; r < 4; r++) {
      meanLoss += Mlp.lossAndGradient(params, 64 + 8 * r, 8, part) / 4.0;
      for (int i = 0; i < Mlp.PARAMS; i++) {
        mean[i] += part[i] / 4.0;
      }
    }
    assertEquals(wholeLoss, meanLoss, 1e-5);
    for (int i = 0; i < Mlp.PARAMS; i++) {
      assertEquals(whole[i], mean[i], 1e-5, "parameter " + i);
    }
  }

  @Test
  void adamOnShardsIsAdamOnTheWhole() {
    float[] whole = Mlp.init(4L);
    float[] grad = Mlp.init(5L);
    float[] left = Arrays.copyOfRange(whole, 0, 100);
    float[] right = Arrays.copyOfRange(whole, 100, Mlp.PARAMS);
    Mlp.Adam all = new Mlp.Adam(Mlp.PARAMS);
    Mlp.Adam a = new Mlp.Adam(100);
    Mlp.Adam b = new Mlp.Adam(Mlp.PARAMS - 100);
    for (int t = 0; t < 3; t++) {
      all.update(whole, grad);
      a.update(left, Arrays.copyOfRange(grad, 0, 100));
      b.update(right, Arrays.copyOfRange(grad, 100, Mlp.PARAMS));
    }
    assertArrayEquals(Arrays.copyOfRange(whole, 0, 100), left);
    assertArrayEquals(Arrays.copyOfRange(whole, 100, Mlp.PARAMS), right);
    assertEquals(2 * Mlp.PARAMS, all.stateFloats());
  }

  @Test
  void trainingLowersTheLoss() {
    float[] losses = Mlp.trainWithoutCommunication(DdpSample.STEPS, 32, 1, DdpSample.INIT_SEED);
    assertTrue(mean(losses, 90, 100) < 0.3 * mean(losses, 0, 10), Arrays.toString(losses));
  }

  @Test
  void theGlobalBatchSplitsEvenlyForAnyRankCount() {
    assertEquals(32, Mlp.globalBatch(1));
    assertEquals(32, Mlp.globalBatch(4));
    assertEquals(33, Mlp.globalBatch(3));
    assertEquals(35, Mlp.globalBatch(7));
    assertEquals(40, Mlp.globalBatch(40));
  }

  static double mean(float[] values, int from, int to) {
    double sum = 0;
    for (int i = from; i < to; i++) {
      sum += values[i];
    }
    return sum / (to - from);
  }
}
