package dev.commplan.samples;

import dev.commplan.annotations.Broadcast;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * Start of data-parallel training: every rank draws its own initial weights, and rank 0's replace them
 * all, so that every replica starts from the same point. Generates {@link DdpInitPlan}.
 */
@CommPlan(dims = {"params"})
final class DdpInit {
  /** The flat parameter vector, broadcast in place from rank 0. */
  @Broadcast(root = 0)
  @Shape("params")
  F32Buffer weights;
}
