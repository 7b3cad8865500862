package dev.commplan.samples;

import dev.commplan.annotations.AllGather;
import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.ReduceScatter;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * One ZeRO-1 training step as two steps of one plan, with the optimizer update on the host between them
 * ({@code executeStep(0, ...)}, update, {@code executeStep(1, ...)}). The parameter vector is padded to
 * {@code ranks * shard} elements so that it splits evenly. Generates {@link ZeroStepPlan}.
 */
@CommPlan(dims = {"shard"})
final class ZeroStep {
  /** Step 0: the whole (padded) gradient; rank r receives the average of elements [r*shard, (r+1)*shard). */
  @ReduceScatter(op = ReduceOp.AVG, into = "gradShard", step = 0)
  @Shape({"ranks", "shard"})
  F32Buffer grads;

  @Shape("shard")
  F32Buffer gradShard;

  /** Step 0: this rank's mean loss; afterwards, the global batch's. */
  @AllReduce(op = ReduceOp.AVG, step = 0)
  @Shape("1")
  F32Buffer loss;

  /** Step 1: each rank's updated shard, gathered in rank order into the whole parameter vector. */
  @AllGather(into = "params", step = 1)
  @Shape("shard")
  F32Buffer paramShard;

  @Shape({"ranks", "shard"})
  F32Buffer params;
}
