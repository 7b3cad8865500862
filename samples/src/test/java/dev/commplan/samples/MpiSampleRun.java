package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.mpi.MpiBackend;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * One sample run under {@code mpirun -np N java ... dev.commplan.samples.Main SAMPLE --backend mpi}, for the
 * tests that compare it with the local backend's run of the same sample.
 */
final class MpiSampleRun {
  private MpiSampleRun() {}

  /** mpirun on the PATH, or the test class is skipped (saying why) when it or Open MPI is missing. */
  static Path requireMpirun(String testClass) {
    Path mpirun = null;
    for (String dir : System.getenv().getOrDefault("PATH", "").split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, "mpirun");
      if (Files.isExecutable(candidate)) {
        mpirun = candidate;
        break;
      }
    }
    String reason = mpirun == null ? "mpirun is not on the PATH" : MpiBackend.unavailableReason();
    if (reason != null) {
      System.out.println(testClass + " skipped: " + reason);
    }
    assumeTrue(reason == null, reason);
    return mpirun;
  }

  /** What mpirun printed (every process's stdout and stderr, and Open MPI's) and its exit status. */
  record Result(int status, String output) {}

  /** Runs {@code sample} on {@code ranks} processes, asserts that mpirun finished in 120 s with 0, and returns its output. */
  static String run(Path mpirun, String sample, int ranks) throws Exception {
    Result result = launch(mpirun, ranks, sample);
    assertEquals(0, result.status(), result.output());
    return result.output();
  }

  /**
   * Runs {@code Main args... --backend mpi} on {@code ranks} processes and asserts that mpirun finished
   * within 120 s; returns its output and exit status, whatever the status.
   */
  static Result launch(Path mpirun, int ranks, String... args) throws Exception {
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(mpirun.toString(), "--allow-run-as-root", "--oversubscribe",
        "-np", Integer.toString(ranks), Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m",
        "-Dcommplan.mpi.timeout=60", "-cp", classPath, Main.class.getName()));
    command.addAll(List.of(args));
    command.addAll(List.of("--backend", "mpi"));
    Path log = Files.createTempFile("commplan-" + args[0] + "-mpi-", ".log");
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
      return new Result(process.exitValue(), output);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
