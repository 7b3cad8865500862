package dev.commplan.runtime.local;

import dev.commplan.runtime.spi.EventBase;
import dev.commplan.runtime.spi.OperationLabel;
import java.time.Duration;

/**
 * An event of a {@link LocalStream}: a place in its queue, done once the stream's worker has run the
 * {@code target} items enqueued before it (stream order), failed once one of them failed.
 */
final class LocalEvent extends EventBase {
  private final LocalStream origin;
  private final long target;

  LocalEvent(LocalStream origin, long target) {
    super(origin);
    this.origin = origin;
    this.target = target;
  }

  @Override
  protected boolean poll() {
    return origin.hasCompleted(target);
  }

  /** {@inheritDoc} Here: as a synchronize of the event's stream, up to the event (its failures, its stall limit). */
  @Override
  protected void awaitDone(Duration timeout) {
    origin.awaitCompleted(target, timeout, "Event.synchronize()");
  }

  /** The item that makes {@code waiting}'s worker wait for this event (at most the timeout) before what follows. */
  LocalStream.Work waitItem(LocalStream waiting) {
    OperationLabel label = OperationLabel.local("wait for an event of " + origin + " (after its operation #"
        + (target - 1) + ")");
    Duration timeout = waiting.communicator() instanceof LocalCommunicator c ? c.cluster().timeout() : Duration.ZERO;
    return new LocalStream.Work() {
      @Override
      public void run(LocalStream stream, long sequence) throws InterruptedException {
        origin.awaitOnWorker(target, timeout, waiting);
      }

      @Override
      public OperationLabel label() {
        return label;
      }

      @Override
      public boolean peersWaitForIt() {
        return false;
      }
    };
  }

  @Override
  public String toString() {
    return "LocalEvent[" + origin + ", after operation #" + (target - 1) + "]";
  }
}
