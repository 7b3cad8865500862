package dev.commplan.samples;

import dev.commplan.annotations.AllGather;
import dev.commplan.annotations.AllReduce;
import dev.commplan.annotations.Broadcast;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.annotations.ReduceScatter;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * The four textbook collectives as one plan: all four are independent, so they share step 0 and go out
 * in one NCCL group. The processor generates {@link SeedPlan} from this class.
 */
@CommPlan
final class Seed {
  /** Each rank contributes one number; every rank ends up with the sum (in place). */
  @AllReduce(op = ReduceOp.SUM)
  @Shape("1")
  F32Buffer total;

  /** Each rank's one value, gathered in rank order into {@link #gathered}. */
  @AllGather(into = "gathered")
  @Shape("1")
  F32Buffer mine;

  @Shape("ranks")
  F32Buffer gathered;

  /** One value per rank on every rank; rank r keeps the sum of everybody's r-th value in {@link #slice}. */
  @ReduceScatter(op = ReduceOp.SUM, into = "slice")
  @Shape("ranks")
  F32Buffer contributions;

  @Shape("1")
  F32Buffer slice;

  /** Root 0's values replace every other rank's (in place). */
  @Broadcast(root = 0)
  @Shape("5")
  F32Buffer params;
}
