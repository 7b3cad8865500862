package dev.commplan.runtime;

/**
 * An ordered queue of device work, like a CUDA stream: work enqueued on it (for example by a plan's
 * {@code execute}) runs asynchronously, in order, and its results may only be read from the host after
 * {@link #synchronize()} returns.
 */
public interface Stream {
  /**
   * Blocks until all work enqueued so far has finished.
   *
   * @throws CommPlanException if any of that work failed (the first failure, with the others suppressed)
   */
  void synchronize();

  /** {@return the communicator this stream belongs to} */
  Communicator communicator();
}
