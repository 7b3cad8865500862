package dev.commplan.spicheck;

import dev.commplan.runtime.spi.EventBase;
import dev.commplan.runtime.spi.StreamBase;
import java.time.Duration;

/**
 * A rank's stream. Collectives run on the rank's own thread when they are enqueued, so nothing is ever in
 * flight: the wait only says whether the communicator can still be used. What {@code synchronize()} owes
 * its users on top (the host-access guard's ticket, the agreement check) is {@link StreamBase}'s.
 */
final class SpiCheckStream extends StreamBase {
  private final SpiCheckCommunicator owner;

  SpiCheckStream(SpiCheckCommunicator owner, Duration timeout) {
    super(owner, timeout);
    this.owner = owner;
  }

  /** Throws if the communicator was closed or its cluster aborted; there is nothing to wait for. */
  @Override
  protected void awaitIdle(Duration timeout) {
    owner.ensureUsable();
  }

  /** {@inheritDoc} Here: nothing is ever in flight, so the event is done as soon as it is made. */
  @Override
  protected EventBase recordEvent() {
    return new EventBase(this) {
      @Override
      protected boolean poll() {
        return true;
      }

      @Override
      protected void awaitDone(Duration timeout) {
        owner.ensureUsable();
      }
    };
  }

  /** {@inheritDoc} Here: nothing to order, since everything already ran. */
  @Override
  protected void waitForEvent(EventBase event) {}

  /** {@inheritDoc} Here: nothing to release. */
  @Override
  protected void closeStream() {}

  @Override
  public String toString() {
    return "SpiCheckStream[rank " + owner.rank() + "]";
  }
}
