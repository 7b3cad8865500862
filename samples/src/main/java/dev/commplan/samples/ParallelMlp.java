package dev.commplan.samples;

import dev.commplan.runtime.F32Buffer;
import java.util.Random;

/**
 * The model of the {@code tp} and {@code 3d} samples, in plain Java on the CPU: a stack of MLP blocks
 * {@code y = tanh(x A + a) B + b} (x and y of {@link #WIDTH}, {@link #HIDDEN} hidden units), split the way
 * Megatron-LM splits a transformer's MLP over a tensor-parallel group of {@code tp} ranks:
 *
 * <ul>
 *   <li>{@code A} ({@code WIDTH x HIDDEN}) is column-parallel: tp rank t holds the {@code cols = HIDDEN /
 *       tp} columns {@code [t cols, (t + 1) cols)} of A and of the bias a, so it computes those hidden units
 *       {@code H_t = tanh(x A_t + a_t)} from the whole input, without communication;
 *   <li>{@code B} ({@code HIDDEN x WIDTH}) is row-parallel: rank t holds the same rows of B and computes
 *       the partial output {@code H_t B_t}; the block's output is the sum of the partial outputs over the
 *       tp group (an all-reduce) plus b, which every rank holds whole;
 *   <li>backward, the gradient with respect to the block's input is likewise a sum over the group of
 *       each rank's part, {@code dPre_t A_t^T} (the all-reduce of the backward pass); every other gradient
 *       is local to the rank's shard.
 * </ul>
 *
 * <p>The whole model is trained on one host by {@link #reference}: whole weights, whole batches, no
 * communication, in double precision. A shard is one flat {@code float[]} of {@link #shardParams}
 * elements: {@code A_t} ({@code WIDTH x cols}, row-major), {@code a_t} ({@code cols}), {@code B_t}
 * ({@code cols x WIDTH}, row-major), {@code b} ({@code WIDTH}). The whole block is the shard of tp = 1.
 */
final class ParallelMlp {
  static final int WIDTH = 8;
  static final int HIDDEN = 16;
  /** Samples per training step (the global batch, split over the dp replicas). */
  static final int BATCH = 32;
  static final int STEPS = 10;
  static final float LR = 0.1f;
  /** Results must agree this closely with the one-host model. */
  static final double TOLERANCE = 1e-5;
  /** Size of the synthetic data set; step t uses samples t*BATCH .. t*BATCH + BATCH - 1, wrapping. */
  static final int DATA = 128;
  static final long INIT_SEED = 31L;

  private static final float[][] X = new float[DATA][WIDTH];
  private static final float[][] Y = new float[DATA][WIDTH];

  static {
    // y = sin(C x), C a fixed random matrix, x ~ N(0, 1).
    Random random = new Random(20261204L);
    double[][] c = new double[WIDTH][WIDTH];
    for (double[] row : c) {
      for (int i = 0; i < WIDTH; i++) {
        row[i] = random.nextGaussian() / Math.sqrt(WIDTH);
      }
    }
    for (int s = 0; s < DATA; s++) {
      for (int i = 0; i < WIDTH; i++) {
        X[s][i] = (float) random.nextGaussian();
      }
      for (int o = 0; o < WIDTH; o++) {
        double dot = 0;
        for (int i = 0; i < WIDTH; i++) {
          dot += c[o][i] * X[s][i];
        }
        Y[s][o] = (float) Math.sin(dot);
      }
    }
  }

  private ParallelMlp() {}

  /** Hidden units (columns of A, rows of B) per rank of a tp group of {@code tp}. */
  static int cols(int tp) {
    return HIDDEN / tp;
  }

  /** Elements of one rank's shard of one block: A_t, a_t, B_t and b. */
  static int shardParams(int tp) {
    int cols = cols(tp);
    return 2 * WIDTH * cols + cols + WIDTH;
  }

  /** Where a shard's parts start. */
  static int offsetA(int tp) {
    return 0;
  }

  static int offsetBiasA(int tp) {
    return WIDTH * cols(tp);
  }

