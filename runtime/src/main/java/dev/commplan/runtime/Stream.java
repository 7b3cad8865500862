package dev.commplan.runtime;

/**
 * An ordered queue of device work, like a CUDA stream: work enqueued on it (for example by a plan's
 * {@code execute}) runs asynchronously, in order, and its results may only be read from the host after
 * {@link #synchronize()} returns.
 *
 * <p>A communicator has its own stream ({@link Communicator#stream()}) and may make more ({@link
 * Communicator#newStream()}); work on two streams runs in no particular order unless one waits for an
 * {@link Event} of the other ({@link #record()}, {@link #waitFor}).
 */
public interface Stream extends AutoCloseable {
  /**
   * Blocks until all work enqueued so far has finished.
   *
   * @throws CommPlanException if any of that work failed (the first failure, with the others suppressed)
   */
  void synchronize();

  /** {@return the communicator this stream belongs to} */
  Communicator communicator();

  /**
   * Records an event that completes when the work enqueued on this stream so far has completed ({@code
   * cudaEventRecord}); returns without waiting.
   *
   * @return the event
   * @throws IllegalStateException if the stream or its communicator is closed
   */
  Event record();

  /**
   * Makes the work enqueued on this stream after the call start only after {@code event} has completed
   * ({@code cudaStreamWaitEvent}); the host does not wait. Once this stream is synchronized past the call,
   * the work before {@code event} counts as synchronized too (for the host-access guard).
   *
   * @param event an event of a stream of this rank on the same device (this communicator's, or one of its
   *     family's: the mesh's world and axes)
   * @throws IllegalArgumentException if {@code event} belongs to another device, rank or backend (the
   *     message names both)
   * @throws IllegalStateException if the stream or its communicator is closed
   */
  void waitFor(Event event);

  /**
   * Closes a stream made by {@link Communicator#newStream()}: work already enqueued still runs (as after
   * {@code cudaStreamDestroy}; on MPI the call completes the stream's requests first, within the timeout),
   * and the stream takes no more work. Idempotent. The communicator's own stream ({@link
   * Communicator#stream()}) and streams the caller wrapped are not closed by this; they end with their
   * communicator (or their owner), so calling it on them does nothing.
   */
  @Override
  default void close() {}
}
