package dev.commplan.processor.model;

import dev.commplan.model.Collective;
import dev.commplan.model.Peer;

/**
 * One collective of a plan.
 *
 * @param kind which collective
 * @param step its step
 * @param send the send buffer's field name (the annotated field; for Recv, the buffer it fills)
 * @param recv the receive buffer's field name; equal to {@code send} in place, and for Send and Recv
 * @param op the {@code ReduceOp} constant's name where it takes one ({@link Collective#hasOp()}), otherwise null
 * @param root the root where it takes one ({@link Collective#hasRoot()}), otherwise -1
 * @param peer the peer of Send and Recv, otherwise null
 * @param over the mesh axis it runs over, or {@code ""} for the plan's whole communicator
 */
public record CollectiveSpec(
    Collective kind, int step, String send, String recv, String op, int root, Peer peer, String over) {
  /** Whether send and receive are the same buffer. */
  public boolean inPlace() {
    return send.equals(recv);
  }
}
