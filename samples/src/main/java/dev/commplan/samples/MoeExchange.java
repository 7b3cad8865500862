package dev.commplan.samples;

import dev.commplan.annotations.AllToAll;
import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;

/**
 * A mixture-of-experts layer's token exchange, expert e on rank e. Step 0 dispatches: slice e of
 * {@code dispatch} holds the tokens this rank routes to expert e, and after the all-to-all slice i of
 * {@code expertIn} holds the tokens rank i routed to this rank's expert. Step 1 combines: the expert's
 * outputs go back the same way. AllToAll slices are equal, so every slice has room for {@code capacity}
 * tokens: a rank sends at most that many to one expert (the rest are dropped) and the unused rows are
 * padding; the counts ride along in step 0 so that the expert computes only the real tokens. Generates
 * {@link MoeExchangePlan}.
 */
@CommPlan(dims = {"capacity", "hidden"})
final class MoeExchange {
  /** Step 0: {@code capacity} token rows per expert, in expert order. */
  @AllToAll(into = "expertIn", step = 0)
  @Shape({"ranks", "capacity", "hidden"})
  F32Buffer dispatch;

  /** Step 0: {@code capacity} token rows from each rank, in rank order, for this rank's expert. */
  @Shape({"ranks", "capacity", "hidden"})
  F32Buffer expertIn;

  /** Step 0: how many of each slice's rows of {@code dispatch} are tokens (the rest is padding). */
  @AllToAll(into = "expertCounts", step = 0)
  @Shape("ranks")
  I32Buffer dispatchCounts;

  /** Step 0: how many tokens each rank sent to this rank's expert. */
  @Shape("ranks")
  I32Buffer expertCounts;

  /** Step 1: the expert's outputs, laid out as {@code expertIn}: slice i goes back to rank i. */
  @AllToAll(into = "combined", step = 1)
  @Shape({"ranks", "capacity", "hidden"})
  F32Buffer expertOut;

  /** Step 1: the experts' outputs for this rank's tokens, laid out as {@code dispatch}. */
  @Shape({"ranks", "capacity", "hidden"})
  F32Buffer combined;
}
