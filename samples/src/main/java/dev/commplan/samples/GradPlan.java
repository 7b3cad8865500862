package dev.commplan.samples;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;

/**
 * The {@code overlap} sample's gradient plan ({@link OverlapGradsPlan}) as its training step sees it: the
 * loss and each layer's gradient buffers by layer number, which the compute writes, and the plan's calls.
 * The buffers are the plan's own, laid out one after another, so that the plan reduces neighbouring
 * fields in one call.
 */
final class GradPlan implements AutoCloseable {
  private final OverlapGradsPlan plan;
  private final F32Buffer[] weights;
  private final F32Buffer[] biases;

  private GradPlan(OverlapGradsPlan plan) {
    this.plan = plan;
    this.weights = new F32Buffer[] {plan.w0(), plan.w1(), plan.w2(), plan.w3(), plan.w4(), plan.w5(), plan.w6(),
        plan.w7(), plan.w8(), plan.w9(), plan.w10(), plan.w11(), plan.w12(), plan.w13(), plan.w14(), plan.w15()};
    this.biases = new F32Buffer[] {plan.b0(), plan.b1(), plan.b2(), plan.b3(), plan.b4(), plan.b5(), plan.b6(),
        plan.b7(), plan.b8(), plan.b9(), plan.b10(), plan.b11(), plan.b12(), plan.b13(), plan.b14(), plan.b15()};
    if (weights.length != OverlapModel.LAYERS) {
      throw new IllegalStateException("OverlapGrads declares " + weights.length + " layers, OverlapModel has "
          + OverlapModel.LAYERS);
    }
  }

  /** Builds the plan for layers of {@code width} on {@code comm}. */
  static GradPlan build(Communicator comm, int width) {
    return new GradPlan(OverlapGradsPlan.builder().width(width).build(comm));
  }

  /** The rank's loss; after the plan ran, the global batch's. */
  F32Buffer loss() {
    return plan.loss();
  }

  /** Layer {@code layer}'s weight gradient, column-major {@code width x width}. */
  F32Buffer weight(int layer) {
    return weights[layer];
  }

  /** Layer {@code layer}'s bias gradient. */
  F32Buffer bias(int layer) {
    return biases[layer];
  }

  /** Enqueues the whole plan, every gradient and the loss, on {@code stream}. */
  void execute(Stream stream) {
    plan.execute(stream);
  }

  /** What the plan issues, for the report. */
  String describe() {
    return plan.describe();
  }

  @Override
  public void close() {
    plan.close();
  }
}
