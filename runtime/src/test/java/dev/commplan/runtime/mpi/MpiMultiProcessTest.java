package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.conformance.MeshSuite;
import dev.commplan.runtime.SameDisagreement;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The MPI backend across real processes: {@code mpirun --oversubscribe -np N} of {@link MpiSuiteMain}
 * (the conformance kit on every rank, meshes of 4 and 8 processes among it, and MPI's own checks) for N = 2, 3,
 * 4, 5, 8, the two faults (a rank killed mid-plan, a rank that never joins), MPI errors as exceptions ({@link
 * MpiErrorsMain}) and a family that fails together ({@link MpiFamilyMain}). Skips, saying why, without mpirun
 * or Open MPI.
 */
class MpiMultiProcessTest {
  private static final Duration LIMIT = Duration.ofSeconds(180);
  private static final Duration KIT_LIMIT = Duration.ofSeconds(420);

  @BeforeAll
  static void needsMpirun() {
    String reason = MpiLauncher.unavailableReason();
    if (reason != null) {
      System.out.println("MpiMultiProcessTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
  }

  /**
   * The conformance kit on every rank (with the meshes of this world size: 2×2 on 4 processes; 2×4, 4×2 and
   * 2×2×2 on 8), then MPI's own checks ({@link MpiSuiteMain}). The limit is the kit's: 8 processes on a 2-core
   * machine take minutes.
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4, 5, 8})
  void theConformanceKitAndMpisOwnChecksPassOnEveryRank(int ranks) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(ranks, KIT_LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=60"), MpiSuiteMain.class.getName());
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    assertTrue(run.output().contains("mpi suite: all " + ranks + " ranks passed"), run.toString());
    Matcher m = Pattern.compile("mpi suite rank (\\d+) of " + ranks + ": the conformance kit \\(1932 collective runs\\)"
        + ".* all right").matcher(run.output());
    int passed = 0;
    while (m.find()) {
      passed++;
    }
    assertEquals(ranks, passed, run.toString());
    int meshes = MeshSuite.meshes(ranks).size();
    assertTrue(Pattern.compile("conformance kit on rank 0 of " + ranks + ": .* a split and " + meshes + " meshes: all"
        + " right").matcher(run.output()).find(), run.toString());
  }

  /**
   * Issue 25, part 2: MPI errors become CommPlan exceptions on every rank, never Open MPI's fatal handler. A
   * send of 8 into a receive of 4 (the receiver names both counts, the others learn it at close at the
   * latest), all-reduce and all-to-all counts that differ, and a plan with the order check racing a direct
   * call ({@link MpiErrorsMain}); each on a fresh world, in one job.
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4})
  void mpiErrorsBecomeExceptionsOnEveryRank(int ranks) throws Exception {
    MpiLauncher.Result run = everyRankCatches(ranks, List.of("truncated-recv", "count", "alltoall-count", "order-direct"));
    assertTrue(run.output().contains("rank 1: truncated-recv: caught MpiException: rank 1: MPI_Testall failed while"
        + " completing direct call: recv I32 from rank 0, count 4: truncated: rank 0 sent 8 elements into this receive"
        + " of 4"), run.toString());
    // the sender learns it at close (before, or in, the comparison of its last calls that a close makes), or
    // while its send (or the agreement check's message after it) is still completing when the notice comes
    assertTrue(Pattern.compile("rank 0: truncated-recv: caught RankAbortedException( at close)?: rank 0: (close\\(\\) of"
        + " world|waiting for direct call: send I32 to rank 1, count 8|waiting for agreement check: send U64 to rank 1,"
        + " count 7|waiting for agreement check at close\\(\\) of world: all-gather U64, count 6) abandoned because"
        + " rank 1 of world failed: rank 1: MPI_Testall failed").matcher(run.output()).find(), run.toString());
    // Open MPI's libnbc reports this one in the call's status (MPI_ERR_TRUNCATE) or, depending on when it finds
    // it, as its own error -1 from MPI_Testall after printing the truncation; the message says which
    assertTrue(run.output().contains("count: caught MpiException: rank 0: MPI_Testall failed while completing direct"
        + " call: all-reduce F32 SUM, count 4: truncated: a message inside the all-reduce was longer than this rank's"
        + " count of 4 allows") || run.output().contains("count: caught MpiException: rank 0: MPI_Testall failed while"
        + " completing direct call: all-reduce F32 SUM, count 4: Open MPI's engine for non-blocking collectives"),
        run.toString());
    assertTrue(run.output().contains("alltoall-count: caught MpiException: rank 0: MPI_Testall failed while"
        + " completing direct call: all-to-all F32, count 2: truncated"), run.toString());
  }

  /**
   * Runs {@link MpiErrorsMain}'s {@code cases} on {@code ranks} processes and checks what every case owes: the job
   * ends by itself with 0, never in Open MPI's fatal handler, and every rank caught a CommPlan exception in each.
   */
  private static MpiLauncher.Result everyRankCatches(int ranks, List<String> cases) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(ranks, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=60"), MpiErrorsMain.class.getName(),
        cases.toArray(String[]::new));
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    assertFalse(run.output().contains("MPI_ERRORS_ARE_FATAL"), run.toString());
    for (String kase : cases) {
      for (int r = 0; r < ranks; r++) {
        assertTrue(run.output().contains("rank " + r + ": " + kase + ": caught "), "rank " + r + ", " + kase + ": " + run);
      }
    }
    return run;
  }

  /**
   * Issue 25, part 1: the disagreements MPI completes without an error (each rank its own root, a send of 4
   * into a receive of 8, F32 sent into I32, a plan and a direct call in opposite orders) end, on every rank,
   * in a CommPlan exception that names them: the agreement check, on by default ({@link MpiErrorsMain}).
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4})
  void disagreementsMpiCompletesAreCaughtOnEveryRank(int ranks) throws Exception {
    MpiLauncher.Result run = everyRankCatches(ranks, List.of("root", "scatter-root", "short-send", "type", "order"));
    // Every rank compares the window itself and names both sides, or, when another rank's failure notice comes
    // while it still waits (for the check, or a call after it), ends with that rank's finding, quoted.
    for (String kase : List.of("root", "scatter-root", "order")) {
      for (int r = 0; r < ranks; r++) {
        assertTrue(Pattern.compile("rank " + r + ": " + kase + ": caught (DisagreementException: world: the ranks"
            + " disagree about their calls|RankAbortedException: rank " + r + ": waiting for [^\\n]* abandoned because"
            + " rank \\d+ of world failed: world: the ranks disagree about their calls)").matcher(run.output()).find(),
            run.toString());
      }
    }
    assertTrue(Pattern.compile("rank \\d: root: caught DisagreementException: world: the ranks disagree about their"
        + " calls: call 1 was, on rank 0, direct call: broadcast F32 root 0, count 8; on rank 1( \\(the first of the"
        + " differing ranks \\[[0-9, ]+\\]\\))?, direct call: broadcast F32 root 1, count 8 \\(differing: root\\)")
        .matcher(run.output()).find(), run.toString());
    assertTrue(run.output().contains("order: caught DisagreementException: world: the ranks disagree about their calls:"
        + " call 1 was, on rank 0, plan errors.Order, execute; on rank 1, direct call: all-reduce F32 SUM, count 256"
        + " (differing: call (another call at this place))"), run.toString());
    assertTrue(run.output().contains("rank 1: short-send: caught DisagreementException: world: rank 0's sends to rank 1"
        + " and rank 1's receives from rank 0 disagree: a message was, on rank 0, send F32 to rank 1, count 4; on rank"
        + " 1, recv F32 from rank 0, count 8 (differing: count)"), run.toString());
    assertTrue(run.output().contains("rank 1: type: caught DisagreementException: world: rank 0's sends to rank 1 and"
        + " rank 1's receives from rank 0 disagree: a message was, on rank 0, send F32 to rank 1, count 8; on rank 1,"
        + " recv I32 from rank 0, count 8 (differing: data type)"), run.toString());
    // the sender, and the ranks outside the pair, learn it from the family's failure
    // (directly, or through a rank that gave up on it and quotes it)
    for (String kase : List.of("short-send", "type")) {
      for (int r = 0; r < ranks; r++) {
        if (r != 1) {
          assertTrue(Pattern.compile("rank " + r + ": " + kase + ": caught RankAbortedException .*rank 1 of world"
              + " failed: world: rank 0's sends to rank 1 and rank 1's receives").matcher(run.output()).find(),
              run.toString());
        }
      }
    }
  }

  /**
   * Issue 42, item 3: {@link SameDisagreement}'s scenarios that MPI completes (its all-reduce of different counts is
   * an MPI error, a truncation, before any check compares it) end, on every rank that takes part, in the one message
   * the local backend's rendezvous and mailboxes give for the same mistake: the rank's own DisagreementException,
   * or the RankAbortedException that quotes the first finder's; and some rank finds it itself.
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3})
  void oneMistakeEndsInTheMessageEveryBackendGives(int ranks) throws Exception {
    List<String> scenarios = List.of("broadcast-count", "plan-against-direct-call", "short-send", "send-type");
    MpiLauncher.Result run = everyRankCatches(ranks, scenarios.stream().map(s -> "same-" + s).toList());
    for (String scenario : scenarios) {
      String message = SameDisagreement.message(scenario, ranks);
      for (int r = 0; r < (SameDisagreement.pairOnly(scenario) ? 2 : ranks); r++) { // a send's: ranks 0 and 1 alone
        String caught = "rank " + r + ": same-" + scenario + ": caught ";
        assertTrue(run.output().contains(caught + "DisagreementException: " + message + "\n")
            || Pattern.compile(Pattern.quote(caught) + "RankAbortedException( at close)?: [^\\n]*: "
                + Pattern.quote(message)).matcher(run.output()).find(), "rank " + r + ", " + scenario + ": " + run);
      }
      assertTrue(run.output().contains("same-" + scenario + ": caught DisagreementException: " + message + "\n"),
          scenario + ": " + run);
    }
  }

  /**
   * Issue 23: one family fails together. World rank 3 (rank 1 of its tp group) throws, stalls past the timeout,
   * exits, or refuses a split of tp (color -1, issue 34) in the middle of a run ({@link MpiFamilyMain}, mesh
   * [dp=2, tp=2], timeout 3 s): every other process ends with a CommPlan exception within its timeout (and the grace
   * for answers), the group and that rank are named, and nothing hangs. (A rank that throws closes its mesh on the
   * way out, and a close compares the group's last calls, over the check's own communicator: the others time out
   * in their calls, which that comparison never meets, and name the rank as closing tp.)
   */
  @ParameterizedTest(name = "rank 3 {0}s")
  @ValueSource(strings = {"throw", "stall", "exit", "negative-color"})
  void aFailureInOneGroupEndsTheWholeFamily(String fault) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(4, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=3"), MpiFamilyMain.class.getName(), fault);
    assertFalse(run.killed(), run.toString());
    assertTrue(run.exitCode() != 0, run.toString());
    assertTrue(run.elapsed().toSeconds() < 90, run.toString());
    for (int r = 0; r < 3; r++) {
      assertTrue(run.output().contains("rank " + r + ": caught CommTimeoutException: ")
          || run.output().contains("rank " + r + ": caught RankAbortedException: "), "rank " + r + ": " + run);
    }
    assertFalse(run.output().contains("rank 0: round 1 done"), run.toString());
    assertTrue(run.output().contains("axis tp of mesh [dp=2, tp=2]"), run.toString());
    assertFalse(run.output().contains("MPI_ERRORS_ARE_FATAL"), run.toString());
    if (!fault.equals("negative-color")) {
      // world rank 3 is named as not in the call: no answer, or closing a communicator (fault "throw": its
      // try-with-resources closes the mesh, and the close of tp compares its last calls, over the agreement
      // check's own communicator, where it waits for ranks that never close tp)
      assertTrue(run.output().contains("Not in this call: rank 1 (world rank 3), ")
          || run.output().contains("Not in this call: rank 3, "), run.toString());
      assertFalse(run.output().contains("truncated") || run.output().contains("MPI Error in NBC subrequest"),
          run.toString());
    } else {
      // issue 34: the refusing rank fails the family at once (AbstractCommunicator.splitRefused), so every other
      // rank ends with RankAbortedException naming it and the refusal, none waiting out its timeout
      for (int r = 0; r < 3; r++) {
        assertTrue(Pattern.compile("rank " + r + ": caught RankAbortedException: [^\n]*abandoned because rank 1 of axis"
            + " tp of mesh \\[dp=2, tp=2\\] \\(world rank 3\\) failed: axis tp of mesh \\[dp=2, tp=2\\], rank 1:"
            + " split\\(color -1, key 1\\): the color must be >= 0").matcher(run.output()).find(), "rank " + r + ": " + run);
      }
      assertFalse(run.output().contains("CommTimeoutException"), run.toString());
    }
  }

  /**
   * mpirun notices the dead process and ends the others, which are waiting inside the plan, before their
   * own timeout (150 s here) would: no rank reports a timeout.
   */
  @Test
  void aRankKilledMidPlanEndsTheJob() throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(3, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=150"), MpiSuiteMain.class.getName(), "--fault", "kill");
    assertFalse(run.killed(), run.toString());
    assertTrue(run.output().contains("rank 2: killed (SIGKILL) in the middle of plan faults.TwoSteps"), run.toString());
    assertTrue(run.output().contains("signal 9"), run.toString()); // mpirun names the dead process and the signal
    assertTrue(run.exitCode() != 0, run.toString());
    assertFalse(run.output().contains("second run done"), run.toString());
    assertFalse(run.output().contains("for collectives that did not complete"), run.toString());
  }

  /**
   * Issue 20, case 1, across processes: rank 1 executes plans A and B (the order check on) in the other order;
   * every rank names both, from the agreement check compared right after the first execute.
   */
  @Test
  void theOrderCheckCatchesPlansExecutedInAnotherOrderOnOneRank() throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(3, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=60"), MpiSuiteMain.class.getName(), "--order");
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    for (int r = 0; r < 3; r++) { // its own finding, or (the first finder's notice came first) that one, quoted
      assertTrue(Pattern.compile("rank " + r + ": order check caught (DisagreementException: |RankAbortedException: .*)"
          + "world: the ranks disagree about their calls: call 1 was, on rank 0, plan t.A, execute; on rank 1, plan t.B,"
          + " execute \\(differing: call \\(another call at this place\\)\\)").matcher(run.output()).find(),
          run.toString());
    }
    assertTrue(run.output().contains("order check caught DisagreementException: world: the ranks disagree about their"
        + " calls: call 1 was, on rank 0, plan t.A, execute; on rank 1, plan t.B, execute (differing: call (another call"
        + " at this place))"), run.toString());
  }

  /**
   * Issue 34, item 3, across processes: two instances of one plan class executed in opposite orders on rank 1
   * fail on every rank naming both instances, with the order check and without it ({@link MpiErrorsMain}).
   * A rank that another rank's failure notice reaches first quotes that rank's finding.
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3})
  void twoInstancesOfOnePlanInOppositeOrdersAreCaughtOnEveryRank(int ranks) throws Exception {
    MpiLauncher.Result run = everyRankCatches(ranks, List.of("instances", "instances-ordered"));
    for (String kase : List.of("instances", "instances-ordered")) {
      for (int r = 0; r < ranks; r++) {
        assertTrue(Pattern.compile("rank " + r + ": " + kase + ": caught (DisagreementException|RankAbortedException)"
            + ": .*world: the ranks disagree about their calls: call 1 was, on rank 0, plan errors.Sum #1, execute; on"
            + " rank 1, plan errors.Sum #2, execute \\(differing: plan instance").matcher(run.output()).find(),
            "rank " + r + ", " + kase + ": " + run);
      }
      // some rank finds it itself (which one is a race: a rank whose all-gather completes later may be aborted by
      // another's failure notice first, rank 0 included), naming both instances, the same message on every rank
      assertTrue(run.output().contains(kase + ": caught DisagreementException: world: the ranks disagree about their"
          + " calls: call 1 was, on rank 0, plan errors.Sum #1, execute; on rank 1, plan errors.Sum #2, execute"),
          run.toString());
      assertFalse(run.output().contains(kase + ": synchronize returned"), run.toString());
    }
  }

  /**
   * Issue 34, item 4: the last broadcast over a mesh's axis tp, each rank its own root, is the last call there;
   * MPI completes it (each rank keeps its own data), and the last check, where the mesh closes tp, fails every
   * rank naming the call ({@link MpiErrorsMain}'s {@code tp-root-at-close}).
   */
  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4})
  void theLastCallsOnAMeshAxisAreComparedWhereTheMeshCloses(int ranks) throws Exception {
    MpiLauncher.Result run = everyRankCatches(ranks, List.of("tp-root-at-close"));
    for (int r = 0; r < ranks; r++) {
      assertTrue(run.output().contains("rank " + r + ": tp-root-at-close: the broadcast completed; closing the mesh"),
          run.toString());
      assertTrue(Pattern.compile("rank " + r + ": tp-root-at-close: caught (DisagreementException: |RankAbortedException:"
          + " .*)axis tp of mesh \\[tp=" + ranks + "\\]: the ranks disagree about their calls: call 2 was, on rank 0,"
          + " direct call: broadcast F32 root 0, count 8; on rank 1( \\(the first of the differing ranks \\[[0-9,"
          + " ]+\\]\\))?, direct call: broadcast F32 root 1, count 8 \\(differing: root\\)").matcher(run.output())
          .find(), "rank " + r + ": " + run);
    }
    assertTrue(Pattern.compile("tp-root-at-close: caught DisagreementException: axis tp of mesh").matcher(run.output())
        .find(), run.toString());
  }

  /**
   * A rank that never joins: the others wait the timeout (3 s), tell every rank, and throw a CommTimeoutException
   * naming what they waited for and the rank that did not answer (or, told first, a RankAbortedException naming
   * the rank that timed out); MPI_Finalize, which would wait for the sleeping rank, is given up after the
   * timeout, and the job ends (mpirun ends the sleeping rank once the others exit).
   */
  @Test
  void aRankThatNeverJoinsIsNamedByTheOthersAtTheTimeout() throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(3, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=3"), MpiSuiteMain.class.getName(), "--fault", "hang");
    assertFalse(run.killed(), run.toString());
    assertEquals(5, run.exitCode(), run.toString());
    for (int r = 0; r < 2; r++) { // the first to time out tells the other, which may give up before its own deadline
      assertTrue(run.output().contains("rank " + r + ": CommTimeoutException: rank " + r + " (world rank " + r + ") waited ")
          || run.output().contains("rank " + r + ": RankAbortedException: rank " + r + ": waiting for plan faults.TwoSteps,"
              + " step 0: all-reduce F32 SUM of [grads], count 262144 abandoned because rank " + (1 - r) + " of world timed"
              + " out"), run.toString());
    }
    assertTrue(run.output().contains("(the timeout is PT3S) for calls that did not complete:\n"
        + "  plan faults.TwoSteps, step 0: all-reduce F32 SUM of [grads], count 262144"), run.toString());
    assertTrue(run.output().contains("Not in this call: rank 2, no answer within 300 ms (of world): stalled, gone, or"
        + " past it"), run.toString());
    assertFalse(run.output().contains("second run done"), run.toString());
    assertFalse(run.output().contains("MPI_ABORT"), run.toString());
  }
}
