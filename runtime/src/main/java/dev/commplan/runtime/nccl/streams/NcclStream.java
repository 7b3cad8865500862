package dev.commplan.runtime.nccl.streams;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.NcclException;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.spi.EventBase;
import dev.commplan.runtime.spi.StreamBase;
import java.time.Duration;
import java.util.Objects;

/**
 * A CUDA stream of one communicator's device: its own ({@code cudaStreamCreateWithFlags} with {@code
 * cudaStreamNonBlocking}, destroyed with the communicator), one {@code newStream()} made (the same kind,
 * destroyed when closed, or with the communicator at the latest) or an external {@code cudaStream_t}
 * wrapped by {@code NcclInterop.wrapStream} (never destroyed here). Its events are CUDA events ({@link
 * NcclEvent}). It asks its communicator's rank ({@link NcclRank}) before it touches CUDA.
 */
public final class NcclStream extends StreamBase {
  /** Which of the three a stream is. */
  public enum Kind {
    /** The communicator's own stream: destroyed with it, and waiting for it finishes what named no stream. */
    OWN,
    /** One {@code newStream()} made: destroyed when closed, or with the communicator at the latest. */
    MADE,
    /** A {@code cudaStream_t} made by other code ({@code NcclInterop.wrapStream}): never destroyed here. */
    WRAPPED
  }

  private final NcclRank rank;
  private final NcclEvents eventPool;
  private final long handle;
  private final Kind kind;
  private volatile boolean destroyed;

  /**
   * @param owner the communicator, whose gate its plans hold ({@link StreamBase})
   * @param rank the communicator's rank, asked before every CUDA call and waited for within its timeout
   * @param eventPool the CUDA events behind the communicator's {@code Event}s
   */
  public NcclStream(AbstractCommunicator owner, NcclRank rank, NcclEvents eventPool, long handle, Kind kind) {
    super(owner, rank.timeout());
    this.rank = rank;
    this.eventPool = eventPool;
    this.handle = handle;
    this.kind = kind;
  }

  /**
   * The {@code cudaStream_t} of {@code stream}, which must be a stream of {@code rank}'s communicator.
   *
   * @throws IllegalStateException if it was destroyed
   * @throws IllegalArgumentException if it is another communicator's, or no NCCL stream
   */
  public static long handleOf(Stream stream, NcclRank rank) {
    Objects.requireNonNull(stream, "stream");
    if (stream instanceof NcclStream ns && ns.rank == rank) {
      if (ns.isDestroyed()) {
        throw new IllegalStateException(ns + " was destroyed");
      }
      return ns.handle();
    }
    throw new IllegalArgumentException("the stream " + stream + " is not a stream of " + rank
        + ": use its stream(), one its newStream() made, or a stream made by NcclInterop.wrapStream for it");
  }

  /** The {@code cudaStream_t}. */
  public long handle() {
    return handle;
  }

  public boolean isDestroyed() {
    return destroyed;
  }

  /**
   * Waits for the work enqueued so far; throws {@link CudaException} if it failed, {@link NcclException}
   * if the communicator reports an asynchronous error, and gives up with {@code RankAbortedException}
   * when another rank of the cluster failed (see {@link NcclRankState#awaitStream}).
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
    rank.state().ensureUsable();
    if (rank.graphs().isStreamCapturing(handle)) {
      throw new IllegalStateException(this + " is being captured into a CUDA graph: nothing enqueued on it runs"
          + " until that graph is launched, and waiting for it would invalidate the capture; end the capture"
          + " (cudaStreamEndCapture), launch the graph, then synchronize");
    }
    rank.state().awaitStream(handle, timeout, this, kind == Kind.OWN);
  }

  /**
   * {@inheritDoc} Here: {@code cudaEventRecord} of a pooled event on this stream, which captures the work
   * enqueued on it so far (CUDA's stream order); an event recorded before any work completes at once.
   */
  @Override
  protected NcclEvent recordEvent() {
    rank.useDevice();
    boolean captured = rank.graphs().isStreamCapturing(handle);
    NcclEvents pool = eventPool;
    long event = pool.take();
    try {
      CheckedCuda.cudaEventRecord(event, handle);
    } catch (RuntimeException e) {
      pool.giveBack(event);
      throw e;
    }
    NcclEvent recorded = new NcclEvent(this, rank, event, captured);
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
    rank.useDevice();
    CheckedCuda.cudaStreamWaitEvent(handle, ((NcclEvent) event).handle()); // checked by StreamBase: an NCCL event
  }

  /** {@inheritDoc} Here: {@code cudaStreamDestroy}, which returns at once; work already enqueued still runs. */
  @Override
  protected void closeStream() {
    destroy();
  }

  /** Destroys an owned stream (its own, or one {@code newStream()} made); idempotent. */
  public void destroy() {
    if (destroyed) {
      return;
    }
    destroyed = true;
    if (kind != Kind.WRAPPED) {
      CheckedCuda.cudaStreamDestroy(handle);
    }
  }

  @Override
  public String toString() {
    return (kind != Kind.WRAPPED ? "NcclStream" : "NcclStream(wrapped)") + "[0x" + Long.toHexString(handle)
        + ", rank " + rank.rank() + ", device " + rank.device() + "]";
  }
}
