package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The overlap sample across processes: {@code mpirun -np N java ... Main overlap --backend mpi}, host compute
 * on each rank's own thread, prints from rank 0 what the local backend prints on N ranks, and PASS. Skips
 * without mpirun or Open MPI, as {@link MpiSeedSampleTest} does.
 */
class MpiOverlapSampleTest {
  private static Path mpirun;

  @BeforeAll
  static void needsMpirun() {
    mpirun = MpiSampleRun.requireMpirun("MpiOverlapSampleTest");
  }

  /** The check's lines (its table and rank lines), without the first, which names the backend. */
  private static String checkLines(String output) {
    StringBuilder lines = new StringBuilder();
    for (String line : output.replace(System.lineSeparator(), "\n").split("\n")) {
      if (line.matches("(step  loss|max \\|diff\\| over|check:) .*|rank \\d+, max .*| *\\d+  .*")) {
        lines.append(line).append('\n');
      }
    }
    return lines.toString();
  }

  @Test
  void acrossThreeProcessesItPrintsWhatTheLocalBackendPrints() throws Exception {
    String output = MpiSampleRun.run(mpirun, "overlap", 3);
    SampleRun local = SampleRun.main("overlap", "--ranks", "3");
    assertEquals(0, local.status(), local.err());
    assertEquals(checkLines(local.out()), checkLines(output), output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("overlap: ") && l.contains(", mpi backend; ")).count(),
        output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("check: PASS, ")).count(), output);
  }

  @Test
  void itMeasuresHostComputeOnTheRanksThreadsAndDrawsNoTimeline() throws Exception {
    MpiSampleRun.Result result = MpiSampleRun.launch(mpirun, 2, "overlap", "--measure", "--width", "16", "--batch", "2");
    assertEquals(0, result.status(), result.output());
    String output = result.output();
    assertTrue(output.contains("\nmeasure: 16 linear layers 16x16 (4,352 parameters, 17.0 KiB of gradients), batch 2"
        + " per rank, 2 ranks, mpi backend, host compute on each rank's thread\n"), output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("  serial (backward, then execute) ")).count(), output);
    assertTrue(output.contains("\ntimeline: not drawn on mpi, where a rank's compute and its communication share one"
        + " thread\n"), output);
  }
}
