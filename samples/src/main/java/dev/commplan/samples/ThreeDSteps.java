package dev.commplan.samples;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Recv;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.Send;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * The 3d sample's communication on a mesh {@code [pp, dp, tp]}: pipeline stages along pp (one block each),
 * each block split over tp, the whole pipeline replicated over dp. The training loop runs the steps one at
 * a time with {@code executeStep}: in every forward tick step 0 then step 1, in every backward tick step 2
 * then step 3, and step 4 once per training step. {@code batch} is a micro-batch, {@code cols} the hidden
 * units per tp rank. Peers are coordinates along pp: {@code rank + 1} on the last stage and {@code rank -
 * 1} on the first are outside the axis, which means no transfer. Generates {@link ThreeDStepsPlan}.
 */
@CommPlan(axes = {"pp", "dp", "tp"}, dims = {"batch", "width", "cols"})
final class ThreeDSteps {
  /** Step 0, every forward tick: this rank's partial output, summed over the tp group. */
  @AllReduce(op = ReduceOp.SUM, over = "tp", step = 0)
  @Shape({"batch", "width"})
  F32Buffer partialOutput;

  /** Step 1: this stage's output for one micro-batch, to the next stage. */
  @Send(to = "rank + 1", over = "pp", step = 1)
  @Shape({"batch", "width"})
  F32Buffer activationsOut;

  /** Step 1: the previous stage's output, this stage's input. */
  @Recv(from = "rank - 1", over = "pp", step = 1)
  @Shape({"batch", "width"})
  F32Buffer activationsIn;

  /** Step 2, every backward tick: this rank's part of the block's input gradient, summed over the tp group. */
  @AllReduce(op = ReduceOp.SUM, over = "tp", step = 2)
  @Shape({"batch", "width"})
  F32Buffer partialInputGrad;

  /** Step 3: the loss's gradient with respect to this stage's input, to the previous stage. */
  @Send(to = "rank - 1", over = "pp", step = 3)
  @Shape({"batch", "width"})
  F32Buffer gradientsOut;

  /** Step 3: the loss's gradient with respect to this stage's output, from the next stage. */
  @Recv(from = "rank + 1", over = "pp", step = 3)
  @Shape({"batch", "width"})
  F32Buffer gradientsIn;

  /** Step 4: the gradient of this rank's columns of A, averaged over the dp replicas that hold them. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 4)
  @Shape({"width", "cols"})
  F32Buffer gradA;

  /** Step 4: the gradient of this rank's slice of a, averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 4)
  @Shape("cols")
  F32Buffer gradBiasA;

  /** Step 4: the gradient of this rank's rows of B, averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 4)
  @Shape({"cols", "width"})
  F32Buffer gradB;

  /** Step 4: the gradient of b, averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 4)
  @Shape("width")
  F32Buffer gradBiasB;

  /** Step 4: the loss (the last stage's; 0 on the others), averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 4)
  @Shape("1")
  F32Buffer loss;
}
