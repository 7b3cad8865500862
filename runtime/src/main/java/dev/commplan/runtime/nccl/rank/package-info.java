/**
 * One rank of an NCCL communicator, as every layer under the API's communicator sees it ({@link NcclRank}):
 * its {@code ncclComm_t}, where it runs, and what each call asks before it touches NCCL.
 *
 * <ul>
 *   <li>{@link NcclRankState}: OPEN, ABORTED or CLOSED, why, the waits that poll the stream within the
 *       timeout, and the abort or destroy that ends it;
 *   <li>{@link NcclWatchdog} and {@link NcclBlockedCall}: the host call a rank's thread is blocked in, timed
 *       from another thread, which aborts the communicator from outside past the timeout;
 *   <li>{@link NcclFamily}: a world and its splits, which fail together;
 *   <li>{@link StepEvents}: the flight record of what the rank enqueued, with a CUDA event per step when
 *       asked for;
 *   <li>{@link RankGraphs}: the rank's live CUDA graphs, destroyed before its communicator, and the probe
 *       that says whether a stream is being captured;
 *   <li>{@link NcclSplit}: the {@code ncclCommSplit} of a rank, timed like any blocking call;
 *   <li>{@link CloseTimeline}: where one close spent its time, for probes.
 * </ul>
 */
package dev.commplan.runtime.nccl.rank;
