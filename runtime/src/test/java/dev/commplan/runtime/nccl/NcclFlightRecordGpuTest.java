package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DoctorRun;
import dev.commplan.runtime.FlightRecordScenarios;
import dev.commplan.runtime.Lateness;
import dev.commplan.runtime.plan.Plan;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Issue 43's proof on NCCL ({@link FlightRecordScenarios}), at each world size of {@link GpuRanks} of 4 ranks or
 * more ({@code -Dcommplan.gpu.ranks=4}; several ranks on one GPU with NCCL 2.30 and the opt-in): what every rank
 * writes to {@code CommOptions.flightRecordDir()} when a rank fails, or on demand, and what the doctor, run as a
 * library, says of it; and the online lateness. Rank 3 is the one that never calls step 3, rank 2 the one that
 * sleeps, ranks 2 and 3 those that execute the plans in the other order. Without a GPU it runs against the CPU
 * model (gpu-model/README.md: {@code -Dgroups=gpu -Dcommplan.gpuModel=LIB -Dcommplan.gpu.ranks=4}, and with
 * {@code -Dcommplan.gpuModel.devices=1 -Dcommplan.nccl.multiRankGpu=true} for 4 ranks on one device).
 */
@NcclRanksGpuTest
class NcclFlightRecordGpuTest {
  private static final Duration GENEROUS = Duration.ofSeconds(300);

  static java.util.stream.Stream<Integer> ranks() {
    return GpuRanks.requested().stream();
  }

  private static void assumeFourOrMore(int ranks) {
    assumeTrue(ranks >= 4, () -> "the scenarios name ranks 2 and 3: 4 ranks or more, not " + ranks);
    GpuRanks.assumeRunnable(ranks);
  }

  /** Rank 3 never calls step 3: every rank's file is written, and the doctor names rank 3 and step 3 (exit 1). */
  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void aRankThatNeverCallsStep3IsNamedByTheDoctor(int ranks, @TempDir Path dir) throws Exception {
    assumeFourOrMore(ranks);
    CommOptions options = CommOptions.timeout(Duration.ofSeconds(3)).withFlightRecordDir(dir);
    assertTimeoutPreemptively(GENEROUS, () -> {
      try (Cluster cluster = NcclBackend.cluster(ranks, options)) {
        assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
          try (Plan plan = FlightRecordScenarios.stepPlan(comm)) {
            FlightRecordScenarios.neverEntersStep3(comm, plan, 3);
          }
        }));
      }
    });
    List<String> files = DoctorRun.files(dir);
    assertEquals(ranks, files.size(), files.toString());
    String job = files.get(0).substring(0, files.get(0).indexOf(".rank-"));
    for (int r = 0; r < ranks; r++) {
      assertTrue(files.contains(job + ".rank-" + r + ".json"), files.toString());
    }
    assertFalse(files.stream().anyMatch(f -> f.endsWith(".tmp")));
    assertTrue(Files.readString(dir.resolve(files.get(0))).contains("\"backend\": \"nccl\""));
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor.toString());
    Matcher never = Pattern.compile("never entered by rank 3: #(\\d+) plan train\\.Step, step 3, reduce-scatter")
        .matcher(doctor.out());
    assertTrue(never.find(), doctor.toString());
    assertTrue(doctor.out().contains("rank 3 never entered #" + never.group(1)), doctor.toString());
  }

  /**
   * Rank 2 sleeps 50 ms before each of 16 collectives: the doctor, on the records dumped on demand, names it
   * slowest by at least 25 ms over the second slowest (a rank's wait here is its {@code synchronize()} after the
   * collective, and, where ranks share a GPU, the fence they meet at before launching it: the others wait about
   * 50 ms, rank 2 hardly at all), and so does {@code lateness()} online.
   */
  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void aRankThatSleepsBeforeEveryCollectiveIsTheSlowest(int ranks, @TempDir Path dir) throws Exception {
    assumeFourOrMore(ranks);
    ConcurrentHashMap<Integer, List<Lateness>> online = new ConcurrentHashMap<>();
    assertTimeoutPreemptively(GENEROUS, () -> {
      try (Cluster cluster = NcclBackend.cluster(ranks, CommOptions.timeout(Duration.ofSeconds(60)))) {
        cluster.run(comm -> {
          try (Plan grads = FlightRecordScenarios.gradsPlan(comm)) {
            FlightRecordScenarios.sleepsBeforeEveryCollective(comm, grads, 2, 16, 50);
          }
          online.put(comm.rank(), comm.lateness());
          comm.dumpFlightRecord(dir.resolve("rank-" + comm.rank() + ".json"));
        });
      }
    });
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor.toString());
    List<long[]> lateness = doctor.lateness();
    assertEquals(ranks, lateness.size(), doctor.toString());
    assertEquals(2, lateness.get(0)[0], doctor.toString());
    assertTrue(lateness.get(0)[1] - lateness.get(1)[1] >= 25_000, doctor.toString());
    assertEquals(ranks, online.size());
    List<Lateness> l = online.get(0);
    for (List<Lateness> other : online.values()) {
      assertEquals(l, other, "every rank reads the same figures");
    }
    assertEquals(2, l.get(0).rank(), l.toString());
    assertTrue(l.get(0).medianNanos() - l.get(1).medianNanos() >= 25_000_000L, l.toString());
  }

  /**
   * Ranks 2 and 3 execute two plans of one shape in the other order: NCCL completes both (it matches calls by
   * order, not by name), the agreement check finds the difference, every rank's file is written, and the doctor
   * shows the first differing operation with each side's call.
   */
  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void ranksThatExecutePlansInAnotherOrderDifferAtTheFirstOperation(int ranks, @TempDir Path dir) throws Exception {
    assumeFourOrMore(ranks);
    CommOptions options = CommOptions.timeout(Duration.ofSeconds(30)).withFlightRecordDir(dir);
    assertTimeoutPreemptively(GENEROUS, () -> {
      try (Cluster cluster = NcclBackend.cluster(ranks, options)) {
        assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
          List<Plan> plans = FlightRecordScenarios.orderPlans(comm);
          try {
            FlightRecordScenarios.executeInDifferentOrders(comm, plans, List.of(2, 3));
          } finally {
            plans.forEach(Plan::close);
          }
        }));
      }
    });
    assertEquals(ranks, DoctorRun.files(dir).size());
    DoctorRun doctor = DoctorRun.on(dir);
    assertEquals(1, doctor.status(), doctor.toString());
    Matcher first = Pattern.compile("first difference: #(\\d+), differing: plan, fields").matcher(doctor.out());
    assertTrue(first.find(), doctor.toString());
    String seq = first.group(1);
    List<Integer> inOrder = new ArrayList<>(IntStream.range(0, ranks).boxed().toList());
    inOrder.removeAll(List.of(2, 3));
    String others = inOrder.stream().map(String::valueOf).collect(Collectors.joining(", "));
    assertTrue(doctor.out().contains("ranks " + others + ": #" + seq + " plan model.Grads, step 0, all-reduce F32 SUM,"
        + " count 1024, fields [w]"), doctor.toString());
    assertTrue(doctor.out().contains("ranks 2, 3: #" + seq + " plan model.Stats, step 0, all-reduce F32 SUM, count 1024,"
        + " fields [loss]"), doctor.toString());
  }
}
