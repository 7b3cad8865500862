package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The overlap sample across processes: {@code mpirun -np N java ... Main overlap --backend mpi}, host compute
 * on each rank's own thread, the buckets on each rank's second MPI stream, prints from rank 0 what the local
 * backend prints on N ranks (numbers masked), and PASS each way. Skips
 * without mpirun or Open MPI, as {@link MpiSeedSampleTest} does.
 */
class MpiOverlapSampleTest {
  private static Path mpirun;

  @BeforeAll
  static void needsMpirun() {
    mpirun = MpiSampleRun.requireMpirun("MpiOverlapSampleTest");
  }

  /**
   * The check's lines (its buckets, table and lines per way), without the first, which names the backend, the
   * numbers masked: an all-reduce may add in another order on MPI, so the last digits may differ (the sample's
   * own check compares them with the one-host model).
   */
  private static String checkLines(String output) {
    StringBuilder lines = new StringBuilder();
    for (String line : output.replace(System.lineSeparator(), "\n").split("\n")) {
      if (line.matches("(step  loss|max \\|diff\\| vs|gradients:|check:) .*|  (overlapped|serial|compute alone) .*"
          + "| *\\d+  .*")) {
        lines.append(line.replaceAll("\\d\\.\\de[-+]\\d\\d", "#").replaceAll("-?\\d+\\.\\d{6}", "#")).append('\n');
      }
    }
    return lines.toString();
  }

  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 4})
  void acrossProcessesItPrintsWhatTheLocalBackendPrints(int ranks) throws Exception {
    String output = MpiSampleRun.run(mpirun, "overlap", ranks);
    SampleRun local = SampleRun.main("overlap", "--ranks", Integer.toString(ranks));
    assertEquals(0, local.status(), local.err());
    assertEquals(checkLines(local.out()), checkLines(output), output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("overlap: ") && l.contains(", mpi backend; ")).count(),
        output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("check: PASS, each way ")).count(), output);
  }

  @Test
  void itMeasuresHostComputeOnTheRanksThreadsAndDrawsNoTimeline() throws Exception {
    MpiSampleRun.Result result = MpiSampleRun.launch(mpirun, 2, "overlap", "--measure", "--width", "16", "--batch", "2");
    assertEquals(0, result.status(), result.output());
    String output = result.output();
    assertTrue(output.contains("\nmeasure: 16 linear layers 16x16 (4,352 parameters, 17.0 KiB of gradients), batch 2"
        + " per rank, 2 ranks, mpi backend, host compute on each rank's thread\n"), output);
    for (TrainStep.Mode mode : OverlapMeasure.MEASURED) {
      assertEquals(1, output.lines().filter(l -> l.startsWith("  " + mode.description() + "  ")
          && l.contains(" ms   (")).count(), mode + "\n" + output);
    }
    assertTrue(output.contains("\ncommunication hidden by the overlap: "), output);
    assertTrue(output.contains("\ntimeline: not drawn on mpi, where a rank's compute and its communication share one"
        + " thread\n"), output);
  }
}
