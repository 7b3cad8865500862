package dev.commplan.samples;

import dev.commplan.annotations.AllGather;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * ZeRO-1, second half of a step: each rank has updated its own shard of the parameters; gathering the
 * shards in rank order gives every rank the whole updated (padded) vector. Generates {@link
 * ZeroParamsPlan}.
 */
@CommPlan(dims = {"shard"})
final class ZeroParams {
  @AllGather(into = "params")
  @Shape("shard")
  F32Buffer paramShard;

  @Shape({"ranks", "shard"})
  F32Buffer params;
}
