package dev.commplan.samples;

import dev.commplan.annotations.AllToAll;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Gather;
import dev.commplan.annotations.Recv;
import dev.commplan.annotations.Reduce;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.Scatter;
import dev.commplan.annotations.Send;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.I32Buffer;

/**
 * Every annotation of issue 17 in one plan, for {@link NewCollectivesPlanTest}: Reduce in place and into
 * another field, Gather and Scatter both ways, AllToAll, a wrapped ring and an unwrapped pipeline. Roots
 * are 0 and 1, so the plan needs two ranks or more.
 */
@CommPlan(dims = "n")
class NewCollectives {
  // Step 0: rooted collectives, out of place and in place.
  @Reduce(into = "reduced") @Shape("n") F32Buffer contribution;
  @Shape("n") F32Buffer reduced;
  @Reduce(op = ReduceOp.MAX, root = 1) @Shape("n") I32Buffer maxInPlace;
  @Gather(root = 1, into = "gathered") @Shape("n") F32Buffer part;
  @Shape({"ranks", "n"}) F32Buffer gathered;
  @Scatter(into = "slice") @Shape({"ranks", "n"}) F32Buffer toScatter;
  @Shape("n") F32Buffer slice;

  // Step 1: all-to-all, a ring (wrapped) and a pipeline (unwrapped: rank 0 receives nothing, the last sends nothing).
  @AllToAll(into = "routed", step = 1) @Shape({"ranks", "n"}) F32Buffer tokens;
  @Shape("ranks * n") F32Buffer routed;
  @Send(to = "(rank + 1) % ranks", step = 1) @Shape("n") F32Buffer ringOut;
  @Recv(from = "(rank - 1) % ranks", step = 1) @Shape("n") F32Buffer ringIn;
  @Send(to = "rank + 1", step = 1) @Shape("n") F64Buffer stageOut;
  @Recv(from = "rank - 1", step = 1) @Shape("n") F64Buffer stageIn;

  // Step 2: in-place Gather and Scatter (the field holds every rank's slice).
  @Gather(step = 2) @Shape({"ranks", "n"}) I32Buffer gatherInPlace;
  @Scatter(root = 1, step = 2) @Shape({"ranks", "n"}) I32Buffer scatterInPlace;
}
