package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The finite check on MPI (issue 43, item 3): {@code mpirun --oversubscribe -np 4} of {@link MpiFiniteMain}, the
 * same scenarios as on 4 local ranks, each rank searching its own memory on the host and the ranks agreeing over
 * the agreement check's duplicate communicator. Skips, saying why, without mpirun or Open MPI.
 */
class MpiFiniteTest {
  private static final Duration LIMIT = Duration.ofSeconds(240);

  @BeforeAll
  static void needsMpirun() {
    String reason = MpiLauncher.unavailableReason();
    if (reason != null) {
      System.out.println("MpiFiniteTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
  }

  @Test
  void everyScenarioHoldsOnFourProcesses() throws Exception {
    MpiLauncher.Result run = MpiLauncher.run(4, LIMIT, MpiLauncher.classPath(),
        List.of("-D" + dev.commplan.runtime.CommOptions.TIMEOUT_PROPERTY + "=60"), MpiFiniteMain.class.getName());
    assertFalse(run.killed(), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    for (int r = 0; r < 4; r++) {
      assertTrue(run.output().contains("mpi finite rank " + r + " of 4: all right"), run.toString());
    }
  }
}
