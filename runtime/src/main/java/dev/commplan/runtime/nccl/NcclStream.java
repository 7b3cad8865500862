package dev.commplan.runtime.nccl;

import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.spi.EventBase;
import dev.commplan.runtime.spi.StreamBase;
import java.time.Duration;

/**
 * A CUDA stream of one communicator's device: its own ({@code cudaStreamCreateWithFlags} with {@code
 * cudaStreamNonBlocking}, destroyed with the communicator), one {@code newStream()} made (the same kind,
 * destroyed when closed, or with the communicator at the latest) or an external {@code cudaStream_t}
 * wrapped by {@link NcclInterop#wrapStream} (never destroyed here). Its events are CUDA events ({@link
 * NcclEvent}).
 */
final class NcclStream extends StreamBase {
  private final NcclCommunicator owner;
  private final long handle;
  private final boolean owned;
  private volatile boolean destroyed;

  NcclStream(NcclCommunicator owner, long handle, boolean owned, Duration timeout) {
    super(owner, timeout);
    this.owner = owner;
    this.handle = handle;
    this.owned = owned;
  }

  /** The {@code cudaStream_t}. */
  long handle() {
    return handle;
  }

  boolean isDestroyed() {
    return destroyed;
  }

  /**
   * Waits for the work enqueued so far; throws {@link CudaException} if it failed, {@link NcclException}
   * if the communicator reports an asynchronous error, and gives up with {@code RankAbortedException}
   * when another rank of the cluster failed (see {@link NcclCommunicator#synchronize}).
   *
   * <p>A stream that is being captured into a CUDA graph (by the caller's own code) is refused with
   * {@link IllegalStateException} before anything touches it: nothing on it runs until the graph is
   * launched, and the wait's {@code cudaStreamQuery} would invalidate the caller's capture (CUDA refuses
   * queries of a capturing stream) and count as a CUDA failure that aborts the communicator.
   */
  @Override
  protected void awaitIdle(Duration timeout) {
    if (destroyed) {
      throw new IllegalStateException(this + " was destroyed with its communicator");
    }
    owner.ensureUsable();
    if (owner.ncclRank().graphs().isCapturing(handle)) {
      throw new IllegalStateException(this + " is being captured into a CUDA graph: nothing enqueued on it runs"
          + " until that graph is launched, and waiting for it would invalidate the capture; end the capture"
          + " (cudaStreamEndCapture), launch the graph, then synchronize");
    }
    owner.synchronize(this, timeout);
  }

  /**
   * {@inheritDoc} Here: {@code cudaEventRecord} of a pooled event on this stream, which captures the work
   * enqueued on it so far (CUDA's stream order); an event recorded before any work completes at once.
   */
  @Override
  protected NcclEvent recordEvent() {
    owner.useDevice();
    boolean captured = owner.ncclRank().graphs().isCapturing(handle);
    NcclEvents pool = owner.eventPool();
    long event = pool.take();
    try {
      CheckedCuda.cudaEventRecord(event, handle);
    } catch (RuntimeException e) {
      pool.giveBack(event);
      throw e;
    }
    NcclEvent recorded = new NcclEvent(this, owner, event, captured);
    pool.giveBackWhenUnreachable(recorded, event);
    return recorded;
  }

  /**
   * {@inheritDoc} Here: {@code cudaStreamWaitEvent}, which makes the work enqueued on this stream afterwards
   * wait on the device for the event's most recent record (the one {@code record()} made: its handle is not
   * recorded again while the event object is reachable); the host returns at once.
   */
  @Override
  protected void waitForEvent(EventBase event) {
    owner.useDevice();
    CheckedCuda.cudaStreamWaitEvent(handle, ((NcclEvent) event).handle()); // checked by StreamBase: an NCCL event
  }

  /** {@inheritDoc} Here: {@code cudaStreamDestroy}, which returns at once; work already enqueued still runs. */
  @Override
  protected void closeStream() {
    destroy();
  }

  /** Destroys an owned stream; idempotent. */
  void destroy() {
    if (destroyed) {
      return;
    }
    destroyed = true;
    if (owned) {
      CheckedCuda.cudaStreamDestroy(handle);
    }
  }

  @Override
  public String toString() {
    return (owned ? "NcclStream" : "NcclStream(wrapped)") + "[0x" + Long.toHexString(handle) + ", rank "
        + owner.rank() + ", device " + owner.device() + "]";
  }
}