  static int offsetB(int tp) {
    return WIDTH * cols(tp) + cols(tp);
  }

  static int offsetBiasB(int tp) {
    return 2 * WIDTH * cols(tp) + cols(tp);
  }

  /** Block {@code block}'s whole initial parameters (the shard of tp = 1): Gaussian weights, zero biases. */
  static float[] init(int block) {
    Random random = new Random(INIT_SEED + block);
    float[] p = new float[shardParams(1)];
    for (int i = 0; i < WIDTH * HIDDEN; i++) {
      p[offsetA(1) + i] = (float) (random.nextGaussian() / Math.sqrt(WIDTH));
    }
    for (int i = 0; i < HIDDEN * WIDTH; i++) {
      p[offsetB(1) + i] = (float) (random.nextGaussian() / Math.sqrt(HIDDEN));
    }
    return p;
  }

  /** Rank t's shard of a whole block: columns {@code [t cols, (t + 1) cols)} of A and a, the same rows of B, all of b. */
  static float[] shard(float[] whole, int t, int tp) {
    int cols = cols(tp);
    float[] s = new float[shardParams(tp)];
    for (int i = 0; i < WIDTH; i++) {
      System.arraycopy(whole, offsetA(1) + i * HIDDEN + t * cols, s, offsetA(tp) + i * cols, cols);
    }
    System.arraycopy(whole, offsetBiasA(1) + t * cols, s, offsetBiasA(tp), cols);
    System.arraycopy(whole, offsetB(1) + t * cols * WIDTH, s, offsetB(tp), cols * WIDTH);
    System.arraycopy(whole, offsetBiasB(1), s, offsetBiasB(tp), WIDTH);
    return s;
  }

  /** Data sample {@code k} of training step {@code step}'s batch. */
  private static int sample(int step, int k) {
    return Math.floorMod(step * BATCH + k, DATA);
  }

  /** Rows {@code from .. from + rows - 1} of step {@code step}'s batch: the inputs, {@code rows x WIDTH}. */
  static float[] inputs(int step, int from, int rows) {
    float[] x = new float[rows * WIDTH];
    for (int k = 0; k < rows; k++) {
      System.arraycopy(X[sample(step, from + k)], 0, x, k * WIDTH, WIDTH);
    }
    return x;
  }

  /** The targets of the same rows. */
  static float[] targets(int step, int from, int rows) {
    float[] y = new float[rows * WIDTH];
    for (int k = 0; k < rows; k++) {
      System.arraycopy(Y[sample(step, from + k)], 0, y, k * WIDTH, WIDTH);
    }
    return y;
  }

  /**
   * One rank's part of a block's forward pass on {@code rows} rows of {@code x}: its hidden units {@code
   * H_t = tanh(x A_t + a_t)} (written to {@code hidden}, {@code rows x cols}, for the backward pass), and
   * returned, its partial output {@code H_t B_t} ({@code rows x WIDTH}), without b. Summed over the tp
   * group and plus b ({@link #addBias}), the partial outputs are the block's output.
   */
  static float[] partialForward(float[] p, int tp, float[] x, int rows, float[] hidden) {
    int cols = cols(tp);
    float[] partial = new float[rows * WIDTH];
    for (int k = 0; k < rows; k++) {
      for (int j = 0; j < cols; j++) {
        double z = p[offsetBiasA(tp) + j];
        for (int i = 0; i < WIDTH; i++) {
          z += x[k * WIDTH + i] * p[offsetA(tp) + i * cols + j];
        }
        hidden[k * cols + j] = (float) Math.tanh(z);
      }
      for (int o = 0; o < WIDTH; o++) {
        double z = 0;
        for (int j = 0; j < cols; j++) {
          z += hidden[k * cols + j] * p[offsetB(tp) + j * WIDTH + o];
        }
        partial[k * WIDTH + o] = (float) z;
      }
    }
    return partial;
  }

  /** The block's output from the summed partial outputs: {@code sum + b}, in place. */
  static float[] addBias(float[] p, int tp, float[] sum, int rows) {
    for (int k = 0; k < rows; k++) {
      for (int o = 0; o < WIDTH; o++) {
        sum[k * WIDTH + o] += p[offsetBiasB(tp) + o];
      }
    }
    return sum;
  }

