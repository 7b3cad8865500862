package dev.commplan.runtime.nccl.rank;

/**
 * The timeline of one {@link NcclRankState#close()}: where it spent its time, as {@code System.nanoTime()}
 * stamps, for probes that explain what closing a communicator costs ({@code NcclCloseProbe}). Four stamps
 * per close; nothing else is kept.
 *
 * @param started when close began
 * @param graphsDestroyed when the rank's CUDA graphs were destroyed (NCCL waits in destroy until none is left)
 * @param destroyed when {@code ncclCommDestroy} returned (equal to {@code graphsDestroyed} if it was not
 *     called: the communicator had been aborted)
 * @param released when its memory, streams and events were freed: close's end
 */
public record CloseTimeline(long started, long graphsDestroyed, long destroyed, long released) {
  public long graphsNanos() {
    return graphsDestroyed - started;
  }

  public long destroyNanos() {
    return destroyed - graphsDestroyed;
  }

  public long releaseNanos() {
    return released - destroyed;
  }

  public long totalNanos() {
    return released - started;
  }
}
