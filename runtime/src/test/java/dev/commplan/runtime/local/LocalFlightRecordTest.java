package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DoctorRun;
import dev.commplan.runtime.FlightRecordScenarios;
import dev.commplan.runtime.Lateness;
import dev.commplan.runtime.plan.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 43's proof on the local backend, 4 ranks ({@link FlightRecordScenarios}): what every rank writes to
 * {@code CommOptions.flightRecordDir()} when a rank fails, or on demand, and what the doctor says of it; and the
 * online lateness ({@code Communicator.lateness()}).
 */
class LocalFlightRecordTest {
  private static final int RANKS = 4;

  /** Rank 3 never calls step 3: every rank's file is written, and the doctor names rank 3 and step 3 (exit 1). */
  @Test
  void aRankThatNeverCallsStep3IsNamedByTheDoctor(@TempDir Path dir) throws Exception {
    CommOptions options = CommOptions.timeout(Duration.ofSeconds(1)).withFlightRecordDir(dir);
    try (LocalCluster cluster = new LocalCluster(RANKS, options)) {
      assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        try (Plan plan = FlightRecordScenarios.stepPlan(comm)) {
          FlightRecordScenarios.neverEntersStep3(comm, plan, 3);
        }
      }));
    }
    List<String> files = DoctorRun.files(dir);
    assertEquals(RANKS, files.size(), files.toString());
    String job = files.get(0).substring(0, files.get(0).indexOf(".rank-"));
    for (int r = 0; r < RANKS; r++) {
      assertTrue(files.contains(job + ".rank-" + r + ".json"), files.toString());
    }
    assertFalse(files.stream().anyMatch(f -> f.endsWith(".tmp")));
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor.toString());
    Matcher never = Pattern.compile("never entered by rank 3: #(\\d+) plan train\\.Step, step 3, reduce-scatter")
        .matcher(doctor.out());
    assertTrue(never.find(), doctor.toString());
    assertTrue(doctor.out().contains("ranks 0, 1, 2: failed in it"), doctor.toString());
    assertTrue(doctor.out().contains("rank 3 never entered #" + never.group(1)), doctor.toString());
  }

  /**
   * Rank 2 sleeps 50 ms before each of 16 collectives: the doctor, on the records dumped on demand, names it
   * slowest by a margin of at least 25 ms over the second slowest (its median is about 50 ms, theirs 0: only the
   * last to arrive is late by the rule, so noise would have to delay another rank by 25 ms at most of the
   * collectives to flip it), and so does {@code lateness()} online, the same on every rank.
   */
  @Test
  void aRankThatSleepsBeforeEveryCollectiveIsTheSlowest(@TempDir Path dir) throws Exception {
    ConcurrentHashMap<Integer, List<Lateness>> online = new ConcurrentHashMap<>();
    try (LocalCluster cluster = new LocalCluster(RANKS, CommOptions.timeout(Duration.ofSeconds(30)))) {
      cluster.run(comm -> {
        try (Plan grads = FlightRecordScenarios.gradsPlan(comm)) {
          FlightRecordScenarios.sleepsBeforeEveryCollective(comm, grads, 2, 16, 50);
        }
        online.put(comm.rank(), comm.lateness());
        comm.dumpFlightRecord(dir.resolve("rank-" + comm.rank() + ".json"));
      });
    }
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor.toString()); // rank 2 is late: a problem
    List<long[]> lateness = doctor.lateness();
    assertEquals(RANKS, lateness.size(), doctor.toString());
    assertEquals(2, lateness.get(0)[0], doctor.toString());
    assertTrue(lateness.get(0)[1] - lateness.get(1)[1] >= 25_000, doctor.toString());
    assertTrue(doctor.out().contains("slowest: rank 2, by"), doctor.toString());
    assertEquals(RANKS, online.size());
    for (List<Lateness> l : online.values()) {
      assertEquals(online.get(0), l, "every rank reads the same figures");
    }
    List<Lateness> l = online.get(0);
    assertEquals(RANKS, l.size(), l.toString());
    assertEquals(2, l.get(0).rank(), l.toString());
    assertTrue(l.get(0).medianNanos() - l.get(1).medianNanos() >= 25_000_000L, l.toString());
  }

  /**
   * Ranks 2 and 3 execute two plans in the other order: the local rendezvous fails every rank, every rank's file
   * is written, and the doctor shows the first differing operation with each side's call.
   */
  @Test
  void ranksThatExecutePlansInAnotherOrderDifferAtTheFirstOperation(@TempDir Path dir) throws Exception {
    CommOptions options = CommOptions.timeout(Duration.ofSeconds(30)).withFlightRecordDir(dir);
    try (LocalCluster cluster = new LocalCluster(RANKS, options)) {
      assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        List<Plan> plans = FlightRecordScenarios.orderPlans(comm);
        try {
          FlightRecordScenarios.executeInDifferentOrders(comm, plans, List.of(2, 3));
        } finally {
          plans.forEach(Plan::close);
        }
      }));
    }
    assertEquals(RANKS, DoctorRun.files(dir).size());
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor.toString());
    Matcher first = Pattern.compile("first difference: #(\\d+), differing: plan, fields").matcher(doctor.out());
    assertTrue(first.find(), doctor.toString());
    String seq = first.group(1);
    assertTrue(doctor.out().contains("ranks 0, 1: #" + seq + " plan model.Grads, step 0, all-reduce F32 SUM, count 1024,"
        + " fields [w]"), doctor.toString());
    assertTrue(doctor.out().contains("ranks 2, 3: #" + seq + " plan model.Stats, step 0, all-reduce F32 SUM, count 1024,"
        + " fields [loss]"), doctor.toString());
    assertTrue(Files.readString(dir.resolve(DoctorRun.files(dir).get(0))).contains("\"backend\": \"local\""));
  }
}
