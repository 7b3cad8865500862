package dev.commplan.runtime.nccl.streams;

import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.spi.EventBase;
import java.time.Duration;

/**
 * An event of an {@link NcclStream}: a CUDA event recorded on the stream ({@code cudaEventRecord} captures
 * the work enqueued on the stream so far; an event recorded before any work completes at once). Asked with
 * {@code cudaEventQuery}, waited for by polling it within the communicator's timeout (as a stream's
 * synchronize polls {@code cudaStreamQuery}), so that a hang ends in a {@code CommTimeoutException}.
 */
public final class NcclEvent extends EventBase {
  private final NcclStream origin;
  private final NcclRank rank;
  private final long handle;
  /** Recorded while the stream was being captured: a node of that graph, which only a capture can wait for. */
  private final boolean captured;

  NcclEvent(NcclStream origin, NcclRank rank, long handle, boolean captured) {
    super(origin);
    this.origin = origin;
    this.rank = rank;
    this.handle = handle;
    this.captured = captured;
  }

  /** The {@code cudaEvent_t}, for {@code cudaStreamWaitEvent}. */
  long handle() {
    return handle;
  }

  @Override
  protected boolean poll() {
    checkAskable();
    return rank.state().queryEvent(handle);
  }

  @Override
  protected void awaitDone(Duration timeout) {
    checkAskable();
    rank.state().awaitEvent(handle, timeout, this);
  }

  private void checkAskable() {
    if (captured) {
      throw new IllegalStateException(this + " was recorded while its stream was being captured into a CUDA graph:"
          + " it marks a point of that graph, which another stream of the capture can wait for (waitFor), but"
          + " nothing runs until the graph is launched; record an event after the launch to wait on the host");
    }
  }

  @Override
  public String toString() {
    return "NcclEvent[0x" + Long.toHexString(handle) + " of " + origin + "]";
  }
}
