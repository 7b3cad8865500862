package dev.commplan.samples;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.NcclInterop;
import java.util.ArrayList;
import java.util.List;

/**
 * A rank's compute on its GPU: {@link HostLayers}' arithmetic as cuBLAS calls ({@link Cublas}) on the
 * communicator's stream, on memory the rank allocates through CommPlan ({@code F32Buffer.allocate}) and
 * the plan's gradient buffers, reached by their device pointers ({@link NcclInterop#devicePointer}).
 * Every layer is column-major {@code width x width}; a batch is {@code width x batch}, one sample per
 * column:
 *
 * <pre>
 *   forward   H[l+1] = b 1^T (GEMM, k = 1), then H[l+1] += W H[l] (GEMM)
 *   loss      G = Y - T (GEAM); loss = G . G / (batch width) (DOT into the plan's loss, then SCAL);
 *             G *= 2 / (batch width) (SCAL)
 *   backward  dW = G H[l]^T (GEMM), db = G 1 (GEMV), then G = W^T G (GEMM) for the layer below
 *   update    W -= lr dW, b -= lr db (AXPY)
 * </pre>
 */
final class CublasStepCompute implements StepCompute {
  private final Stream stream;
  private final Cublas blas;
  private final int width;
  private final int batch;
  private final List<F32Buffer> owned = new ArrayList<>();
  private final F32Buffer[] weights;
  private final F32Buffer[] biases;
  private final long[] weightAt;
  private final long[] biasAt;
  /** Inputs and targets of the rank's share of each of the data set's global batches, one after another. */
  private final long inputsAt;
  private final long targetsAt;
  /** Where layer l's input is: the batch's inputs for layer 0, else layer l - 1's output. */
  private final long[] activationAt;
  private final long onesAt;
  private long gradAt;
  private long spareAt;

  /**
   * The compute of rank {@code rank} of {@code ranks} on {@code comm}'s device and stream, from {@link
   * OverlapModel#init}; call on the rank's thread.
   */
  CublasStepCompute(Communicator comm, OverlapModel.Size size, int ranks, int rank) {
    this.stream = comm.stream();
    this.width = size.width();
    this.batch = size.batch();
    int layers = OverlapModel.LAYERS;
    int floats = batch * width;
    try {
      OverlapModel.Params init = OverlapModel.init(width);
      weights = new F32Buffer[layers];
      biases = new F32Buffer[layers];
      weightAt = new long[layers];
      biasAt = new long[layers];
      for (int l = 0; l < layers; l++) {
        weights[l] = allocate(comm, width * width);
        weights[l].copyFrom(init.weights()[l]);
        weightAt[l] = NcclInterop.devicePointer(weights[l]);
        biases[l] = allocate(comm, width);
        biases[l].copyFrom(init.biases()[l]);
        biasAt[l] = NcclInterop.devicePointer(biases[l]);
      }
      F32Buffer inputs = allocate(comm, OverlapModel.DATA_BATCHES * floats);
      F32Buffer targets = allocate(comm, OverlapModel.DATA_BATCHES * floats);
      float[] x = new float[floats];
      float[] t = new float[floats];
      for (int p = 0; p < OverlapModel.DATA_BATCHES; p++) {
        OverlapModel.samples(width, OverlapModel.firstSample(p, ranks, rank, batch), batch, x, t);
        inputs.copyFrom((long) p * floats, x, 0, floats);
        targets.copyFrom((long) p * floats, t, 0, floats);
      }
      inputsAt = NcclInterop.devicePointer(inputs);
      targetsAt = NcclInterop.devicePointer(targets);
      activationAt = new long[layers + 1];
      for (int l = 1; l <= layers; l++) {
        activationAt[l] = NcclInterop.devicePointer(allocate(comm, floats));
      }
      F32Buffer ones = allocate(comm, batch);
      ones.fill(1f);
      onesAt = NcclInterop.devicePointer(ones);
      gradAt = NcclInterop.devicePointer(allocate(comm, floats));
      spareAt = NcclInterop.devicePointer(allocate(comm, floats));
      blas = Cublas.create(NcclInterop.cudaStream(stream));
    } catch (RuntimeException | Error e) {
      closeBuffers();
      throw e;
    }
  }

  private F32Buffer allocate(Communicator comm, int length) {
    F32Buffer buffer = F32Buffer.allocate(comm, length);
    owned.add(buffer);
    return buffer;
  }

  @Override
  public Stream stream() {
    return stream;
  }

  @Override
  public void forward(int step, GradPlan grads) {
    int floats = batch * width;
    long offset = (long) Math.floorMod(step, OverlapModel.DATA_BATCHES) * floats * Float.BYTES;
    activationAt[0] = inputsAt + offset;
    for (int l = 0; l < weights.length; l++) {
      long out = activationAt[l + 1];
      blas.gemm(false, false, width, batch, 1, 1f, biasAt[l], width, onesAt, 1, 0f, out, width);
      blas.gemm(false, false, width, batch, width, 1f, weightAt[l], width, activationAt[l], width, 1f, out, width);
    }
    long loss = NcclInterop.devicePointer(grads.loss());
    blas.geam(width, batch, 1f, activationAt[weights.length], width, -1f, targetsAt + offset, width, gradAt, width);
    blas.dot(floats, gradAt, gradAt, loss);
    blas.scal(1, 1f / floats, loss);
    blas.scal(floats, 2f / floats, gradAt);
  }

  @Override
  public void gradients(int layer, GradPlan grads) {
    blas.gemm(false, true, width, width, batch, 1f, gradAt, width, activationAt[layer], width, 0f,
        NcclInterop.devicePointer(grads.weight(layer)), width);
    blas.gemv(width, batch, 1f, gradAt, width, onesAt, 0f, NcclInterop.devicePointer(grads.bias(layer)));
  }

  @Override
  public void propagate(int layer) {
    blas.gemm(true, false, width, batch, width, 1f, weightAt[layer], width, gradAt, width, 0f, spareAt, width);
    long swap = gradAt;
    gradAt = spareAt;
    spareAt = swap;
  }

  @Override
  public void update(GradPlan grads) {
    for (int l = 0; l < weights.length; l++) {
      blas.axpy(width * width, -OverlapModel.LR, NcclInterop.devicePointer(grads.weight(l)), weightAt[l]);
      blas.axpy(width, -OverlapModel.LR, NcclInterop.devicePointer(grads.bias(l)), biasAt[l]);
    }
  }

  @Override
  public OverlapModel.Params params() {
    float[][] w = new float[weights.length][];
    float[][] b = new float[biases.length][];
    for (int l = 0; l < weights.length; l++) {
      w[l] = weights[l].toArray();
      b[l] = biases[l].toArray();
    }
    return new OverlapModel.Params(w, b);
  }

  @Override
  public void close() {
    try {
      blas.close();
    } finally {
      closeBuffers();
    }
  }

  private void closeBuffers() {
    for (F32Buffer buffer : owned) {
      buffer.close();
    }
    owned.clear();
  }
}
