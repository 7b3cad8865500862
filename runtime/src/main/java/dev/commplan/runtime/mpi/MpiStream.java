package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.StreamProgress;

/**
 * An MPI communicator's stream. MPI has no device queue: a step's non-blocking collectives are started
 * when it is enqueued and are in flight until {@link #synchronize()} (or the next step, which must see
 * their results) completes them; see {@link MpiCommunicator}.
 */
final class MpiStream implements Stream, StreamProgress.Tracked {
  private final MpiCommunicator owner;
  /** Host-access guard hook: how far this stream is synchronized through this object. */
  private final StreamProgress progress = new StreamProgress(null);

  MpiStream(MpiCommunicator owner) {
    this.owner = owner;
  }

  /**
   * Completes every collective in flight, waiting at most the communicator's timeout; on timeout the job
   * is aborted (see {@link MpiCommunicator#timeout()}).
   *
   * @throws MpiException if MPI reported an error for one of them
   */
  @Override
  public void synchronize() {
    long ticket = progress.issued(); // host-access guard hook
    owner.synchronize();
    progress.synchronizedTo(ticket); // host-access guard hook: reached only when nothing failed
  }

  @Override
  public StreamProgress progress() {
    return progress;
  }

  @Override
  public Communicator communicator() {
    return owner;
  }

  @Override
  public String toString() {
    return "MpiStream[rank " + owner.rank() + "]";
  }
}
