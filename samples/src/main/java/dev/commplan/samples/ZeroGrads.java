package dev.commplan.samples;

import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.ReduceScatter;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * ZeRO-1, first half of a step: the full gradient goes in, and each rank gets back only the average
 * of its own shard, the part of the parameters whose optimizer state it holds. The parameter vector is
 * padded to {@code ranks * shard} elements so that it splits evenly. Generates {@link ZeroGradsPlan}.
 */
@CommPlan(dims = {"shard"})
final class ZeroGrads {
  /** The whole (padded) gradient; rank r receives the average of elements [r*shard, (r+1)*shard). */
  @ReduceScatter(op = ReduceOp.AVG, into = "gradShard")
  @Shape({"ranks", "shard"})
  F32Buffer grads;

  @Shape("shard")
  F32Buffer gradShard;

  /** This rank's mean loss; afterwards, the global batch's. */
  @AllReduce(op = ReduceOp.AVG)
  @Shape("1")
  F32Buffer loss;
}
