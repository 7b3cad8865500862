package dev.commplan.runtime.local;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.RankAbortedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * Where a group's ranks meet to split it ({@link LocalCommunicator#split}), as {@code ncclCommSplit} does:
 * every rank of the group calls it, numbered 0, 1, 2, ... per rank; the calls with the same number form
 * one round. The last rank to arrive makes the new groups (ranks of one color, ordered by key, then by
 * their rank here) and a communicator for each member; every rank leaves with its own. Nothing waits
 * forever: an abort wakes every waiter with {@link RankAbortedException}, and a wait longer than the
 * timeout fails with {@link CommTimeoutException} naming the group and the ranks that did not come (the
 * cluster is then aborted, so the whole family fails).
 */
final class LocalSplits {
  private final LocalCluster cluster;
  private final LocalGroup group;
  private final Duration timeout;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition changed = lock.newCondition();
  private final Map<Long, Round> rounds = new HashMap<>();
  private Throwable abortCause;

  private static final class Round {
    final int[] colors;
    final int[] keys;
    final String[] labels;
    final LocalCommunicator[] members;
    LocalCommunicator[] results;
    int arrived;
    int left;

    Round(int size) {
      colors = new int[size];
      keys = new int[size];
      labels = new String[size];
      members = new LocalCommunicator[size];
    }
  }

  LocalSplits(LocalCluster cluster, LocalGroup group, Duration timeout) {
    this.cluster = cluster;
    this.group = group;
    this.timeout = timeout;
  }

  /** Rank {@code member}'s side of its split number {@code round}; returns its communicator of its new group. */
  LocalCommunicator split(LocalCommunicator member, long round, int color, int key, String label) {
    int rank = member.rank();
    LocalCommunicator mine;
    CommTimeoutException timedOut = null;
    lock.lock();
    try {
      checkNotAborted(member);
      Round r = rounds.computeIfAbsent(round, n -> new Round(group.size));
      r.colors[rank] = color;
      r.keys[rank] = key;
      r.labels[rank] = label;
      r.members[rank] = member;
      r.arrived++;
      if (r.arrived == group.size) {
        r.results = makeGroups(r);
        changed.signalAll();
      }
      long deadline = System.nanoTime() + timeout.toNanos();
      while (r.results == null) {
        checkNotAborted(member);
        long leftNanos = deadline - System.nanoTime();
        if (leftNanos <= 0) {
          timedOut = timedOut(member, round, r);
          break;
        }
        try {
          changed.awaitNanos(leftNanos);
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          checkNotAborted(member);
          throw new CommPlanException(group.rankText(rank) + ": interrupted while splitting", e);
        }
      }
      mine = timedOut == null ? r.results[rank] : null;
      if (timedOut == null && ++r.left == group.size) {
        rounds.remove(round);
      }
    } finally {
      lock.unlock();
    }
    if (timedOut != null) {
      cluster.abort(member.worldRank(), timedOut); // outside the lock: the abort takes every group's
      throw timedOut;
    }
    return mine;
  }

  /** The new groups of a complete round, and a communicator for each member, indexed by rank here. */
  private LocalCommunicator[] makeGroups(Round r) {
    Map<Integer, List<Integer>> byColor = new LinkedHashMap<>();
    for (int rank = 0; rank < group.size; rank++) {
      byColor.computeIfAbsent(r.colors[rank], c -> new ArrayList<>()).add(rank);
    }
    LocalCommunicator[] results = new LocalCommunicator[group.size];
    for (List<Integer> ranks : byColor.values()) {
      ranks.sort(Comparator.<Integer>comparingInt(rank -> r.keys[rank]).thenComparingInt(rank -> rank));
      LocalGroup child = cluster.newGroup(r.labels[ranks.getFirst()],
          ranks.stream().mapToInt(rank -> r.members[rank].worldRank()).toArray());
      for (int i = 0; i < ranks.size(); i++) {
        int rank = ranks.get(i);
        results[rank] = r.members[rank].child(child, i);
      }
    }
    return results;
  }

  private CommTimeoutException timedOut(LocalCommunicator member, long round, Round r) {
    List<Integer> missing = new ArrayList<>();
    for (int rank = 0; rank < group.size; rank++) {
      if (r.members[rank] == null) {
        missing.add(rank);
      }
    }
    CommTimeoutException e = new CommTimeoutException("local backend: split #" + round + " of " + group.label
        + " timed out on " + group.rankText(member.rank()) + " after " + timeout + ": " + group.ranksText(missing)
        + " of " + group.label + " did not call split (every rank of a communicator must split it, the same number of times);"
        + " the cluster is aborted", null, -1, "split", List.of(), member.rank(), timeout, missing,
        member.flightRecorder().format(), null);
    return e;
  }

  private void checkNotAborted(LocalCommunicator member) {
    if (abortCause != null) {
      throw new RankAbortedException(group.rankText(member.rank()) + ": split abandoned because the cluster was"
          + " aborted: " + LocalCluster.brief(abortCause), abortCause);
    }
  }

  /** Wakes every waiter with {@link RankAbortedException} caused by {@code cause}, now and from now on. */
  void abort(int worldRank, Throwable cause) {
    lock.lock();
    try {
      if (abortCause == null) {
        abortCause = cause;
      }
      changed.signalAll();
    } finally {
      lock.unlock();
    }
  }
}
