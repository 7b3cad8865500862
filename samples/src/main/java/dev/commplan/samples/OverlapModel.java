package dev.commplan.samples;

import java.util.Locale;
import java.util.Random;
import java.util.SplittableRandom;

/**
 * The model the {@code overlap} sample trains: a stack of {@link #LAYERS} linear layers {@code h' = W h +
 * b}, each {@code width x width}, with mean squared error against a fixed linear teacher (each sample's
 * target is its input shifted by one place, cyclically), trained with plain SGD, data-parallel: every
 * rank takes {@code batch} samples of each global batch. Linear, so that a GPU computes all of it with
 * cuBLAS alone (GEMM, GEMV, GEAM, AXPY, DOT); deep, so that the backward pass produces its gradients in
 * {@link #LAYERS} pieces over time, which is what overlapping their communication needs.
 *
 * <p>{@link #reference} is the one-host model: the whole global batch on one host, no communication.
 */
final class OverlapModel {
  /** Layers; {@link OverlapGrads} declares a weight and a bias gradient for each. */
  static final int LAYERS = 16;
  static final float LR = 0.02f;
  /** The data set holds this many global batches; step s trains on batch {@code s mod DATA_BATCHES}. */
  static final int DATA_BATCHES = 4;
  static final long INIT_SEED = 33L;
  static final long DATA_SEED = 20261205L;
  /** The spread of the initial weights around the identity, times {@code 1 / sqrt(width)}. */
  private static final double INIT_SPREAD = 0.5 / Math.sqrt(LAYERS);

  private OverlapModel() {}

  /**
   * How large one rank's share of the model's work is.
   *
   * @param width every layer's inputs and outputs
   * @param batch samples per rank per step
   */
  record Size(int width, int batch) {
    Size {
      if (width < 1 || batch < 1) {
        throw new IllegalArgumentException("the overlap model needs a width and a batch of at least 1, not width "
            + width + ", batch " + batch);
      }
      if ((long) width * width > Integer.MAX_VALUE || (long) width * batch * DATA_BATCHES > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("width " + width + " and batch " + batch + " make arrays of more than "
            + Integer.MAX_VALUE + " floats (width^2, and width x batch x " + DATA_BATCHES + " for the data)");
      }
    }

    /** Parameters of the whole model. */
    long parameters() {
      return LAYERS * ((long) width * width + width);
    }

    /** Bytes of one weight gradient, the largest field of {@link OverlapGrads}. */
    long weightBytes() {
      return (long) width * width * Float.BYTES;
    }

    /** Bytes the plan reduces each step: every gradient and the loss. */
    long gradientBytes() {
      return (parameters() + 1) * Float.BYTES;
    }

    /** "16 linear layers 64x64 (66,560 parameters, 260.0 KiB of gradients), batch 16 per rank". */
    String describe() {
      return String.format(Locale.ROOT, "%d linear layers %dx%d (%,d parameters, %s of gradients), batch %d per rank",
          LAYERS, width, width, parameters(), bytes(gradientBytes()), batch);
    }
  }

  /** Bytes in KiB, MiB or GiB, one decimal: "260.0 KiB". */
  static String bytes(long bytes) {
    if (bytes < 1024) {
      return bytes + " B";
    }
    String[] units = {"KiB", "MiB", "GiB", "TiB"};
    double value = bytes / 1024.0;
    int unit = 0;
    while (value >= 1024 && unit < units.length - 1) {
      value /= 1024;
      unit++;
    }
    return String.format(Locale.ROOT, "%.1f %s", value, units[unit]);
  }

  /**
   * The model's parameters.
   *
   * @param weights one column-major {@code width x width} array per layer
   * @param biases one array of {@code width} per layer
   */
  record Params(float[][] weights, float[][] biases) {
    /** The largest difference between any parameter here and the same one in {@code other}. */
    double maxDiff(Params other) {
      double worst = 0;
      for (int l = 0; l < weights.length; l++) {
        worst = Math.max(worst, LossTable.maxDiff(weights[l], other.weights[l]));
        worst = Math.max(worst, LossTable.maxDiff(biases[l], other.biases[l]));
      }
      return worst;
    }

    /** Every parameter in one array: layer by layer, the weight, then the bias. */
    float[] packed() {
      int width = biases[0].length;
      float[] packed = new float[weights.length * (width * width + width)];
      int at = 0;
      for (int l = 0; l < weights.length; l++) {
        System.arraycopy(weights[l], 0, packed, at, weights[l].length);
        at += weights[l].length;
        System.arraycopy(biases[l], 0, packed, at, biases[l].length);
        at += biases[l].length;
      }
      return packed;
    }

