package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.mpi.MpiBackend;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
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
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, "mpirun");
      if (Files.isExecutable(candidate)) {
        mpirun = candidate;
        break;
      }
    }
    String reason = mpirun == null ? "mpirun is not on the PATH" : MpiBackend.unavailableReason();
    if (reason != null) {
      System.out.println("MpiPipelineMoeSampleTest skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
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
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(mpirun.toString(), "--allow-run-as-root", "--oversubscribe",
        "-np", Integer.toString(ranks), Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
        "-Dcommplan.mpi.timeout=60", "-cp", classPath, Main.class.getName(), sample, "--backend", "mpi"));
    Path log = Files.createTempFile("commplan-" + sample + "-mpi-", ".log");
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      builder.environment().putIfAbsent("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
      Process process = builder.start();
      boolean finished = process.waitFor(120, TimeUnit.SECONDS);
      if (!finished) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
      }
      String output = Files.readString(log, StandardCharsets.UTF_8);
      assertFalse(!finished, "mpirun did not finish within 120 s:\n" + output);
      assertEquals(0, process.exitValue(), output);
      SampleRun local = SampleRun.main(sample, "--ranks", Integer.toString(ranks));
      assertEquals(0, local.status(), local.err());
      // Only rank 0 prints the sample's lines; anything else is Open MPI's (a warning on some machines).
      assertEquals(sampleLines(local.out()), sampleLines(output), output);
      assertEquals(1, output.lines().filter(l -> l.startsWith(sample + ": ") && l.contains(", mpi backend; ")).count(), output);
      assertEquals(1, output.lines().filter(l -> l.startsWith("check: PASS, ")).count(), output);
      assertTrue(sampleLines(output).lines().count() > 8, output);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
