package dev.commplan.doctor;

import dev.commplan.doctor.AlignedGroup.Slot;
import dev.commplan.doctor.AlignedGroup.Status;
import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import dev.commplan.doctor.internal.LatenessRule;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * How long a group waited for each of its ranks at its collectives, from each rank's own
 * {@code waitedNanos}: no clock is compared across ranks, so it holds across hosts whose clocks differ.
 *
 * <p>The rule, per collective k and rank r: {@code late(r, k) = max(0, min over peers p of (waited(p, k) -
 * waited(r, k)))}, written once in the model's {@code dev.commplan.model.LatenessRule} (its source copied into
 * this jar's internal package at build), which the runtime applies online too ({@code Communicator.lateness()}).
 * At a collective every rank waits until the last one arrives, so a rank's wait is the last arrival less its
 * own arrival, plus whatever all share (moving the data). The difference of two ranks' waits
 * is then the difference of their arrivals, and the shared part cancels; the smallest such difference over
 * the peers is how long the group waited for r alone: the gap between r's arrival and the arrival before it,
 * when r came last, and 0 when it did not. Two late ranks arriving together are both 0 by this rule, since
 * neither kept the group waiting alone; the lateness of the pair shows on the ranks that waited for them.
 *
 * <p>Counted: aligned operations of kind {@code collective} that every member kept, completed and agreed
 * on, with every member's wait known, whose calls all run over this group (no send or receive, whose waits
 * involve one peer, and no call over another axis). The agreement check's calls are left out: each follows a
 * counted operation at once, so it would only count that operation's lateness again, with a smaller value.
 */
final class Lateness {
  private Lateness() {}

  /**
   * One rank's lateness over the counted collectives.
   *
   * @param worldRank the rank, in the world
   * @param collectives how many collectives were counted
   * @param medianNanos the median of its lateness
   * @param worstNanos the largest
   * @param perCollective its lateness at each counted collective, by sequence number, for the page
   */
  record RankLateness(int worldRank, int collectives, long medianNanos, long worstNanos, List<long[]> perCollective) {}

  /**
   * Every member's lateness, slowest first (median, then worst, then rank); empty where no collective
   * could be counted or the group has one rank.
   */
  static List<RankLateness> of(AlignedGroup group) {
    int n = group.size();
    if (n < 2) {
      return List.of();
    }
    List<List<long[]>> per = new ArrayList<>();
    for (int m = 0; m < n; m++) {
      per.add(new ArrayList<>());
    }
    long[] late = new long[n];
    for (long seq : group.keptSeqs()) {
      long[] waited = counted(group, seq);
      if (waited == null) {
        continue;
      }
      LatenessRule.alone(waited, n, late); // the rule the runtime applies online too
      for (int r = 0; r < n; r++) {
        per.get(r).add(new long[] {seq, late[r]});
      }
    }
    if (per.get(0).isEmpty()) {
      return List.of();
    }
    List<RankLateness> result = new ArrayList<>();
    for (int m = 0; m < n; m++) {
      long[] values = per.get(m).stream().mapToLong(v -> v[1]).sorted().toArray();
      result.add(new RankLateness(group.worldRanks().get(m), values.length, LatenessRule.median(values, values.length),
          values[values.length - 1], List.copyOf(per.get(m))));
    }
    result.sort(Comparator.comparingLong(RankLateness::medianNanos).reversed()
        .thenComparing(Comparator.comparingLong(RankLateness::worstNanos).reversed())
        .thenComparingInt(RankLateness::worldRank));
    return List.copyOf(result);
  }

  /** Every member's wait at {@code seq}, or null where that operation is not counted (see the class comment). */
  private static long[] counted(AlignedGroup group, long seq) {
    long[] waited = new long[group.size()];
    Operation first = null;
    for (int m = 0; m < group.size(); m++) {
      Slot slot = group.slot(m, seq);
      if (slot.status() != Status.KEPT) {
        return null;
      }
      Operation op = slot.op();
      if (op.kind() != Kind.COLLECTIVE || op.state() != State.COMPLETED || op.waitedNanos() == null
          || op.calls().stream().anyMatch(c -> c.peer() != null || c.over() != null)) {
        return null;
      }
      if (first == null) {
        first = op;
      } else if (!Signature.of(first).equals(Signature.of(op))) {
        return null;
      }
      waited[m] = op.waitedNanos();
    }
    return waited;
  }
}