    /** The inverse of {@link #packed}, reading from {@code packed[from]} on. */
    static Params unpack(float[] packed, int from, int width) {
      float[][] weights = new float[LAYERS][];
      float[][] biases = new float[LAYERS][];
      int at = from;
      for (int l = 0; l < LAYERS; l++) {
        weights[l] = java.util.Arrays.copyOfRange(packed, at, at + width * width);
        at += width * width;
        biases[l] = java.util.Arrays.copyOfRange(packed, at, at + width);
        at += width;
      }
      return new Params(weights, biases);
    }
  }

  /**
   * The initial parameters, the same on every rank (so no broadcast is needed): each weight the identity
   * plus a small Gaussian, whose spread keeps the product of the {@link #LAYERS} layers near the identity;
   * biases zero.
   */
  static Params init(int width) {
    Random random = new Random(INIT_SEED);
    float[][] weights = new float[LAYERS][width * width];
    float[][] biases = new float[LAYERS][width];
    double spread = INIT_SPREAD / Math.sqrt(width);
    for (float[] w : weights) {
      for (int i = 0; i < width; i++) {
        for (int o = 0; o < width; o++) {
          w[i * width + o] = (float) ((i == o ? 1 : 0) + spread * random.nextGaussian());
        }
      }
    }
    return new Params(weights, biases);
  }

  /** The first sample of rank {@code rank}'s share of step {@code step}'s global batch. */
  static int firstSample(int step, int ranks, int rank, int batch) {
    return Math.floorMod(step, DATA_BATCHES) * ranks * batch + rank * batch;
  }

  /**
   * Samples {@code [first, first + count)} of the data set: inputs drawn from N(0, 1) by each sample's own
   * seed (so a rank draws only its own samples), targets the inputs shifted by one place, cyclically.
   *
   * @param x receives the inputs, {@code count x width}
   * @param t receives the targets, {@code count x width}
   */
  static void samples(int width, int first, int count, float[] x, float[] t) {
    for (int j = 0; j < count; j++) {
      SplittableRandom random = new SplittableRandom(DATA_SEED + 0x9E3779B97F4A7C15L * (first + j));
      int row = j * width;
      for (int i = 0; i < width; i++) {
        x[row + i] = (float) random.nextGaussian();
      }
      for (int o = 0; o < width; o++) {
        t[row + o] = x[row + (o + 1) % width];
      }
    }
  }

  /** What training ended with: the global batch's loss at every step, and the parameters. */
  record Trained(float[] losses, Params params) {}

  /**
   * The one-host model: {@code steps} steps on the whole global batch of {@code ranks x size.batch()}
   * samples, on one host, no communication.
   */
  static Trained reference(Size size, int ranks, int steps) {
    return train(size.width(), ranks * size.batch(), p -> firstSample(p, ranks, 0, size.batch()), steps);
  }

  /**
   * What rank {@code rank} of {@code ranks} trains when nothing averages its gradients (the compute alone):
   * {@code steps} steps on one host of that rank's share of each global batch only.
   */
  static Trained referenceAlone(Size size, int ranks, int rank, int steps) {
    return train(size.width(), size.batch(), p -> firstSample(p, ranks, rank, size.batch()), steps);
  }

  /**
   * {@code steps} SGD steps from {@link #init} on one host, on batches of {@code batch} samples: step s on
   * the samples from {@code first(s mod DATA_BATCHES)} on.
   */
  private static Trained train(int width, int batch, java.util.function.IntUnaryOperator first, int steps) {
    Params params = init(width);
    HostLayers model = new HostLayers(params.weights(), params.biases(), batch);
    float[][] x = new float[DATA_BATCHES][batch * width];
    float[][] t = new float[DATA_BATCHES][batch * width];
    for (int p = 0; p < DATA_BATCHES; p++) {
      samples(width, first.applyAsInt(p), batch, x[p], t[p]);
    }
    float[][] dw = new float[LAYERS][width * width];
    float[][] db = new float[LAYERS][width];
    float[] losses = new float[steps];
    for (int step = 0; step < steps; step++) {
      int p = Math.floorMod(step, DATA_BATCHES);
      losses[step] = model.forward(x[p], t[p]);
      for (int l = LAYERS - 1; l >= 0; l--) {
        model.gradients(l, dw[l], db[l]);
        if (l > 0) {
          model.propagate(l);
        }
      }
      for (int l = 0; l < LAYERS; l++) {
        model.step(l, dw[l], db[l], LR);
      }
    }
    return new Trained(losses, model.params());
  }
}
