package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.nio.file.Path;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The tp and 3d samples across processes: {@code mpirun -np 8 java ... dev.commplan.samples.Main tp|3d
 * --mesh ... --backend mpi} checks itself against the one-host model (PASS) and prints, from rank 0, the
 * report the local backend prints on the same mesh. The sums of an all-reduce may round differently on
 * MPI (another order of the additions), so the numbers are compared by the sample's own check, and the
 * lines with the numbers masked. Skips without mpirun or Open MPI, as {@link MpiSeedSampleTest} does, and
 * while the MPI backend cannot split a communicator (a mesh needs {@code MPI_Comm_split}), saying so.
 */
class MpiMeshSampleTest {
  private static Path mpirun;
  /** The MPI backend's refusal to split, once seen: the other cases skip without starting 8 processes. */
  private static volatile String splitRefused;

  @BeforeAll
  static void needsMpirun() {
    mpirun = MpiSampleRun.requireMpirun("MpiMeshSampleTest");
  }

  /** The report's lines but the first (which names the backend), numbers masked, without Open MPI's lines. */
  private static String sampleLines(String output) {
    StringBuilder lines = new StringBuilder();
    for (String line : output.replace(System.lineSeparator(), "\n").split("\n")) {
      if (line.matches("(model: |mesh: |over (pp|tp|dp), |  forward|  backward|step  loss|max \\|diff\\| over|check: ).*")
          || line.matches(" *\\d+  .*|rank \\d+ \\(.*")) {
        lines.append(line.replaceAll("\\d\\.\\de[-+]\\d\\d", "#").replaceAll("-?\\d+\\.\\d{6}", "#")).append('\n');
      }
    }
    return lines.toString();
  }

  @ParameterizedTest(name = "{0} --mesh {1}")
  @CsvSource(delimiter = '|', value = {"tp|dp=2,tp=4", "3d|pp=2,dp=2,tp=2"})
  void acrossProcessesItChecksOutAndPrintsWhatTheLocalBackendPrints(String sample, String mesh) throws Exception {
    assumeTrue(splitRefused == null, splitRefused);
    int ranks = MeshShape.parse(mesh, sample.equals("tp") ? TpSample.AXES : ThreeDSample.AXES, sample).ranks();
    MpiSampleRun.Result result = MpiSampleRun.launch(mpirun, ranks, sample, "--mesh", mesh);
    if (result.status() != 0 && result.output().contains("split(color, key) is not available")) {
      String line = result.output().lines().filter(l -> l.contains("split(color, key)")).findFirst().orElseThrow();
      splitRefused = "the MPI backend cannot split a communicator yet, and a mesh needs it (" + line.strip() + ")";
      System.out.println("MpiMeshSampleTest skipped: " + splitRefused);
      assumeTrue(false, splitRefused);
    }
    assertEquals(0, result.status(), result.output());
    String output = result.output();
    SampleRun local = SampleRun.main(sample, "--mesh", mesh);
    assertEquals(0, local.status(), local.err());
    assertEquals(sampleLines(local.out()), sampleLines(output), output);
    assertEquals(1, output.lines().filter(l -> l.startsWith(sample + ": ") && l.endsWith(", mpi backend")).count(),
        output);
    assertEquals(1, output.lines().filter(l -> l.startsWith("check: PASS, all " + ranks + " ranks' parameters")).count(),
        output);
    assertTrue(sampleLines(output).lines().count() > 20, output);
  }
}
