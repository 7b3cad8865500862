package dev.commplan.samples;

import java.util.Arrays;
import java.util.Random;

/**
 * The model the {@code ddp} and {@code zero} samples train, in plain Java on the CPU: an MLP with 8
 * inputs, 16 tanh hidden units and 1 output, mean squared error, on a fixed synthetic data set.
 *
 * <p>All parameters live in one flat {@code float[]} of {@link #PARAMS} elements, so that one buffer
 * carries them (and their gradient) through a plan:
 *
 * <pre>
 *   [0, 128)    W1  16 x 8, row-major (hidden unit j's weights at 8*j)
 *   [128, 144)  b1  16
 *   [144, 160)  W2  16
 *   [160]       b2  1
 * </pre>
 */
final class Mlp {
  static final int INPUTS = 8;
  static final int HIDDEN = 16;
  static final int PARAMS = HIDDEN * INPUTS + HIDDEN + HIDDEN + 1; // 161

  private static final int W1 = 0;
  private static final int B1 = HIDDEN * INPUTS;
  private static final int W2 = B1 + HIDDEN;
  private static final int B2 = W2 + HIDDEN;

  /** Size of the synthetic data set; step t trains on the global batch that starts at sample t*B. */
  static final int DATA = 512;
  /** The global batch is the smallest multiple of the rank count that is at least this. */
  static final int TARGET_BATCH = 32;

  private static final float[][] X = new float[DATA][INPUTS];
  private static final float[] Y = new float[DATA];

  static {
    // y = sin(u . x) + 0.5 * x0 * x1 with x ~ N(0, 1): smooth, nonlinear, and learnable by 16 tanh units.
    Random random = new Random(20260601L);
    float[] u = new float[INPUTS];
    for (int i = 0; i < INPUTS; i++) {
      u[i] = (float) (random.nextGaussian() / Math.sqrt(INPUTS));
    }
    for (int s = 0; s < DATA; s++) {
      double dot = 0;
      for (int i = 0; i < INPUTS; i++) {
        X[s][i] = (float) random.nextGaussian();
        dot += u[i] * X[s][i];
      }
      Y[s] = (float) (Math.sin(dot) + 0.5 * X[s][0] * X[s][1]);
    }
  }

  private Mlp() {}

  /** The global batch size for {@code ranks} ranks: {@code ranks} times the per-rank batch. */
  static int globalBatch(int ranks) {
    return ranks * perRankBatch(ranks);
  }

  /** Each rank's share of the global batch: the global batch is split evenly. */
  static int perRankBatch(int ranks) {
    return (TARGET_BATCH + ranks - 1) / ranks;
  }

  /** Initial parameters drawn from {@code seed} (scaled Gaussian weights, zero biases). */
  static float[] init(long seed) {
    Random random = new Random(seed);
    float[] p = new float[PARAMS];
    for (int i = 0; i < HIDDEN * INPUTS; i++) {
      p[W1 + i] = (float) (random.nextGaussian() / Math.sqrt(INPUTS));
    }
    for (int j = 0; j < HIDDEN; j++) {
      p[W2 + j] = (float) (random.nextGaussian() / Math.sqrt(HIDDEN));
    }
    return p;
  }

  /**
   * The mean squared error of {@code params} over {@code count} samples starting at sample {@code
   * first} (wrapping around the data set), and its gradient, written into {@code grad} (whose length
   * may exceed {@link #PARAMS}; the rest is zeroed).
   */
  static float lossAndGradient(float[] params, int first, int count, float[] grad) {
    double[] g = new double[PARAMS];
    double[] h = new double[HIDDEN];
    double loss = 0;
    for (int k = 0; k < count; k++) {
      int s = Math.floorMod(first + k, DATA);
      float[] x = X[s];
      // forward
      double out = params[B2];
      for (int j = 0; j < HIDDEN; j++) {
        double z = params[B1 + j];
        for (int i = 0; i < INPUTS; i++) {
          z += params[W1 + j * INPUTS + i] * x[i];
        }
        h[j] = Math.tanh(z);
        out += params[W2 + j] * h[j];
      }
      double err = out - Y[s];
      loss += err * err;
      // backward: d(err^2 / count) / d(out)
      double dOut = 2 * err / count;
      g[B2] += dOut;
      for (int j = 0; j < HIDDEN; j++) {
        g[W2 + j] += dOut * h[j];
        double dz = dOut * params[W2 + j] * (1 - h[j] * h[j]);
        g[B1 + j] += dz;
        for (int i = 0; i < INPUTS; i++) {
          g[W1 + j * INPUTS + i] += dz * x[i];
        }
      }
    }
    Arrays.fill(grad, 0f);
    for (int i = 0; i < PARAMS; i++) {
      grad[i] = (float) g[i];
    }
    return (float) (loss / count);
  }

  /**
   * Adam (Kingma and Ba) over {@code size} parameters: two floats of state, m and v, per parameter.
   * Element-wise, so updating a shard with its own Adam gives exactly the same numbers as updating the
   * whole vector: that is what lets ZeRO-1 split the optimizer state.
   */
  static final class Adam {
    static final float LR = 0.01f;
    static final float BETA1 = 0.9f;
    static final float BETA2 = 0.999f;
    static final float EPS = 1e-8f;

    private final float[] m;
    private final float[] v;
    private int t;

    Adam(int size) {
      m = new float[size];
      v = new float[size];
    }

    /** Floats of optimizer state held: m and v. */
    int stateFloats() {
      return m.length + v.length;
    }

    /** One step: {@code params[i] -= lr * mHat / (sqrt(vHat) + eps)} for every {@code i < size}. */
    void update(float[] params, float[] grad) {
      t++;
      float c1 = (float) (1 - Math.pow(BETA1, t));
      float c2 = (float) (1 - Math.pow(BETA2, t));
      for (int i = 0; i < m.length; i++) {
        m[i] = BETA1 * m[i] + (1 - BETA1) * grad[i];
        v[i] = BETA2 * v[i] + (1 - BETA2) * grad[i] * grad[i];
        float mHat = m[i] / c1;
        float vHat = v[i] / c2;
        params[i] -= LR * mHat / ((float) Math.sqrt(vHat) + EPS);
      }
    }
  }

  /**
   * Training on one process with no communication: the reference the samples compare against. With
   * {@code shards == 1} it is plain full-batch training; with {@code shards > 1} it is what N ranks
   * would do if their gradients were never averaged: each trains its own copy on its slice of the batch
   * (this returns the mean of their losses), which is how the tests show that the plan matters. {@code
   * batch} must be a multiple of {@code shards}.
   */
  static float[] trainWithoutCommunication(int steps, int batch, int shards, long initSeed) {
    int perShard = batch / shards;
    float[][] params = new float[shards][];
    Adam[] adam = new Adam[shards];
    for (int r = 0; r < shards; r++) {
      params[r] = init(initSeed);
      adam[r] = new Adam(PARAMS);
    }
    float[] grad = new float[PARAMS];
    float[] losses = new float[steps];
    for (int step = 0; step < steps; step++) {
      double sum = 0;
      for (int r = 0; r < shards; r++) {
        sum += lossAndGradient(params[r], step * batch + r * perShard, perShard, grad);
        adam[r].update(params[r], grad);
      }
      losses[step] = (float) (sum / shards);
    }
    return losses;
  }
}
