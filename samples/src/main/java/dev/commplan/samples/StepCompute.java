package dev.commplan.samples;

import dev.commplan.runtime.Stream;

/**
 * One rank's compute in a training step of {@link OverlapModel}, enqueued in order on {@link #stream()}:
 * host work on the local backend (the stream's worker runs it), host work on the rank's own thread on
 * MPI, cuBLAS on the rank's GPU on NCCL. Each call enqueues its work and returns; the caller synchronizes
 * the stream before it reads anything the work wrote. The gradients go into the plan's buffers, so that
 * the plan reduces them where they were written.
 */
interface StepCompute extends AutoCloseable {
  /** The stream the compute runs on, in order: the rank's own. */
  Stream stream();

  /**
   * The forward pass of the rank's share of step {@code step}'s global batch, its loss (into {@code
   * grads.loss()}) and the loss's gradient with respect to the last layer's output.
   */
  void forward(int step, GradPlan grads);

  /** Layer {@code layer}'s weight and bias gradients, into {@code grads}' buffers of that layer. */
  void gradients(int layer, GradPlan grads);

  /** The loss's gradient passed back through layer {@code layer}, for the layer below (layer > 0). */
  void propagate(int layer);

  /** An SGD step of every layer from {@code grads}' buffers, once the plan has averaged them. */
  void update(GradPlan grads);

  /** The parameters, read after the stream was synchronized. */
  OverlapModel.Params params();

  /** Frees what the compute holds on the device; the stream is the communicator's and stays. */
  @Override
  void close();
}
