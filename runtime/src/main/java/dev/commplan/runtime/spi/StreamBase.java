package dev.commplan.runtime.spi;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Event;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.CallGate;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
import dev.commplan.runtime.rules.CallRules;
import java.time.Duration;
import java.util.Objects;

/**
 * What every backend's stream is built on, so that none can skip the two things every stream owes its
 * users (as Netty's transports get lifecycle and errors from {@code AbstractChannel}):
 *
 * <ul>
 *   <li>the host-access guard: {@link #synchronize()} is final; it takes the guard's ticket before the
 *       wait and records it only after a wait that returned normally, so a failed synchronize clears
 *       nothing ({@code BufferInFlightException} keeps refusing stale reads);
 *   <li>the timeout: the stream is made with its communicator's timeout ({@code CommOptions}) and hands
 *       it to every {@link #awaitIdle} (which throws {@code CommTimeoutException} when it passes);
 *   <li>one thread at a time: the stream belongs to one {@link AbstractCommunicator} and carries that
 *       communicator's gate, which plans hold while they execute on it (the gate is the communicator's,
 *       so a communicator's streams all share it).
 * </ul>
 *
 * <p>Events ({@link #record()}, {@link #waitFor}) are final here too: they hold the gate, check that the
 * event is of this rank's device and backend, and carry the guard's tickets and the agreement check's
 * comparisons across streams: once a stream that waited for an event is synchronized, or the event itself
 * ({@link EventBase#synchronize()}), the work before the event counts as synchronized on its own stream.
 *
 * <p>A backend author writes the constructor ({@code super(owner, timeout)}), {@link #awaitIdle}, {@link
 * #recordEvent}, {@link #waitForEvent}, {@link #closeStream} and, where it has more to say, {@link
 * #checksFailed} and {@link #runsInOrderOn}; {@link #communicator()} is the owner given here.
 */
public abstract class StreamBase implements Stream {
  static {
    Guards.registerStreams(stream -> stream instanceof StreamBase base ? base.progress : null);
  }

  private final AbstractCommunicator owner;
  private final StreamProgress progress;
  private final Duration timeout;
  /** Where a stream {@code newStream()} made is kept until it is closed; null for any other. */
  private volatile MadeStreams madeBy;
  private volatile boolean closed;

  /**
   * Makes the stream's shared part, for a stream of {@code owner}.
   *
   * @param owner the communicator the stream belongs to; plans executed on the stream hold its "one
   *     thread at a time" gate, which every stream of {@code owner} shares
   * @param timeout how long {@link #awaitIdle} may wait before the stream's work counts as hung (usually
   *     {@code CommOptions.timeout()})
   */
  protected StreamBase(AbstractCommunicator owner, Duration timeout) {
    this.owner = Objects.requireNonNull(owner, "owner");
    this.timeout = Objects.requireNonNull(timeout, "timeout");
    this.progress = new StreamProgress(owner.gate());
  }

  /**
   * Blocks until all work enqueued so far has finished ({@link #awaitIdle}), then tells the host-access
   * guard that every plan step enqueued before the call is done.
   */
  @Override
  public final void synchronize() {
    if (closed) {
      throw new IllegalStateException(this + " is closed: synchronize it (or an event of it) before closing it");
    }
    long ticket = progress.issued();
    awaitIdle(timeout);
    completedTo(ticket); // reached only when the wait returned normally
  }

  /**
   * A check that ran after a synchronize failed on this rank with {@code failure} (ranks that disagree, found
   * by the agreement or execute-order check), which {@link #synchronize()} throws next. The default does
   * nothing more; a backend whose ranks do not otherwise learn of one rank's failure tells them here.
   *
   * @param failure what the synchronize throws
   */
  protected void checksFailed(RuntimeException failure) {}

  /**
   * Waits for the work enqueued so far. Throws if it failed, if the communicator was aborted or closed,
   * or with {@code CommTimeoutException} once {@code timeout} has passed without it finishing (each
   * backend says what "finishing" means: the last CUDA op, the last MPI request, the worker's queue).
   *
   * @param timeout how long to wait before throwing {@code CommTimeoutException}
   */
  protected abstract void awaitIdle(Duration timeout);

  /** {@return the timeout this stream's waits use} */
  protected final Duration timeout() {
    return timeout;
  }

