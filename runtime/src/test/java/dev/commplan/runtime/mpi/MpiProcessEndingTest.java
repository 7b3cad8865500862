package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 40, item 4: a rank whose process is being ended (its JVM's shutdown hooks closed the world) is told so
 * when it uses the world, not that the communicator "is closed" as if its own code had closed it. Skips,
 * saying why, without mpirun or Open MPI.
 */
class MpiProcessEndingTest {
  @Test
  void aCommunicatorClosedAtProcessEndSaysSo() throws Exception {
    String reason = MpiLauncher.unavailableReason();
    if (reason != null) {
      System.out.println("MpiProcessEndingTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
    MpiLauncher.Result run = MpiLauncher.run(1, Duration.ofSeconds(60), MpiLauncher.classPath(), List.of(),
        MpiEndingMain.class.getName());
    assertFalse(run.killed(), run.toString());
    assertTrue(run.output().contains("ending: IllegalStateException: mpi communicator of rank 0 was closed because"
        + " this process is being ended"), run.toString());
  }
}
