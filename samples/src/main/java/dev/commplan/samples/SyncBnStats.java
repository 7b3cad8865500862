package dev.commplan.samples;

import dev.commplan.annotations.AllGather;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * Synchronized batch norm: each rank shares its batch's size and per-channel mean and variance, and
 * every rank combines all of them into the statistics of the whole batch. Both gathers are in step 0,
 * so they go out in one NCCL group. Generates {@link SyncBnStatsPlan}.
 */
@CommPlan(dims = {"channels"})
final class SyncBnStats {
  /** How many samples this rank's batch has (ranks may differ). */
  @AllGather(into = "counts")
  @Shape("1")
  F32Buffer count;

  @Shape("ranks")
  F32Buffer counts;

  /** This rank's per-channel mean (first {@code channels} elements), then its per-channel variance. */
  @AllGather(into = "allMoments")
  @Shape({"2", "channels"})
  F32Buffer moments;

  @Shape({"ranks", "2", "channels"})
  F32Buffer allMoments;
}
