package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Arrays;
import org.junit.jupiter.api.Test;

class OverlapModelTest {
  private static final int WIDTH = 5;
  private static final int BATCH = 3;

  /** The loss of the model on one batch, in double precision, written apart from {@link HostLayers}. */
  private static double loss(OverlapModel.Params p, float[] x, float[] t) {
    double sum = 0;
    for (int j = 0; j < BATCH; j++) {
      double[] h = new double[WIDTH];
      for (int i = 0; i < WIDTH; i++) {
        h[i] = x[j * WIDTH + i];
      }
      for (int l = 0; l < OverlapModel.LAYERS; l++) {
        double[] out = new double[WIDTH];
        for (int o = 0; o < WIDTH; o++) {
          out[o] = p.biases()[l][o];
          for (int i = 0; i < WIDTH; i++) {
            out[o] += p.weights()[l][i * WIDTH + o] * h[i]; // W(o, i), column-major
          }
        }
        h = out;
      }
      for (int o = 0; o < WIDTH; o++) {
        sum += (h[o] - t[j * WIDTH + o]) * (h[o] - t[j * WIDTH + o]);
      }
    }
    return sum / (BATCH * WIDTH);
  }

  /** d loss / d p[at] by central differences, with the step the float array really took. */
  private static double numeric(OverlapModel.Params p, float[] array, int at, float[] x, float[] t) {
    float original = array[at];
    array[at] = original + 1e-2f;
    double up = loss(p, x, t);
    float stepUp = array[at] - original;
    array[at] = original - 1e-2f;
    double down = loss(p, x, t);
    float stepDown = original - array[at];
    array[at] = original;
    return (up - down) / (stepUp + stepDown);
  }

  @Test
  void theHostGradientsAreTheLossesDerivatives() {
    OverlapModel.Params p = OverlapModel.init(WIDTH);
    // Move the biases off zero and the weights off their start, so that every term of the gradient counts.
    for (int l = 0; l < OverlapModel.LAYERS; l++) {
      for (int o = 0; o < WIDTH; o++) {
        p.biases()[l][o] = 0.05f * ((l + o) % 3 - 1);
      }
    }
    float[] x = new float[BATCH * WIDTH];
    float[] t = new float[BATCH * WIDTH];
    OverlapModel.samples(WIDTH, 7, BATCH, x, t);
    HostLayers model = new HostLayers(p.weights(), p.biases(), BATCH);
    assertEquals(loss(p, x, t), model.forward(x, t), 1e-5);
    float[] dw = new float[WIDTH * WIDTH];
    float[] db = new float[WIDTH];
    for (int l = OverlapModel.LAYERS - 1; l >= 0; l--) {
      model.gradients(l, dw, db);
      for (int k = 0; k < dw.length; k += 3) {
        assertEquals(numeric(p, p.weights()[l], k, x, t), dw[k], 2e-4, "dW of layer " + l + " at " + k);
      }
      for (int o = 0; o < WIDTH; o++) {
        assertEquals(numeric(p, p.biases()[l], o, x, t), db[o], 2e-4, "db of layer " + l + " at " + o);
      }
      if (l > 0) {
        model.propagate(l);
      }
    }
  }

  @Test
  void theRanksSharesOfAStepAreItsGlobalBatchInRankOrder() {
    int ranks = 3;
    int batch = 2;
    int step = 5;
    float[] all = new float[ranks * batch * WIDTH];
    float[] targets = new float[ranks * batch * WIDTH];
    OverlapModel.samples(WIDTH, OverlapModel.firstSample(step, ranks, 0, batch), ranks * batch, all, targets);
    for (int r = 0; r < ranks; r++) {
      float[] x = new float[batch * WIDTH];
      float[] t = new float[batch * WIDTH];
      OverlapModel.samples(WIDTH, OverlapModel.firstSample(step, ranks, r, batch), batch, x, t);
      assertArrayEquals(Arrays.copyOfRange(all, r * batch * WIDTH, (r + 1) * batch * WIDTH), x, "rank " + r);
    }
    // The target is the input shifted by one place.
    assertEquals(all[1], targets[0]);
    assertEquals(all[0], targets[WIDTH - 1]);
    // Step s and s + DATA_BATCHES train on the same batch; the next step on another.
    assertEquals(OverlapModel.firstSample(step, ranks, 1, batch),
        OverlapModel.firstSample(step + OverlapModel.DATA_BATCHES, ranks, 1, batch));
    assertTrue(OverlapModel.firstSample(step + 1, ranks, 0, batch) != OverlapModel.firstSample(step, ranks, 0, batch));
  }

  @Test
  void theReferenceLearns() {
    float[] losses = OverlapModel.reference(new OverlapModel.Size(16, 8), 2, 40).losses();
    // Each global batch comes back every DATA_BATCHES steps: compare the same batch, first and last time.
    assertTrue(losses[36] < 0.8 * losses[0], Arrays.toString(losses));
  }

  @Test
  void paramsPackAndUnpack() {
    OverlapModel.Params p = OverlapModel.init(WIDTH);
    float[] packed = p.packed();
    assertEquals(OverlapModel.LAYERS * (WIDTH * WIDTH + WIDTH), packed.length);
    float[] shifted = new float[packed.length + 2];
    System.arraycopy(packed, 0, shifted, 2, packed.length);
    assertEquals(0, OverlapModel.Params.unpack(shifted, 2, WIDTH).maxDiff(p));
    p.biases()[3][1] += 0.25f;
    assertEquals(0.25, OverlapModel.Params.unpack(packed, 0, WIDTH).maxDiff(p), 1e-7);
  }

  @Test
  void sizesSayWhatTheyHoldAndRefuseWhatNoArrayCan() {
    OverlapModel.Size size = new OverlapModel.Size(64, 16);
    assertEquals(16 * (64 * 64 + 64), size.parameters());
    assertEquals(4L * (size.parameters() + 1), size.gradientBytes());
    assertEquals("16 linear layers 64x64 (66,560 parameters, 260.0 KiB of gradients), batch 16 per rank",
        size.describe());
    assertEquals("64.1 MiB", OverlapModel.bytes(new OverlapModel.Size(1024, 1).gradientBytes()));
    assertEquals("512 B", OverlapModel.bytes(512));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new OverlapModel.Size(0, 4)).getMessage()
        .contains("width 0, batch 4"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> new OverlapModel.Size(50_000, 4)).getMessage()
        .contains("more than 2147483647 floats"));
  }
}