  /**
   * One rank's part of a block's backward pass: given the loss's gradient with respect to the block's
   * output ({@code dOut}, {@code rows x WIDTH}, the same on every rank of the tp group), adds the gradient
   * of this rank's shard to {@code grad} and returns its part of the gradient with respect to the block's
   * input, {@code dPre_t A_t^T}; the sum of the parts over the tp group is that gradient.
   */
  static float[] backward(float[] p, int tp, float[] x, float[] hidden, float[] dOut, int rows, float[] grad) {
    int cols = cols(tp);
    float[] dx = new float[rows * WIDTH];
    for (int k = 0; k < rows; k++) {
      for (int o = 0; o < WIDTH; o++) {
        grad[offsetBiasB(tp) + o] += dOut[k * WIDTH + o];
      }
      for (int j = 0; j < cols; j++) {
        float h = hidden[k * cols + j];
        double dh = 0;
        for (int o = 0; o < WIDTH; o++) {
          grad[offsetB(tp) + j * WIDTH + o] += h * dOut[k * WIDTH + o];
          dh += dOut[k * WIDTH + o] * p[offsetB(tp) + j * WIDTH + o];
        }
        float dPre = (float) (dh * (1 - h * h));
        grad[offsetBiasA(tp) + j] += dPre;
        for (int i = 0; i < WIDTH; i++) {
          grad[offsetA(tp) + i * cols + j] += x[k * WIDTH + i] * dPre;
          dx[k * WIDTH + i] += dPre * p[offsetA(tp) + i * cols + j];
        }
      }
    }
    return dx;
  }

  /** The sum of squared errors of {@code out} against the targets {@code y}. */
  static double squaredError(float[] out, float[] y) {
    double sum = 0;
    for (int i = 0; i < out.length; i++) {
      double e = out[i] - y[i];
      sum += e * e;
    }
    return sum;
  }

  /**
   * The gradient of {@code squaredError / (samples * WIDTH)} with respect to {@code out}: the mean squared
   * error's over a batch of {@code samples}, of which {@code out} holds some rows.
   */
  static float[] lossGradient(float[] out, float[] y, int samples) {
    float[] d = new float[out.length];
    for (int i = 0; i < out.length; i++) {
      d[i] = (float) (2.0 * (out[i] - y[i]) / ((double) samples * WIDTH));
    }
    return d;
  }

  /**
   * Copies the gradients of a rank's shards of {@code grads.length} blocks into the plan's four gradient
   * buffers, block after block: {@code gradA} ({@code blocks x WIDTH x cols}), {@code gradBiasA} ({@code
   * blocks x cols}), {@code gradB} ({@code blocks x cols x WIDTH}), {@code gradBiasB} ({@code blocks x
   * WIDTH}).
   */
  static void toBuffers(float[][] grads, int tp, F32Buffer gradA, F32Buffer gradBiasA, F32Buffer gradB,
      F32Buffer gradBiasB) {
    int cols = cols(tp);
    for (int l = 0; l < grads.length; l++) {
      gradA.copyFrom((long) l * WIDTH * cols, grads[l], offsetA(tp), WIDTH * cols);
      gradBiasA.copyFrom((long) l * cols, grads[l], offsetBiasA(tp), cols);
      gradB.copyFrom((long) l * cols * WIDTH, grads[l], offsetB(tp), cols * WIDTH);
      gradBiasB.copyFrom((long) l * WIDTH, grads[l], offsetBiasB(tp), WIDTH);
    }
  }

  /** The inverse of {@link #toBuffers}: the four buffers' contents back into the shards' gradients. */
  static void fromBuffers(float[][] grads, int tp, F32Buffer gradA, F32Buffer gradBiasA, F32Buffer gradB,
      F32Buffer gradBiasB) {
    int cols = cols(tp);
    for (int l = 0; l < grads.length; l++) {
      gradA.copyTo((long) l * WIDTH * cols, grads[l], offsetA(tp), WIDTH * cols);
      gradBiasA.copyTo((long) l * cols, grads[l], offsetBiasA(tp), cols);
      gradB.copyTo((long) l * cols * WIDTH, grads[l], offsetB(tp), cols * WIDTH);
      gradBiasB.copyTo((long) l * WIDTH, grads[l], offsetBiasB(tp), WIDTH);
    }
  }

