package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.DoctorRun;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 43's proof on the MPI backend, 4 processes under mpirun ({@link MpiFlightRecordMain}, the scenarios of
 * {@code FlightRecordScenarios}): every process writes its flight record to the options' folder when a rank
 * fails, those only waiting included, or on demand; the doctor, run on the folder, names what went wrong; and
 * {@code lateness()} names the late rank online. Skips, saying why, without mpirun or Open MPI.
 */
class MpiFlightRecordTest {
  private static final Duration LIMIT = Duration.ofSeconds(180);
  private static final int RANKS = 4;

  @BeforeAll
  static void needsMpirun() {
    String reason = MpiLauncher.unavailableReason();
    if (reason != null) {
      System.out.println("MpiFlightRecordTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
  }

  private static MpiLauncher.Result run(String scenario, Path dir) throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(RANKS, LIMIT, MpiLauncher.classPath(), List.of(),
        MpiFlightRecordMain.class.getName(), scenario, dir.toString());
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    return run;
  }

  /** Rank 3 never calls step 3: every process writes its file; the doctor names rank 3 and step 3, exit 1. */
  @Test
  void aRankThatNeverCallsStep3IsNamedByTheDoctor(@TempDir Path dir) throws Exception {
    MpiLauncher.Result run = run("stuck", dir);
    for (int r = 0; r < RANKS; r++) {
      assertTrue(run.output().contains("rank " + r + ": stuck: caught"), run.toString());
    }
    List<String> files = DoctorRun.files(dir);
    assertEquals(RANKS, files.size(), files + "\n" + run);
    String job = files.get(0).substring(0, files.get(0).indexOf(".rank-"));
    for (int r = 0; r < RANKS; r++) {
      assertTrue(files.contains(job + ".rank-" + r + ".json"), files.toString());
    }
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor + "\n" + run);
    Matcher never = Pattern.compile("never entered by rank 3: #(\\d+) plan train\\.Step, step 3, reduce-scatter")
        .matcher(doctor.out());
    assertTrue(never.find(), doctor.toString());
    assertTrue(doctor.out().contains("rank 3 never entered #" + never.group(1)), doctor.toString());
    assertTrue(Files.readString(dir.resolve(files.get(0))).contains("\"backend\": \"mpi\""));
  }

  /**
   * Rank 2 sleeps 50 ms before each of 16 collectives: the doctor names it slowest, by at least 25 ms over the
   * second slowest (see LocalFlightRecordTest for why noise cannot flip it); {@code lateness()} online, the same
   * on every rank, names it first by the same margin.
   */
  @Test
  void aRankThatSleepsBeforeEveryCollectiveIsTheSlowest(@TempDir Path dir) throws Exception {
    MpiLauncher.Result run = run("late", dir);
    assertEquals(RANKS, DoctorRun.files(dir).size(), run.toString());
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor + "\n" + run);
    List<long[]> lateness = doctor.lateness();
    assertEquals(RANKS, lateness.size(), doctor.toString());
    assertEquals(2, lateness.get(0)[0], doctor.toString());
    assertTrue(lateness.get(0)[1] - lateness.get(1)[1] >= 25_000, doctor.toString());
    Matcher online = Pattern.compile("rank (\\d): lateness \\[Lateness\\[rank=(\\d+), windows=\\d+, medianNanos=(\\d+),"
        + " worstNanos=\\d+\\], Lateness\\[rank=\\d+, windows=\\d+, medianNanos=(\\d+),").matcher(run.output());
    int ranksSaid = 0;
    while (online.find()) {
      ranksSaid++;
      assertEquals("2", online.group(2), run.toString());
      assertTrue(Long.parseLong(online.group(3)) - Long.parseLong(online.group(4)) >= 25_000_000L, run.toString());
    }
    assertEquals(RANKS, ranksSaid, run.toString());
  }

  /** Ranks 2 and 3 execute two plans in the other order: every rank fails and writes; the doctor shows both calls. */
  @Test
  void ranksThatExecutePlansInAnotherOrderDifferAtTheFirstOperation(@TempDir Path dir) throws Exception {
    MpiLauncher.Result run = run("orders", dir);
    assertEquals(RANKS, DoctorRun.files(dir).size(), run.toString());
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor + "\n" + run);
    Matcher first = Pattern.compile("first difference: #(\\d+), differing: plan, fields").matcher(doctor.out());
    assertTrue(first.find(), doctor.toString());
    String seq = first.group(1);
    assertTrue(doctor.out().contains("ranks 0, 1: #" + seq + " plan model.Grads, step 0, all-reduce F32 SUM, count 1024,"
        + " fields [w]"), doctor.toString());
    assertTrue(doctor.out().contains("ranks 2, 3: #" + seq + " plan model.Stats, step 0, all-reduce F32 SUM, count 1024,"
        + " fields [loss]"), doctor.toString());
  }
}
