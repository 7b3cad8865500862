package dev.commplan.samples;

import java.util.Arrays;

/**
 * The {@code overlap} sample's model ({@link OverlapModel}) computed on the host in {@code float}, for one
 * batch: the forward pass, the loss and its gradient, then layer by layer, last first, the layer's
 * gradients and the gradient passed to the layer below, and an SGD step. It is the compute of a rank on
 * the local and MPI backends, and, on the whole global batch, the one-host model every backend is
 * checked against.
 *
 * <p>Storage is the one cuBLAS uses ({@link CublasStepCompute}), so that both read the same numbers: a
 * weight {@code W} ({@code width x width}, out by in) is column-major, {@code w[i * width + o] = W(o, i)};
 * activations and gradients are one sample after another, {@code h[j * width + i]}. Every inner loop runs
 * over contiguous memory.
 */
final class HostLayers {
  private final int width;
  private final int batch;
  private final float[][] weights;
  private final float[][] biases;
  /** {@code activations[0]} is the input, {@code activations[l + 1]} the output of layer l. */
  private final float[][] activations;
  /** The loss's gradient with respect to the output of the layer being worked back through. */
  private float[] grad;
  private float[] spare;

  /**
   * A model with the given parameters (used, not copied) for batches of {@code batch} samples.
   *
   * @param weights one column-major {@code width x width} array per layer
   * @param biases one array of {@code width} per layer
   */
  HostLayers(float[][] weights, float[][] biases, int batch) {
    this.weights = weights;
    this.biases = biases;
    this.width = biases[0].length;
    this.batch = batch;
    this.activations = new float[weights.length + 1][];
    for (int l = 1; l <= weights.length; l++) {
      activations[l] = new float[batch * width];
    }
    this.grad = new float[batch * width];
    this.spare = new float[batch * width];
  }

  int layers() {
    return weights.length;
  }

  /**
   * The forward pass of {@code x} and the mean squared error against {@code t} (over samples and outputs);
   * keeps the activations and the loss's gradient for the backward pass.
   *
   * @param x the inputs, {@code batch x width}, not changed until the backward pass is done
   * @param t the targets, {@code batch x width}
   * @return the loss
   */
  float forward(float[] x, float[] t) {
    activations[0] = x;
    for (int l = 0; l < weights.length; l++) {
      float[] in = activations[l];
      float[] out = activations[l + 1];
      float[] w = weights[l];
      for (int j = 0; j < batch; j++) {
        int row = j * width;
        System.arraycopy(biases[l], 0, out, row, width);
        for (int i = 0; i < width; i++) {
          float a = in[row + i];
          int column = i * width;
          for (int o = 0; o < width; o++) {
            out[row + o] += a * w[column + o];
          }
        }
      }
    }
    float[] y = activations[weights.length];
    int n = batch * width;
    float scale = 2f / n;
    double sum = 0;
    for (int k = 0; k < n; k++) {
      float diff = y[k] - t[k];
      sum += diff * diff;
      grad[k] = scale * diff;
    }
    return (float) (sum / n);
  }

  /**
   * Layer {@code layer}'s gradients, from the loss's gradient with respect to its output: {@code dW = G
   * H^T} and {@code db = G 1}, summed over the batch's samples.
   *
   * @param dw receives the weight gradient, column-major like the weight
   * @param db receives the bias gradient
   */
  void gradients(int layer, float[] dw, float[] db) {
    Arrays.fill(dw, 0f);
    Arrays.fill(db, 0f);
    float[] in = activations[layer];
    for (int j = 0; j < batch; j++) {
      int row = j * width;
      for (int o = 0; o < width; o++) {
        db[o] += grad[row + o];
      }
      for (int i = 0; i < width; i++) {
        float a = in[row + i];
        int column = i * width;
        for (int o = 0; o < width; o++) {
          dw[column + o] += a * grad[row + o];
        }
      }
    }
  }

  /** Passes the loss's gradient back through layer {@code layer}: {@code G <- W^T G}, for the layer below. */
  void propagate(int layer) {
    float[] w = weights[layer];
    for (int j = 0; j < batch; j++) {
      int row = j * width;
      for (int i = 0; i < width; i++) {
        spare[row + i] = dot(w, i * width, grad, row, width);
      }
    }
    float[] swap = grad;
    grad = spare;
    spare = swap;
  }

  /** One SGD step of layer {@code layer}: {@code W -= lr dW}, {@code b -= lr db}. */
  void step(int layer, float[] dw, float[] db, float lr) {
    float[] w = weights[layer];
    for (int k = 0; k < w.length; k++) {
      w[k] -= lr * dw[k];
    }
    float[] b = biases[layer];
    for (int k = 0; k < b.length; k++) {
      b[k] -= lr * db[k];
    }
  }

  /** A copy of the parameters: the weights, then the biases, layer by layer. */
  OverlapModel.Params params() {
    return new OverlapModel.Params(copy(weights), copy(biases));
  }

  private static float[][] copy(float[][] arrays) {
    float[][] copy = new float[arrays.length][];
    for (int l = 0; l < arrays.length; l++) {
      copy[l] = arrays[l].clone();
    }
    return copy;
  }

  /** {@code a[from..from+n) . b[at..at+n)}, in four independent sums so that the loop does not wait on one. */
  private static float dot(float[] a, int from, float[] b, int at, int n) {
    float s0 = 0;
    float s1 = 0;
    float s2 = 0;
    float s3 = 0;
    int k = 0;
    for (; k + 3 < n; k += 4) {
      s0 += a[from + k] * b[at + k];
      s1 += a[from + k + 1] * b[at + k + 1];
      s2 += a[from + k + 2] * b[at + k + 2];
      s3 += a[from + k + 3] * b[at + k + 3];
    }
    for (; k < n; k++) {
      s0 += a[from + k] * b[at + k];
    }
    return (s0 + s1) + (s2 + s3);
  }
}