  /** {@code p -= LR * grad}. */
  static void sgd(float[] p, float[] grad) {
    for (int i = 0; i < p.length; i++) {
      p[i] -= LR * grad[i];
    }
  }

  /** The one-host model's loss curve and every block's final (whole) parameters. */
  record Reference(float[] losses, float[][] params) {}

  /**
   * The reference: {@code blocks} blocks, whole weights, trained on whole batches of {@link #BATCH} (no
   * shards, no replicas, no micro-batches, no communication), in double precision sample by sample.
   */
  static Reference reference(int blocks) {
    int whole = shardParams(1);
    double[][] p = new double[blocks][whole];
    for (int l = 0; l < blocks; l++) {
      float[] init = init(l);
      for (int i = 0; i < whole; i++) {
        p[l][i] = init[i];
      }
    }
    int a = offsetA(1);
    int ba = offsetBiasA(1);
    int bb = offsetB(1);
    int bo = offsetBiasB(1);
    float[] losses = new float[STEPS];
    double[][] act = new double[blocks + 1][WIDTH]; // act[0] the input, act[l + 1] block l's output
    double[][] hid = new double[blocks][HIDDEN];
    for (int step = 0; step < STEPS; step++) {
      double[][] g = new double[blocks][whole];
      double loss = 0;
      for (int k = 0; k < BATCH; k++) {
        int s = sample(step, k);
        for (int i = 0; i < WIDTH; i++) {
          act[0][i] = X[s][i];
        }
        for (int l = 0; l < blocks; l++) {
          for (int j = 0; j < HIDDEN; j++) {
            double z = p[l][ba + j];
            for (int i = 0; i < WIDTH; i++) {
              z += act[l][i] * p[l][a + i * HIDDEN + j];
            }
            hid[l][j] = Math.tanh(z);
          }
          for (int o = 0; o < WIDTH; o++) {
            double z = p[l][bo + o];
            for (int j = 0; j < HIDDEN; j++) {
              z += hid[l][j] * p[l][bb + j * WIDTH + o];
            }
            act[l + 1][o] = z;
          }
        }
        double[] d = new double[WIDTH];
        for (int o = 0; o < WIDTH; o++) {
          double e = act[blocks][o] - Y[s][o];
          loss += e * e;
          d[o] = 2 * e / (BATCH * WIDTH);
        }
        for (int l = blocks - 1; l >= 0; l--) {
          double[] dIn = new double[WIDTH];
          for (int o = 0; o < WIDTH; o++) {
            g[l][bo + o] += d[o];
          }
          for (int j = 0; j < HIDDEN; j++) {
            double dh = 0;
            for (int o = 0; o < WIDTH; o++) {
              g[l][bb + j * WIDTH + o] += hid[l][j] * d[o];
              dh += d[o] * p[l][bb + j * WIDTH + o];
            }
            double dPre = dh * (1 - hid[l][j] * hid[l][j]);
            g[l][ba + j] += dPre;
            for (int i = 0; i < WIDTH; i++) {
              g[l][a + i * HIDDEN + j] += act[l][i] * dPre;
              dIn[i] += dPre * p[l][a + i * HIDDEN + j];
            }
          }
          d = dIn;
        }
      }
      losses[step] = (float) (loss / (BATCH * WIDTH));
      for (int l = 0; l < blocks; l++) {
        for (int i = 0; i < whole; i++) {
          p[l][i] -= LR * g[l][i];
        }
      }
    }
    float[][] params = new float[blocks][whole];
    for (int l = 0; l < blocks; l++) {
      for (int i = 0; i < whole; i++) {
        params[l][i] = (float) p[l][i];
      }
    }
    return new Reference(losses, params);
  }
}
