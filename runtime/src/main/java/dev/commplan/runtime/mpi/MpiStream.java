package dev.commplan.runtime.mpi;

import dev.commplan.runtime.spi.StreamBase;
import java.time.Duration;

/**
 * An MPI communicator's stream. MPI has no device queue: a step's non-blocking collectives are started
 * when it is enqueued and are in flight until {@link #synchronize()} (or the next step, which must see
 * their results) completes them; see {@link MpiCommunicator}.
 */
final class MpiStream extends StreamBase {
  private final MpiCommunicator owner;

  MpiStream(MpiCommunicator owner, Duration timeout) {
    super(owner, timeout);
    this.owner = owner;
  }

  /**
   * Completes every collective in flight, waiting at most the communicator's timeout; on timeout the job
   * is aborted (see {@link MpiCommunicator#timeout()}).
   *
   * @throws MpiException if MPI reported an error for one of them
   */
  @Override
  protected void awaitIdle(Duration timeout) {
    owner.synchronize(timeout);
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
    return "MpiStream[rank " + owner.rank() + "]";
  }
}
