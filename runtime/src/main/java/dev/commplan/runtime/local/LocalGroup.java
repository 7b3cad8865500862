package dev.commplan.runtime.local;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One group of a {@link LocalCluster}'s ranks that run collectives together: the world, or a group made by
 * {@link LocalCommunicator#split}. Its ranks meet at its own {@link LocalRendezvous} and {@link
 * LocalMailboxes}, and split it further through its own {@link LocalSplits}; the cluster holds every
 * group, so that one abort wakes them all (one family fails together).
 */
final class LocalGroup {
  final LocalCluster cluster;
  /** What messages call the group: {@code world}, or the label given to the split. */
  final String label;
  final int size;
  /** The world rank of each rank here, by rank here. */
  private final int[] worldRanks;
  final LocalRendezvous rendezvous;
  final LocalMailboxes mailboxes;
  final LocalSplits splits;
  /** Members not yet closed. */
  private final AtomicInteger open;

  LocalGroup(LocalCluster cluster, String label, int[] worldRanks, Duration timeout) {
    this.cluster = cluster;
    this.label = label;
    this.size = worldRanks.length;
    this.worldRanks = worldRanks.clone();
    this.rendezvous = new LocalRendezvous(cluster, this, timeout);
    this.mailboxes = new LocalMailboxes(cluster, this, timeout);
    this.splits = new LocalSplits(cluster, this, timeout);
    this.open = new AtomicInteger(size);
  }

  /** {@return the world rank of each rank here, by rank here (a copy)} */
  int[] worldRanks() {
    return worldRanks.clone();
  }

  /** One member closed; {@return whether it was the last} */
  boolean memberClosed() {
    return open.decrementAndGet() == 0;
  }

  /** Whether this is the cluster's world, whose messages need no group name. */
  boolean isWorld() {
    return label.equals("world");
  }

  /** {@code "rank 3"} in the world, {@code "rank 1 of axis tp of mesh [dp=2, tp=2]"} in a split group. */
  String rankText(int rank) {
    return isWorld() ? "rank " + rank : "rank " + rank + " of " + label;
  }

  /** {@code "rank 1 of axis tp of mesh [dp=2, tp=2] (world rank 3)"}, or {@code "rank 3"} in the world. */
  String rankAndWorldRank(int rank) {
    return isWorld() ? rankText(rank) : rankText(rank) + " (world rank " + worldRanks[rank] + ")";
  }

  /** {@code "ranks [1]"} in the world, {@code "ranks [1] (world ranks [3])"} in a split group, as MPI's messages. */
  String ranksText(List<Integer> ranks) {
    return isWorld() ? "ranks " + ranks
        : "ranks " + ranks + " (world ranks "
            + Arrays.toString(ranks.stream().mapToInt(r -> worldRanks[r]).toArray()) + ")";
  }

  /** Wakes every waiter of this group with the abort's cause, now and from now on. */
  void abort(int worldRank, Throwable cause) {
    rendezvous.abort(worldRank, cause);
    mailboxes.abort(worldRank, cause);
    splits.abort(worldRank, cause);
  }

  @Override
  public String toString() {
    return "LocalGroup[" + label + ", " + size + " ranks]";
  }
}
