package dev.commplan.samples;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * One data-parallel training step's communication: every rank's gradient (of the mean loss over its
 * slice of the global batch) is averaged in place, which, with equal slices, is the gradient of the
 * mean loss over the whole global batch. The loss rides along in the same step; both are F32 AVG, so
 * the plan may issue them as one NCCL call. Generates {@link DdpGradsPlan}.
 */
@CommPlan(dims = {"params"})
final class DdpGrads {
  @AllReduce(op = ReduceOp.AVG)
  @Shape("params")
  F32Buffer grads;

  /** This rank's mean loss; afterwards, the global batch's mean loss (what the samples print). */
  @AllReduce(op = ReduceOp.AVG)
  @Shape("1")
  F32Buffer loss;
}
