package dev.commplan.runtime.spi;

import dev.commplan.runtime.Event;
import java.time.Duration;
import java.util.Objects;

/**
 * What every backend's event is built on, as {@link StreamBase} is for streams: {@link #synchronize()} is
 * final, so that an event that completes tells the host-access guard and the agreement check of its stream
 * what a synchronize of that stream up to the event would (the work before it is done), and hands the
 * stream's timeout to the backend's wait.
 *
 * <p>A backend makes one in {@link StreamBase#recordEvent()} with {@code super(stream)} and implements
 * {@link #poll()} and {@link #awaitDone}; {@link StreamBase#waitFor} hands it to the waiting stream's
 * {@link StreamBase#waitForEvent}.
 */
public abstract class EventBase implements Event {
  private final StreamBase stream;
  /** The stream's last guard ticket when the event was recorded: the work it stands for. */
  private long ticket;

  /**
   * Makes the event's shared part, for an event of {@code stream}.
   *
   * @param stream the stream it is recorded on
   */
  protected EventBase(StreamBase stream) {
    this.stream = Objects.requireNonNull(stream, "stream");
  }

  /** Set once, by {@link StreamBase#record()}. */
  final void recordedAt(long ticket) {
    this.ticket = ticket;
  }

  /** The guard ticket the event covers. */
  final long ticket() {
    return ticket;
  }

  /** {@return the stream the event was recorded on} */
  public final StreamBase stream() {
    return stream;
  }

  @Override
  public final boolean isDone() {
    return poll();
  }

  /**
   * Waits for the event ({@link #awaitDone}, within its stream's timeout), then tells the host-access guard
   * and the checks of its stream that the work before it is done, as that stream's synchronize would.
   */
  @Override
  public final void synchronize() {
    awaitDone(stream.timeout());
    stream.completedTo(ticket);
  }

  /**
   * Whether the work before the event has completed (or failed); never blocks.
   *
   * @return true once it has
   */
  protected abstract boolean poll();

  /**
   * Waits until the work before the event has completed. Throws if it failed, if the communicator was
   * aborted or closed, or with {@code CommTimeoutException} once {@code timeout} has passed.
   *
   * @param timeout how long to wait before throwing {@code CommTimeoutException}
   */
  protected abstract void awaitDone(Duration timeout);

  @Override
  public String toString() {
    return getClass().getSimpleName() + "[of " + stream + "]";
  }
}
