package dev.commplan.samples;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * The tp sample's communication on a mesh {@code [dp, tp]}: a {@link ParallelMlp} whose blocks are split
 * Megatron-style over tp and replicated over dp. The training loop runs the steps one at a time with
 * {@code executeStep}, the compute in between: step 0 once per block in the forward pass, step 1 once in
 * the backward pass (block 1's input gradient; block 0's input is the data), step 2 once per training
 * step. {@code batch} is a replica's slice of the batch, {@code cols} the hidden units per tp rank ({@code
 * 16 / tp}). Generates {@link TpStepsPlan}.
 */
@CommPlan(axes = {"dp", "tp"}, dims = {"batch", "width", "cols", "blocks"})
final class TpSteps {
  /** Step 0, forward: this rank's partial output {@code H_t B_t}, summed over the tp group into the block's output (without b). */
  @AllReduce(op = ReduceOp.SUM, over = "tp", step = 0)
  @Shape({"batch", "width"})
  F32Buffer partialOutput;

  /** Step 1, backward: this rank's part {@code dPre_t A_t^T} of the block's input gradient, summed over the tp group. */
  @AllReduce(op = ReduceOp.SUM, over = "tp", step = 1)
  @Shape({"batch", "width"})
  F32Buffer partialInputGrad;

  /** Step 2: the gradient of this rank's columns of A, averaged over the dp replicas that hold them. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 2)
  @Shape({"blocks", "width", "cols"})
  F32Buffer gradA;

  /** Step 2: the gradient of this rank's slice of a, averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 2)
  @Shape({"blocks", "cols"})
  F32Buffer gradBiasA;

  /** Step 2: the gradient of this rank's rows of B, averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 2)
  @Shape({"blocks", "cols", "width"})
  F32Buffer gradB;

  /** Step 2: the gradient of b (whole on every tp rank), averaged over dp. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 2)
  @Shape({"blocks", "width"})
  F32Buffer gradBiasB;

  /** Step 2: this replica's loss, averaged over dp into the whole batch's. */
  @AllReduce(op = ReduceOp.AVG, over = "dp", step = 2)
  @Shape("1")
  F32Buffer loss;
}
