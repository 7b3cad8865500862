package dev.commplan.doctor;

import static dev.commplan.doctor.Records.MS;
import static dev.commplan.doctor.Records.allReduce;
import static dev.commplan.doctor.Records.file;
import static dev.commplan.doctor.Records.group;
import static dev.commplan.doctor.Records.op;
import static dev.commplan.doctor.Records.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import dev.commplan.doctor.Lateness.RankLateness;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The lateness rule: how long the group waited for each rank alone, from each rank's own waits. */
class LatenessTest {
  private static final List<Integer> THREE = List.of(0, 1, 2);

  /** Three ranks arriving at 0, 6 and 10 ms: rank 2 kept the others waiting 4 ms alone (10 less 6). */
  @Test
  void theLastArrivalIsLateByTheGapToTheOneBeforeIt() {
    for (long shared : new long[] {0, 3 * MS}) { // moving the data, the same on every rank: it cancels
      List<RankLateness> l = lateness(new long[][] {{10 * MS + shared}, {4 * MS + shared}, {shared}});
      assertEquals(List.of(2, 0, 1), l.stream().map(RankLateness::worldRank).toList(), "slowest first");
      assertEquals(4 * MS, l.get(0).medianNanos());
      assertEquals(0, l.get(1).medianNanos());
      assertEquals(0, l.get(2).medianNanos());
    }
  }

  /** Two ranks arriving together last kept nobody waiting alone: each is 0; documented in the class. */
  @Test
  void twoLateRanksTogetherAreNotLateAlone() {
    List<RankLateness> l = lateness(new long[][] {{10 * MS}, {0}, {0}});
    assertEquals(List.of(0L, 0L, 0L), l.stream().map(RankLateness::medianNanos).toList());
  }

  @Test
  void medianAndWorstOverTheCollectives() {
    // rank 2 late by 1, 5 and 30 ms at three collectives, rank 0 by 2 ms at a fourth
    List<RankLateness> l = lateness(new long[][] {{1 * MS, 5 * MS, 30 * MS, 0}, {1 * MS, 5 * MS, 30 * MS, 2 * MS},
        {0, 0, 0, 2 * MS}});
    assertEquals(2, l.get(0).worldRank());
    assertEquals(4, l.get(0).collectives());
    assertEquals(3 * MS, l.get(0).medianNanos(), "the mean of the middle two of 0, 1, 5, 30 ms");
    assertEquals(30 * MS, l.get(0).worstNanos());
    assertEquals(0, l.get(1).worldRank());
    assertEquals(2 * MS, l.get(1).worstNanos());
  }

  /** Only collectives of the whole group that every rank completed, agreed on and timed count. */
  @Test
  void onlyCleanCollectivesOfTheWholeGroupCount() {
    List<List<Operation>> ops = List.of(new ArrayList<>(), new ArrayList<>(), new ArrayList<>());
    for (int r = 0; r < 3; r++) {
      long w = r == 2 ? 0 : 20 * MS;
      ops.get(r).add(sum(0, State.COMPLETED, w)); // counted
      ops.get(r).add(op(1, Kind.CHECK, null, -1, State.COMPLETED, w, allReduce(null, null))); // the check's
      ops.get(r).add(op(2, Kind.COLLECTIVE, "p.Pipe", 0, State.COMPLETED, w, allReduce(null, null),
          allReduce((r + 1) % 3, null))); // with a send in it
      ops.get(r).add(op(3, Kind.COLLECTIVE, "p.Mesh", 0, State.COMPLETED, w, allReduce(null, "tp"))); // over an axis
      ops.get(r).add(sum(4, r == 1 ? State.FAILED : State.COMPLETED, w)); // not completed everywhere
      ops.get(r).add(sum(5, State.COMPLETED, r == 0 ? null : w)); // a wait not known
      ops.get(r).add(op(6, Kind.COLLECTIVE, r == 0 ? "p.Other" : "p.Sum", 0, State.COMPLETED, w,
          allReduce(null, null))); // the ranks disagree
      ops.get(r).add(sum(7, State.COMPLETED, w)); // counted
    }
    List<RankLateness> l = Lateness.of(AlignedGroup.of(Records.run(
        file(0, 3, group("world", THREE, 0, 8, ops.get(0).toArray(Operation[]::new))),
        file(1, 3, group("world", THREE, 1, 8, ops.get(1).toArray(Operation[]::new))),
        file(2, 3, group("world", THREE, 2, 8, ops.get(2).toArray(Operation[]::new)))))
        .get(0));
    assertEquals(2, l.get(0).worldRank());
    assertEquals(2, l.get(0).collectives());
    assertEquals(List.of(0L, 7L), l.get(0).perCollective().stream().map(v -> v[0]).toList());
  }

  @Test
  void aGroupOfOneHasNoLateness() {
    assertEquals(List.of(), Lateness.of(AlignedGroup.of(Records.run(
        file(0, 1, group("world", List.of(0), 0, 1, sum(0, State.COMPLETED, 0L))))).get(0)));
  }

  /** Three ranks, one collective per column of {@code waited[rank]}. */
  private static List<RankLateness> lateness(long[][] waited) {
    FlightRecord[] files = new FlightRecord[3];
    for (int r = 0; r < 3; r++) {
      Operation[] ops = new Operation[waited[r].length];
      for (int k = 0; k < ops.length; k++) {
        ops[k] = sum(k, State.COMPLETED, waited[r][k]);
      }
      files[r] = file(r, 3, group("world", THREE, r, ops.length, ops));
    }
    return Lateness.of(AlignedGroup.of(Records.run(files)).get(0));
  }
}
