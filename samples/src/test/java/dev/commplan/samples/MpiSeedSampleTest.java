package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The seed sample across processes: {@code mpirun -np N java ... dev.commplan.samples.Main seed --backend
 * mpi} prints, from rank 0, exactly what the local backend prints on N ranks. Skips without mpirun or Open MPI.
 */
class MpiSeedSampleTest {
  private static Path mpirun;

  @BeforeAll
  static void needsMpirun() {
    mpirun = MpiSampleRun.requireMpirun("MpiSeedSampleTest");
  }

  /** The report's lines but the first (which names the backend), without anything Open MPI printed between them. */
  private static String sampleLines(String output) {
    StringBuilder lines = new StringBuilder();
    for (String line : output.replace(System.lineSeparator(), "\n").split("\n")) {
      if (line.matches("(all-reduce|all-gather|reduce-scatter|broadcast) .*|  expected .*|check: .*")
          || line.matches("  (all-reduce|all-gather|reduce-scatter|broadcast) rank \\d+: .*")) {
        lines.append(line).append('\n');
      }
    }
    return lines.toString();
  }

  private static long count(String text, String part) {
    return text.lines().filter(l -> l.startsWith(part)).count();
  }

  @ParameterizedTest(name = "{0} processes")
  @ValueSource(ints = {2, 3, 4})
  void seedAcrossProcessesPrintsWhatTheLocalBackendPrints(int ranks) throws Exception {
    String output = MpiSampleRun.run(mpirun, "seed", ranks);
    SampleRun local = SampleRun.main("seed", "--ranks", Integer.toString(ranks));
    assertEquals(0, local.status(), local.err());
    // Only rank 0 prints the sample's lines; anything else is Open MPI's (a warning on some machines).
    assertEquals(sampleLines(local.out()), sampleLines(output), output);
    assertEquals(1, count(output, "seed: the Seed plan on " + LossTable.ranks(ranks) + ", mpi backend: "), output);
  }
}
