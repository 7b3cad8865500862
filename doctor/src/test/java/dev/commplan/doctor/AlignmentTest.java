package dev.commplan.doctor;

import static dev.commplan.doctor.Records.allReduce;
import static dev.commplan.doctor.Records.file;
import static dev.commplan.doctor.Records.group;
import static dev.commplan.doctor.Records.op;
import static dev.commplan.doctor.Records.sum;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import java.util.List;
import java.util.stream.LongStream;
import org.junit.jupiter.api.Test;

/** Lining groups up by sequence number: rings that dropped old operations, groups a rank has no record of. */
class AlignmentTest {
  private static final List<Integer> TWO = List.of(0, 1);

  /** Rank 1's ring kept #4 to #7 only: the rest is still compared where both kept it, and the report says so. */
  @Test
  void aRingThatDroppedOldOperationsIsComparedWhereItKeptThem() {
    GroupAnalysis a = Records.analyse(
        file(0, 2, group("world", TWO, 0, 8, sums(0, 8))),
        file(1, 2, group("world", TWO, 1, 8, sums(4, 8)))).get(0);
    assertNull(a.difference);
    assertNull(a.stall);
    assertEquals(7, a.lastCompleted.seq());
    assertEquals(4, a.lateness.get(0).collectives(), "only where every rank kept the operation");
    StringBuilder text = new StringBuilder();
    TextReport.group(text, a);
    assertTrue(text.toString().contains("  rank 1's ring kept #4 to #7 (older operations left it)\n"), text.toString());
  }

  @Test
  void aDifferenceSaysWhichRanksNoLongerHoldTheOperation() {
    List<Integer> three = List.of(0, 1, 2);
    Operation other = op(5, Kind.COLLECTIVE, "p.Other", 1, State.FAILED, null, allReduce(null, null));
    GroupAnalysis a = Records.analyse(
        file(0, 3, group("world", three, 0, 6, sums(0, 6))),
        file(1, 3, group("world", three, 1, 6, concat(sums(0, 5), other))),
        file(2, 3, group("world", three, 2, 6, sums(5, 6)))).get(0);
    assertEquals(5, a.difference.seq());
    assertEquals(List.of("plan", "step"), a.difference.differing());
    assertEquals(List.of(List.of(0, 2), List.of(1)),
        a.difference.variants().stream().map(GroupAnalysis.Variant::worldRanks).toList());
    // #0 to #4: rank 2's ring dropped them; ranks 0 and 1 agree there, and that is not a difference
    Operation dropped = op(4, Kind.COLLECTIVE, "p.Other", 0, State.COMPLETED, 0L, allReduce(null, null));
    GroupAnalysis b = Records.analyse(
        file(0, 3, group("world", three, 0, 6, sums(0, 6))),
        file(1, 3, group("world", three, 1, 6, concat(sums(0, 4), dropped, sums(5, 6)[0]))),
        file(2, 3, group("world", three, 2, 6, sums(5, 6)))).get(0);
    assertEquals(4, b.difference.seq());
    assertEquals(List.of(2), b.difference.unknown());
  }

