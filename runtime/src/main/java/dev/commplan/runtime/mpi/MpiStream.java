package dev.commplan.runtime.mpi;

import dev.commplan.runtime.spi.EventBase;
import dev.commplan.runtime.spi.StreamBase;
import java.time.Duration;
import java.util.Arrays;

/**
 * A stream of an MPI communicator. MPI has no device queue: a step's non-blocking collectives are started
 * when it is enqueued and are in flight until {@link #synchronize()} (or the next step on this stream, which
 * must see their results) completes them; see {@link MpiCommunicator}. Each stream has its own requests in
 * flight ({@link MpiInFlight}), so work on two streams is in flight side by side.
 *
 * <p>An event ({@link #record()}) stands for the requests in flight on the stream when it was recorded.
 * {@link #waitFor} makes the next enqueue on this stream (or its synchronize) complete them first: the host
 * waits there, since with no device queue nothing else can hold the work back.
 */
final class MpiStream extends StreamBase {
  private final MpiCommunicator owner;
  /** What this stream has in flight. */
  final MpiInFlight inFlight;
  /** The events {@link #waitFor} was given since the last enqueue: completed before the next one starts. */
  private MpiEvent[] waits = new MpiEvent[4];
  private int waitCount;

  /** Its number among its communicator's streams: 0 for the own, 1, 2, ... for those {@code newStream()} made. */
  private final int index;

  MpiStream(MpiCommunicator owner, Duration timeout, int index) {
    super(owner, timeout);
    this.owner = owner;
    this.index = index;
    this.inFlight = new MpiInFlight(owner, owner.flightGroup().recorder("stream " + index));
  }

  /**
   * Completes the events waited for and every collective in flight on this stream, waiting at most the
   * communicator's timeout; on timeout the job is aborted (see {@link MpiCommunicator#timeout()}).
   *
   * @throws MpiException if MPI reported an error for one of them
   */
  @Override
  protected void awaitIdle(Duration timeout) {
    owner.synchronize(this, timeout);
  }

  /** {@inheritDoc} Here: the requests in flight on this stream now. */
  @Override
  protected EventBase recordEvent() {
    return new MpiEvent(this, inFlight.started());
  }

  /** {@inheritDoc} Here: remembered, and completed (the host waits) before this stream's next enqueue. */
  @Override
  protected void waitForEvent(EventBase event) {
    if (waitCount == waits.length) {
      waits = Arrays.copyOf(waits, waitCount * 2);
    }
    waits[waitCount++] = (MpiEvent) event; // checked by StreamBase: an MPI stream's event
  }

  /** Whether its user closed it. */
  boolean closedByUser() {
    return isClosedByUser();
  }

  /** Completes the events {@link #waitFor} was given since the last enqueue, within {@code waitNanos} each. */
  void completeWaits(long waitNanos) {
    for (int i = 0; i < waitCount; i++) {
      MpiEvent event = waits[i];
      waits[i] = null;
      event.complete(waitNanos);
    }
    waitCount = 0;
  }

  /**
   * {@inheritDoc} Here: MPI cannot leave requests behind a stream, so the host completes what is in flight on
   * it first (within the timeout), unless the communicator can no longer complete anything.
   */
  @Override
  protected void closeStream() {
    owner.closing(this);
    owner.flightGroup().detach(inFlight.recorder()); // closed by its user: its operations leave the record
  }

  /**
   * {@inheritDoc} Here the family fails with it, as with an MPI error, so that the ranks that could not see it
   * (the sender of a message that did not pair, the ranks outside the pair) end with a {@code
   * RankAbortedException} that names this rank and what it found.
   */
  @Override
  protected void checksFailed(RuntimeException failure) {
    owner.failFamily(failure);
  }

  @Override
  public String toString() {
    return "MpiStream[" + owner.rankText() + (index == 0 ? "" : ", stream " + index + ", made by newStream()") + "]";
  }
}
