package dev.commplan.processor.model;

import dev.commplan.model.Collective;

/**
 * One collective of a plan.
 *
 * @param kind which collective
 * @param step its step
 * @param send the send buffer's field name (the annotated field)
 * @param recv the receive buffer's field name; equal to {@code send} in place
 * @param op the {@code ReduceOp} constant's name for AllReduce and ReduceScatter, otherwise null
 * @param root the root for Broadcast, otherwise -1
 */
public record CollectiveSpec(Collective kind, int step, String send, String recv, String op, int root) {
  /** Whether send and receive are the same buffer. */
  public boolean inPlace() {
    return send.equals(recv);
  }
}
