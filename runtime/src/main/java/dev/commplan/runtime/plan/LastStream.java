package dev.commplan.runtime.plan;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.rules.StreamOrder;

/**
 * Where a plan's work last went (an execute, step or launch, or a bucket of a round): its stream and guard
 * ticket, so that the plan's next work on another stream is ordered after it ({@link StreamOrder}, the
 * two-stream rule). One per plan, shared by the plan and its rounds; used by the thread that holds the
 * communicator's gate.
 */
final class LastStream {
  private Stream stream;
  private long ticket;

  /** Makes {@code next} wait for the plan's last work where that went to another stream and may still run. */
  void orderBefore(Stream next) {
    StreamOrder.after(stream, ticket, next);
  }

  /** The plan's work was just enqueued on {@code next} under guard ticket {@code ticket}. */
  void enqueued(Stream next, long ticket) {
    this.stream = next;
    this.ticket = ticket;
  }
}
