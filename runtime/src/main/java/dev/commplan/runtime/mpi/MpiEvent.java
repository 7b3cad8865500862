package dev.commplan.runtime.mpi;

import dev.commplan.runtime.spi.EventBase;
import java.time.Duration;

/**
 * An event of an {@link MpiStream}: the requests that were in flight on it when the event was recorded (the
 * first {@code target} steps the stream ever started). Done once they have completed; MPI makes progress
 * only inside its calls, so {@link #isDone()} tests them (without waiting) rather than only asking.
 */
final class MpiEvent extends EventBase {
  private final MpiStream origin;
  private final MpiCommunicator comm;
  private final long target;

  MpiEvent(MpiStream origin, long target) {
    super(origin);
    this.origin = origin;
    this.comm = (MpiCommunicator) origin.communicator();
    this.target = target;
  }

  @Override
  protected boolean poll() {
    if (origin.inFlight.reached(target)) {
      return true;
    }
    comm.ensureUsable();
    return origin.inFlight.testTo(target);
  }

  @Override
  protected void awaitDone(Duration timeout) {
    complete(timeout.toNanos());
  }

  /** Completes the requests the event stands for, within {@code waitNanos} (the job is aborted after it). */
  void complete(long waitNanos) {
    if (!origin.inFlight.reached(target)) {
      comm.ensureUsable();
      origin.inFlight.completeTo(target, waitNanos);
    }
  }

  @Override
  public String toString() {
    return "MpiEvent[" + origin + ", its first " + target + " steps]";
  }
}
