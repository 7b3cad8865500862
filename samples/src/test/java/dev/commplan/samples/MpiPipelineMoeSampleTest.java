package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The pipeline and moe samples across processes: {@code mpirun -np N java ... dev.commplan.samples.Main
 * pipeline|moe --backend mpi} prints, from rank 0, what the local backend prints on N ranks, and PASS.
 * Skips without mpirun or Open MPI, as {@link MpiSeedSampleTest} does.
 */
class MpiPipelineMoeSampleTest {
  private static Path mpirun;

  @BeforeAll
  static void needsMpirun() {
    mpirun = MpiSampleRun.requireMpirun("MpiPipelineMoeSampleTest");
  }

  /** The report's lines but the first (which names the backend), without anything Open MPI printed between them. */
  private static String sampleLines(String output) {
    StringBuilder lines = new StringBuilder();
    for (String line : output.replace(System.lineSeparator(), "\n").split("\n")) {
      if (line.matches("(GPipe schedule|step  loss|max \\|diff\\| over|stage \\d+ \\(rank|capacity:|check:) .*")
          || line.matches(" *\\d+  .*|rank \\d+: .*|expert \\d+ \\(rank \\d+\\): .*")) {
        lines.append(line).append('\n');
      }
    }
    return lines.toString();
  }

  @ParameterizedTest(name = "{0} on {1} processes")
  @CsvSource({"pipeline, 2", "pipeline, 4", "moe, 3", "moe, 4"})
  void acrossProcessesItPrintsWhatTheLocalBackendPrints(String sample, int ranks) throws Exception {
    String output = MpiSampleRun.run(mpirun, sample, ranks);
    SampleRun local = SampleRun.main(sample, "--ranks", Integer.toString(ranks));
    assertEquals(0, local.status(), local.err());
    // Only rank 0 prints the sample's lines; anything else is Open MPI's (a warning on some machines).
    assertEquals(sampleLines(local.out()), sampleLines(output), output);
    assertEquals(1, output.lines().filter(l -> l.startsWith(sample + ": ") && l.contains(", mpi backend; ")).count(), output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("check: PASS, ")).count(), output);
    assertTrue(sampleLines(output).lines().count() > 8, output);
  }
}
