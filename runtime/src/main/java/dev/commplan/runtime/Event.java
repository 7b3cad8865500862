package dev.commplan.runtime;

/**
 * A point in a {@link Stream}'s order, made by {@link Stream#record()}: it completes when the work
 * enqueued on that stream before it has completed ({@code cudaEventRecord}'s meaning). Another stream of
 * the same rank and device can wait for it without the host waiting ({@link Stream#waitFor}); the host
 * can ask ({@link #isDone()}) or wait ({@link #synchronize()}).
 *
 * <p>On the NCCL backend an event is a CUDA event; on the local backend, a place in the stream's worker
 * queue; on the MPI backend, which has no device queue, the requests in flight on the stream when it was
 * recorded.
 */
public interface Event {
  /**
   * {@return whether the work the event stands for has completed (or failed: {@link #synchronize()} then
   * throws); never blocks}
   */
  boolean isDone();

  /**
   * Blocks until the work the event stands for has completed, at most the communicator's timeout, like
   * {@link Stream#synchronize()}: host access to buffers that plan work before the event wrote is then
   * allowed by the host-access guard.
   *
   * @throws CommTimeoutException if the timeout passed first (the communicator is aborted, as for a
   *     stream's synchronize)
   * @throws CommPlanException if that work failed
   */
  void synchronize();
}