  /**
   * For a stream whose work runs on one thread of the JVM (a backend's worker, as the local backend has):
   * host access from that thread is in stream order, so the guard never refuses it.
   *
   * @param worker the thread that runs this stream's work
   */
  protected final void runsInOrderOn(Thread worker) {
    progress.runsInOrderOn(worker);
  }

  /**
   * Records an event ({@link #recordEvent}) holding the communicator's gate, and gives it the guard's last
   * ticket: once the event is known to be done, so is every plan enqueue before it.
   */
  @Override
  public final Event record() {
    CallGate gate = progress.gate();
    gate.enter("record() of a stream");
    try {
      checkUsable();
      long ticket = progress.issued();
      EventBase event = recordEvent();
      if (event.stream() != this) {
        throw new IllegalStateException(this + ": recordEvent() made an event of another stream, " + event.stream());
      }
      event.recordedAt(ticket);
      return event;
    } finally {
      gate.exit();
    }
  }

  /**
   * Checks that this stream may wait for {@code event} (an event of a stream of this rank on the same device
   * and backend, {@link CallRules#checkSameDevice}), then hands it to the backend ({@link #waitForEvent})
   * holding the communicator's gate. A synchronize of this stream past the call then counts, for the event's
   * stream, as a synchronize up to the event (the guard's tickets, its checks). Waiting for an event of this
   * stream itself changes nothing (stream order).
   */
  @Override
  public final void waitFor(Event event) {
    Objects.requireNonNull(event, "event");
    if (!(event instanceof EventBase e)) {
      throw new IllegalArgumentException(this + " cannot wait for " + event + ": it was not made by a stream of"
          + " this runtime (Stream.record())");
    }
    StreamBase origin = e.stream();
    CallRules.checkSameDevice(this, origin);
    CallGate gate = progress.gate();
    gate.enter("waitFor() of a stream");
    try {
      checkUsable();
      if (origin == this) {
        return;
      }
      waitForEvent(e);
      long covered = e.ticket();
      progress.afterSynchronize(() -> origin.completedTo(covered), progress.issued());
    } finally {
      gate.exit();
    }
  }

  /**
   * Closes a stream that {@link AbstractCommunicator#newStream()} made ({@link #closeStream}), once; does
   * nothing for any other (the communicator's own, a wrapped one).
   */
  @Override
  public final void close() {
    MadeStreams made = madeBy;
    if (made == null || closed) {
      return;
    }
    closed = true;
    progress.closed();
    try {
      closeStream();
    } finally {
      made.remove(this);
    }
  }

  /**
   * Records an event on this stream, for {@link #record()} (called holding the gate, the stream and its
   * communicator open): an event that completes when the work enqueued so far has completed.
   *
   * @return the event, made with this stream ({@code super(this)})
   */
  protected abstract EventBase recordEvent();

  /**
   * Makes the work enqueued on this stream from now on start after {@code event} completes, without the host
   * waiting (for {@link #waitFor}; called holding the gate, with {@code event} checked to be of another stream
   * of this rank, device and backend).
   *
   * @param event the event, of another stream
   */
  protected abstract void waitForEvent(EventBase event);

  /**
   * Releases a stream made by {@link AbstractCommunicator#newStream()}, for {@link #close()} (once): it takes no
   * more work; work already enqueued still runs to its end, as after {@code cudaStreamDestroy}. Also called when
   * the communicator closes or aborts ({@link AbstractCommunicator#closeMadeStreams}).
   */
  protected abstract void closeStream();

  /** {@return whether {@link #close()} closed this stream (only a stream made by {@code newStream()} closes)} */
  protected final boolean isClosedByUser() {
    return closed;
  }

  /** Marks the stream as made by {@link AbstractCommunicator#newStream()}: {@link #close()} closes it. */
  final void madeBy(MadeStreams registry) {
    this.madeBy = registry;
  }

  /**
   * The work of this stream up to guard ticket {@code ticket} is known to have completed (an event of it was
   * synchronized, or a stream that waited for one was): what {@link #synchronize()} records after its wait.
   */
  final void completedTo(long ticket) {
    progress.synchronizedTo(ticket);
    try {
      progress.runChecks(ticket); // the agreement check's comparisons the ticket covers
    } catch (RuntimeException e) {
      checksFailed(e);
      throw e;
    }
  }

  private void checkUsable() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
    owner.ensureUsable();
  }

  /** {@return the communicator given to the constructor, whose gate this stream carries} */
  @Override
  public final Communicator communicator() {
    return owner;
  }
}
