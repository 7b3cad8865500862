package dev.commplan.spicheck.plans;

import dev.commplan.annotations.AllGather;
import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.Broadcast;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.ReduceScatter;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.I64Buffer;

/**
 * The plan {@code SpiCheckBackendTest} runs: the processor generates {@code ExchangePlan} from it. In a
 * package the module does not export: a generated plan is public and carries {@code @Generated} from
 * {@code java.compiler}, which this module requires statically, so in an exported package {@code
 * -Xlint:exports} would warn that {@code java.compiler} is not required transitively.
 */
@CommPlan(dims = {"n"})
class Exchange {
  @AllReduce(op = ReduceOp.SUM) @Shape("n") I64Buffer sums;
  @AllReduce(op = ReduceOp.AVG) @Shape("n") F64Buffer means;
  @AllGather(into = "gathered", step = 1) @Shape("n") I32Buffer part;
  @Shape({"ranks", "n"}) I32Buffer gathered;
  @ReduceScatter(into = "shard", op = ReduceOp.MAX, step = 1) @Shape({"ranks", "n"}) F64Buffer scores;
  @Shape("n") F64Buffer shard;
  @Broadcast(root = 0, step = 2) @Shape("n") F32Buffer weights;
}
