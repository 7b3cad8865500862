package dev.commplan.runtime.local;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.FlightRecordScenarios;
import dev.commplan.runtime.plan.Plan;

/**
 * The run of docs/doctor.md's worked example: 4 local ranks execute plan {@code train.Step} once whole, then its
 * steps one by one, and rank 3 never calls step 3 ({@link FlightRecordScenarios#neverEntersStep3}); the others
 * wait there until their timeout. The options come from the system properties, so that the command line shows
 * them: {@code -Dcommplan.timeout=1 -Dcommplan.flightRecordDir=DIR}. Prints the run's failure, first line.
 */
public final class HangExample {
  private HangExample() {}

  public static void main(String[] args) {
    CommOptions options = CommOptions.defaults();
    System.out.println("4 local ranks, timeout " + options.timeout() + ", flight records to "
        + options.flightRecordDir());
    try (LocalCluster cluster = new LocalCluster(4, options)) {
      cluster.run(comm -> {
        try (Plan plan = FlightRecordScenarios.stepPlan(comm)) {
          FlightRecordScenarios.neverEntersStep3(comm, plan, 3);
        }
      });
      System.out.println("the run returned");
    } catch (CommPlanException e) {
      System.out.println("the run failed: " + e.getMessage().lines().findFirst().orElse(""));
    }
  }
}
