package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Streams, events and bucketed plans on the MPI backend across real processes: {@code mpirun --oversubscribe
 * -np N} of {@link MpiBucketsMain} for N = 2, 3, 4: ranks that mark their fields in different orders still
 * enqueue the buckets in one order (the agreement check, on by default, compares every bucket), with the
 * reference's results. Skips, saying why, without mpirun or Open MPI.
 */
class MpiBucketsTest {
  private static final Duration LIMIT = Duration.ofSeconds(120);

  @BeforeAll
  static void needsMpirun() {
    String reason = MpiLauncher.unavailableReason();
    if (reason != null) {
      System.out.println("MpiBucketsTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
  }

  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4})
  void bucketedRoundsMatchTheReferenceWhateverOrderEachRankMarksIn(int ranks) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(ranks, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=60"), MpiBucketsMain.class.getName());
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    for (int r = 0; r < ranks; r++) {
      assertTrue(run.output().contains("mpi buckets rank " + r + " of " + ranks + ": all right"), run.toString());
    }
  }

  /** Issue 40, items 1 and 2: closing changes nothing, a close is no collective, two streams are ordered. */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4})
  void closingIsNoCollectiveAndTwoStreamsAreOrdered(int ranks) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(ranks, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=60"), MpiBucketEdgesMain.class.getName(),
        "edges");
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    for (int r = 0; r < ranks; r++) {
      assertTrue(run.output().contains("mpi edges rank " + r + " of " + ranks + ": all right"), run.toString());
    }
  }

  /**
   * Issue 40, items 1 and 3: rank 0 closes the plan with its round open after bucket 0; it is
   * told which fields it never marked, and the other ranks wait in bucket 1 for it. The first of them to time out
   * names the plan, the field and rank 0 (on MPI it tells the others at once, so a rank whose own timeout had not
   * come yet, on a busy machine, ends with a RankAbortedException quoting that timeout: either is right).
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3})
  void aPlanClosedMidRoundIsNamedOnEveryRank(int ranks) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(ranks, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=4"), MpiBucketEdgesMain.class.getName(),
        "open-round");
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    assertTrue(run.output().contains("rank 0: close threw: plan edges.OpenRound was closed during a ready()/finish()"
        + " round, with fields never marked ready: [x, y]"), run.toString());
    boolean aTimeout = false;
    for (int r = 1; r < ranks; r++) {
      String timedOut = "rank " + r + ": timeout: plan edges.OpenRound, fields [y], missing [0";
      String toldOfIt = "rank " + r + ": RankAbortedException: rank " + r + ": waiting for plan edges.OpenRound, step 0,"
          + " bucket 1: all-reduce F32 SUM of [y], count 5 abandoned because rank";
      aTimeout |= run.output().contains(timedOut);
      assertTrue(run.output().contains(timedOut) || run.output().contains(toldOfIt), run.toString());
    }
    assertTrue(aTimeout, "a rank timed out naming rank 0: " + run);
  }
}