  /** Rank 1 never entered world #3: it waits in its own tp group, and the report says where. */
  @Test
  void aRankThatNeverEnteredIsShownWhereItWaitsInstead() {
    List<Integer> all = List.of(0, 1, 2, 3);
    Operation waiting = op(3, Kind.COLLECTIVE, "p.Sum", 0, State.STARTED, null, allReduce(null, null));
    Operation inTp = op(0, Kind.COLLECTIVE, "p.Tp", 2, State.STARTED, null, allReduce(null, null));
    FlightRecord[] files = new FlightRecord[4];
    for (int r = 0; r < 4; r++) {
      List<Integer> tp = r < 2 ? TWO : List.of(2, 3);
      files[r] = r == 1
          ? file(r, 4, group("world", all, r, 3, sums(0, 3)), group("axis tp", tp, r, 1, inTp))
          : file(r, 4, group("world", all, r, 4, concat(sums(0, 3), waiting)), group("axis tp", tp, r, 0));
    }
    List<GroupAnalysis> groups = Records.analyse(files);
    GroupAnalysis world = groups.get(0);
    assertEquals(3, world.stall.seq());
    assertEquals(List.of(0, 2, 3), List.copyOf(world.stall.entered().keySet()));
    StringBuilder text = new StringBuilder();
    TextReport.group(text, world);
    assertTrue(text.toString().contains("""
          never entered by rank 1: #3 plan p.Sum, step 0, all-reduce F32 SUM, count 16, fields [x]
            ranks 0, 2, 3: waiting in it for 969.0 ms
            rank 1's last operation here: #2 plan p.Sum, step 0, all-reduce F32 SUM, count 16, fields [x] (completed)
            rank 1 in axis tp: #0 plan p.Tp, step 2, all-reduce F32 SUM, count 16, fields [x] (started for 999.0 ms)
        """), text.toString());
    // and in tp, rank 1 entered #0 where rank 0 did not: the same question, the other way round
    assertEquals(List.of(0), groups.get(1).stall.absent().stream().map(GroupAnalysis.Absent::worldRank).toList());
  }

  @Test
  void aGroupMissingFromAFileIsAProblemOnlyWhileOthersWaitInIt() {
    Operation waiting = op(0, Kind.COLLECTIVE, "p.Sum", 0, State.STARTED, null, allReduce(null, null));
    List<GroupAnalysis> waits = Records.analyse(
        file(0, 2, group("world", TWO, 0, 0), group("split", TWO, 0, 1, waiting)),
        file(1, 2, group("world", TWO, 1, 0)));
    assertEquals(List.of(1), waits.get(1).withoutRecord);
    assertEquals(List.of("split: rank 1 of the group has no record of it, while its other ranks did not complete"
        + " their operations in it"), waits.get(1).problems());
    List<GroupAnalysis> idle = Records.analyse(
        file(0, 2, group("world", TWO, 0, 0), group("split", TWO, 0, 1, sum(0, State.COMPLETED, 0L))),
        file(1, 2, group("world", TWO, 1, 0)));
    assertEquals(List.of(), idle.get(1).problems());
  }

  @Test
  void sendsReceivesAndLocalWorkAreNotAligned() {
    Operation send = op(-1, Kind.P2P, null, -1, State.STARTED, null, allReduce(1, null));
    Operation hostTask = op(-1, Kind.LOCAL, null, -1, State.COMPLETED, null);
    GroupAnalysis a = Records.analyse(
        file(0, 2, group("world", TWO, 0, 2, concat(sums(0, 2), send, hostTask))),
        file(1, 2, group("world", TWO, 1, 2, sums(0, 2)))).get(0);
    assertNull(a.difference);
    assertNull(a.stall);
    assertEquals(List.of(), a.problems());
  }

  /** A rank ten million operations ahead of another: the analysis and the page stay quick. */
  @Test
  void aRankFarAheadCostsNothing() {
    long ahead = 10_000_000;
    Diagnosis d = Diagnosis.of(Records.run(
        file(0, 2, group("world", TWO, 0, ahead, sum(ahead - 2, State.COMPLETED, 0L), sum(ahead - 1,
            State.STARTED, null))),
        file(1, 2, group("world", TWO, 1, 3, sums(0, 3)))), 10 * Records.MS);
    org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(5), () -> {
      GroupAnalysis a = d.groups().get(0);
      assertEquals(3, a.stall.seq());
      assertEquals(List.of(1), a.stall.absent().stream().map(GroupAnalysis.Absent::worldRank).toList());
      String page = HtmlReport.render(d);
      assertTrue(page.contains("operations are left out; the last 600 are drawn"), page.substring(0, 2000));
    });
  }

  private static Operation[] sums(int from, int to) {
    return LongStream.range(from, to).mapToObj(k -> sum(k, State.COMPLETED, 0L)).toArray(Operation[]::new);
  }

  private static Operation[] concat(Operation[] ops, Operation... more) {
    Operation[] all = java.util.Arrays.copyOf(ops, ops.length + more.length);
    System.arraycopy(more, 0, all, ops.length, more.length);
    return all;
  }
}
