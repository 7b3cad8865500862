package dev.commplan.runtime.spi;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
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
 * <p>A backend author writes the constructor ({@code super(owner, timeout)}), {@link #awaitIdle} and,
 * where it has more to say, {@link #checksFailed} and {@link #runsInOrderOn}; {@link #communicator()} is
 * the owner given here.
 */
public abstract class StreamBase implements Stream {
  static {
    Guards.registerStreams(stream -> stream instanceof StreamBase base ? base.progress : null);
  }

  private final AbstractCommunicator owner;
  private final StreamProgress progress;
  private final Duration timeout;

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
    long ticket = progress.issued();
    awaitIdle(timeout);
    progress.synchronizedTo(ticket); // reached only when the wait returned normally
    try {
      progress.runChecks(ticket); // the agreement check, and the execute-order check where a plan asked for one
    } catch (RuntimeException e) {
      checksFailed(e);
      throw e;
    }
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
   * For a stream whose work runs on one thread of the JVM (the local backend's worker): host access from
   * that thread is in stream order, so the guard never refuses it.
   *
   * @param worker the thread that runs this stream's work
   */
  protected final void runsInOrderOn(Thread worker) {
    progress.runsInOrderOn(worker);
  }

  /** Not yet: streams and events arrive with issue 33's runtime part. */
  @Override
  public final dev.commplan.runtime.Event record() {
    throw new UnsupportedOperationException("not yet");
  }

  /** Not yet: streams and events arrive with issue 33's runtime part. */
  @Override
  public final void waitFor(dev.commplan.runtime.Event event) {
    throw new UnsupportedOperationException("not yet");
  }

  /** {@return the communicator given to the constructor, whose gate this stream carries} */
  @Override
  public final Communicator communicator() {
    return owner;
  }
}
