package dev.commplan.runtime.nccl;

/**
 * Where one {@link NcclRankState#close()} spent its time, as {@code System.nanoTime()} stamps: for probes
 * that explain what closing a communicator costs ({@code NcclCloseProbe}). Four stamps per close; nothing
 * else is kept.
 *
 * @param started when close began
 * @param graphsDestroyed when the rank's CUDA graphs were destroyed (NCCL waits in destroy until none is left)
 * @param destroyed when {@code ncclCommDestroy} returned (equal to {@code graphsDestroyed} if it was not
 *     called: the communicator had been aborted)
 * @param released when its memory, streams and events were freed: close's end
 */
record NcclCloseTimes(long started, long graphsDestroyed, long destroyed, long released) {
  long graphsNanos() {
    return graphsDestroyed - started;
  }

  long destroyNanos() {
    return destroyed - graphsDestroyed;
  }

  long releaseNanos() {
    return released - destroyed;
  }

  long totalNanos() {
    return released - started;
  }
}
