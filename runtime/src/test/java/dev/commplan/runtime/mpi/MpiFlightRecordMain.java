package dev.commplan.runtime.mpi;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.FlightRecordScenarios;
import dev.commplan.runtime.Lateness;
import dev.commplan.runtime.plan.Plan;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/**
 * One process of {@link MpiFlightRecordTest}, started by mpirun on every rank: one of issue 43's scenarios
 * ({@link FlightRecordScenarios}) on a world whose options write the flight records to {@code DIR} when a rank
 * fails. Arguments: {@code stuck DIR}, {@code late DIR} (the records are dumped on demand at the end, and each
 * rank prints {@code rank R: lateness [...]}, what {@code lateness()} said online), or {@code orders DIR}. Each
 * rank prints {@code rank R: SCENARIO: caught CLASS} or {@code rank R: SCENARIO: nothing failed}, and exits 0.
 */
public final class MpiFlightRecordMain {
  private MpiFlightRecordMain() {}

  public static void main(String[] args) throws Exception {
    String scenario = args[0];
    Path dir = Path.of(args[1]);
    Duration timeout = Duration.ofSeconds(scenario.equals("stuck") ? 3 : 60);
    MpiCommunicator comm = MpiBackend.world(CommOptions.timeout(timeout).withFlightRecordDir(dir));
    int rank = comm.rank();
    String outcome = "nothing failed";
    try {
      run(comm, scenario, dir);
    } catch (CommPlanException e) {
      outcome = "caught " + e.getClass().getSimpleName();
    } finally {
      try {
        comm.close();
      } catch (CommPlanException e) {
        outcome = outcome.startsWith("caught") ? outcome : "caught " + e.getClass().getSimpleName() + " at close";
      }
    }
    System.out.println("rank " + rank + ": " + scenario + ": " + outcome);
    System.out.flush();
    MpiBackend.finalizeMpi();
    System.exit(0);
  }

  private static void run(MpiCommunicator comm, String scenario, Path dir) throws InterruptedException {
    switch (scenario) {
      case "stuck" -> {
        try (Plan plan = FlightRecordScenarios.stepPlan(comm)) {
          FlightRecordScenarios.neverEntersStep3(comm, plan, 3);
        }
      }
      case "late" -> {
        try (Plan grads = FlightRecordScenarios.gradsPlan(comm)) {
          FlightRecordScenarios.sleepsBeforeEveryCollective(comm, grads, 2, 16, 50);
        }
        List<Lateness> online = comm.lateness();
        System.out.println("rank " + comm.rank() + ": lateness " + online);
        comm.dumpFlightRecord(dir.resolve("rank-" + comm.rank() + ".json"));
      }
      case "orders" -> {
        List<Plan> plans = FlightRecordScenarios.orderPlans(comm);
        try {
          FlightRecordScenarios.executeInDifferentOrders(comm, plans, List.of(2, 3));
        } finally {
          plans.forEach(Plan::close);
        }
      }
      default -> throw new IllegalArgumentException("no scenario " + scenario);
    }
  }
}
