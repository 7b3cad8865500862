package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * The runtime switches that every generated builder carries ({@code hostAccessGuard}, {@code
 * fingerprintCheck}, {@code orderCheck}) and the generated plan's {@code capture}.
 */
class GeneratedBuilderOptionsTest {

  @Test
  void theGuardIsOnByDefaultAndTheBuilderTurnsItOff() {
    try (Cluster cluster = Backends.local(2)) {
      cluster.run(comm -> {
        try (SeedPlan guarded = SeedPlan.builder().build(comm);
            SeedPlan unguarded = SeedPlan.builder().hostAccessGuard(false).build(comm)) {
          guarded.total().set(0, comm.rank() + 1f);
          guarded.execute(comm.stream());
          BufferInFlightException e = assertThrows(BufferInFlightException.class, () -> guarded.total().get(0));
          assertEquals("total", e.field());
          comm.stream().synchronize();
          assertEquals(3f, guarded.total().get(0));

          unguarded.total().set(0, comm.rank() + 1f);
          unguarded.execute(comm.stream());
          unguarded.total().get(0); // not refused: the guard is off for this plan (the value may be either)
          comm.stream().synchronize();
          assertEquals(3f, unguarded.total().get(0));
        }
      });
    }
  }

  @Test
  void withTheFingerprintCheckOffOneRankMayBuildAlone() {
    try (Cluster cluster = Backends.local(2, CommOptions.timeout(Duration.ofSeconds(1)))) {
      cluster.run(comm -> {
        if (comm.rank() == 0) {
          SeedPlan.builder().fingerprintCheck(false).build(comm).close(); // no collective in build
        }
      });
    }
    // With the check on (the default), building is a collective: the rank that builds alone times out.
    try (Cluster cluster = Backends.local(2, CommOptions.timeout(Duration.ofSeconds(1)))) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        if (comm.rank() == 0) {
          SeedPlan.builder().build(comm).close();
        }
      }));
      Throwable cause = e instanceof CommTimeoutException ? e : e.getCause();
      assertInstanceOf(CommTimeoutException.class, cause, String.valueOf(e));
    }
  }

  /**
   * The order check adds no call to the plan (the agreement check compares the ranks' calls right after each
   * execute or launch instead), and a captured plan with it launches like an execute.
   */
  @Test
  void theOrderCheckAddsNoCallAndCaptureLaunchesThePlan() {
    try (Cluster cluster = Backends.local(2)) {
      cluster.run(comm -> {
        try (SeedPlan plain = SeedPlan.builder().build(comm);
            SeedPlan checked = SeedPlan.builder().orderCheck(true).build(comm)) {
          assertEquals(plain.schedule().steps().stream().map(st -> st.calls().size()).toList(),
              checked.schedule().steps().stream().map(st -> st.calls().size()).toList(), checked.describe());
          checked.total().set(0, comm.rank() + 1f);
          try (dev.commplan.runtime.CapturedPlan captured = checked.capture(comm.stream())) {
            captured.launch();
            comm.stream().synchronize();
            assertEquals(3f, checked.total().get(0)); // 1 + 2, launched like an execute on the local backend
          }
        }
      });
    }
  }
}
