package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 34's failure matrix under mpirun: the last world rank throws, stalls past the timeout, calls {@code
 * System.exit} or is killed with SIGKILL, in the middle of a plan whose all-reduce runs over the world, tp, dp
 * or pp, on a 2×2 and a 2×2×2 mesh ({@link MpiFaultMain}, a timeout of {@value #TIMEOUT_S} s; one mpirun per
 * case, one after the other, about 7 s each). Two more cases call {@code System.exit} while the others come late
 * to the call ({@code exit-late}): the exiting rank's close of the world must not time out before they do, or
 * its notice ends their waits before one can name it (it did once in CI, with the close waiting once the timeout).
 * Every process ends as docs/reliability/processes.md says, and none in native code: no JVM crash report, no
 * exit code 134 or 139, and no signal in
 * mpirun's output but the SIGKILL of the rank the kill case kills.
 */
class MpiFailureMatrixTest {
  private static final int TIMEOUT_S = 3;
  private static final Duration LIMIT = Duration.ofSeconds(90);
  /** Not anchored at a line's start: mpirun may put it after a piece of another process's long line. */
  private static final Pattern OUTCOME = Pattern.compile("outcome rank (\\d+): ([^\n]*)");

  @BeforeAll
  static void needsMpirun() {
    String reason = MpiLauncher.unavailableReason();
    if (reason != null) {
      System.out.println("MpiFailureMatrixTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
  }

  static Stream<Arguments> cases() {
    List<Arguments> cases = new ArrayList<>();
    for (String fault : List.of("throw", "stall", "exit", "kill")) {
      for (String group : List.of("world", "tp", "dp")) {
        cases.add(Arguments.of("2x2", group, fault));
      }
      for (String group : List.of("world", "tp", "dp", "pp")) {
        cases.add(Arguments.of("2x2x2", group, fault));
      }
    }
    cases.add(Arguments.of("2x2", "dp", "exit-late"));
    cases.add(Arguments.of("2x2x2", "world", "exit-late"));
    return cases.stream();
  }

  @ParameterizedTest(name = "{0} mesh, {1}: the last rank {2}s")
  @MethodSource("cases")
  void everyProcessEndsAsDocumentedAndNoneInNativeCode(String shape, String group, String fault) throws Exception {
    int ranks = shape.equals("2x2") ? 4 : 8;
    int faulty = ranks - 1;
    MpiLauncher.Result run = MpiLauncher.run(ranks, LIMIT, MpiLauncher.classPath(), List.of(),
        MpiFaultMain.class.getName(), shape, group, fault, Integer.toString(TIMEOUT_S));
    String output = run.output();
    assertFalse(run.killed(), run.toString());
    assertNoNativeCrash(run, fault, faulty);

    String[] outcomes = new String[ranks];
    Matcher m = OUTCOME.matcher(output);
    while (m.find()) {
      int r = Integer.parseInt(m.group(1));
      assertTrue(r >= 0 && r < ranks && outcomes[r] == null, "one outcome line per rank: " + run);
      outcomes[r] = m.group(2);
    }
    for (int r = 0; r < ranks; r++) {
      assertTrue(outcomes[r] != null, "rank " + r + " printed no outcome: " + run);
    }
    String faultyWants = switch (fault) {
      case "throw" -> "threw java.lang.IllegalStateException: rank " + faulty + " throws on purpose";
      case "stall" -> "caught RankAbortedException: rank " + faulty + ": ";
      case "exit", "exit-late" -> "exited 3";
      default -> "killed (SIGKILL)";
    };
    assertTrue(outcomes[faulty].startsWith(faultyWants), "rank " + faulty + ": " + run);
    for (int r = 0; r < faulty; r++) {
      boolean commPlan = outcomes[r].startsWith("caught CommTimeoutException: ")
          || outcomes[r].startsWith("caught RankAbortedException: ");
      // SIGKILL: mpirun sees the process die without MPI_Finalize and ends the others at once
      assertTrue(commPlan || fault.equals("kill") && outcomes[r].equals("ended from outside"), "rank " + r + ": " + run);
    }
    if (!fault.equals("kill")) {
      // a rank that waited names the last one as not in its call: no answer, or closing a communicator (the world,
      // or, where it threw inside try-with-resources, an axis of its mesh, whose close compares its last calls over
      // the agreement check's own communicator); by its rank in the world, or by its world rank beside its rank in
      // an axis where the rank that timed out waited in its own close of that axis; or, where that rank's partners in
      // its close were all in other calls (the last rank is in none of its groups: 2x2, tp, exit), as a rank outside
      // its group that left its calls
      assertTrue(Pattern.compile("Not in this call: [^(]*\\brank " + faulty + ", ").matcher(output).find()
          || Pattern.compile("Not in this call: [^\\n]*\\(world rank " + faulty + "\\), (closing|no answer)")
              .matcher(output).find()
          || Pattern.compile("wait for a rank that left its calls: [^\\n]*\\bworld rank " + faulty + ", closing ")
              .matcher(output).find(), run.toString());
      // the close's comparison meets no call of the others (before, it met a peer's plan call: MPI_ERR_TRUNCATE)
      assertFalse(output.contains("truncated") || output.contains("MPI Error in NBC subrequest"), run.toString());
    }
    assertNotEquals(0, run.exitCode(), run.toString());
    StringBuilder seen = new StringBuilder(); // each rank's outcome in a word, for docs/reliability/processes.md
    for (int r = 0; r < ranks; r++) {
      String o = outcomes[r];
      seen.append(r == 0 ? "" : ", ").append(r).append(' ').append(o.startsWith("caught ")
          ? o.substring(7, o.indexOf(':')) : o.startsWith("threw ") ? "threw" : o);
    }
    System.out.printf(Locale.ROOT, "failure matrix %s %s %s: exit %d in %.1f s: %s%n", shape, group, fault,
        run.exitCode(), run.elapsed().toMillis() / 1e3, seen);
  }

  /**
   * No process died in native code: no JVM crash report, no exit code 134 (abort) or 139 (segmentation fault),
   * no signal in mpirun's output but, in the kill case, SIGKILL of rank {@code faulty}.
   */
  static void assertNoNativeCrash(MpiLauncher.Result run, String fault, int faulty) {
    String output = run.output();
    assertFalse(output.contains("A fatal error has been detected by the Java Runtime Environment"), run.toString());
    assertFalse(output.contains("SIGSEGV") || output.contains("SIGBUS") || output.contains("hs_err_pid"), run.toString());
    assertFalse(output.contains("MPI_ERRORS_ARE_FATAL"), run.toString());
    assertTrue(run.exitCode() != 134 && run.exitCode() != 139, run.toString());
    String killed = "mpirun noticed that process rank " + faulty + " with PID ";
    for (String line : output.split("\n")) {
      if (line.toLowerCase(Locale.ROOT).contains("signal")) {
        assertTrue(fault.equals("kill") && line.startsWith(killed) && line.endsWith("exited on signal 9 (Killed)."),
            "a signal: " + line + "\n" + run);
      }
    }
  }
}
