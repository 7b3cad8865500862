package dev.commplan.runtime.mpi;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts {@code mpirun -np N java ... <main>} from a test, with this JVM's java and class path, and waits
 * for it with a hard limit (killing mpirun and everything under it past the limit).
 */
public final class MpiLauncher {
  private MpiLauncher() {}

  /** What a run printed (stdout and stderr together) and how it ended. */
  public record Result(int exitCode, String output, Duration elapsed, boolean killed) {
    @Override
    public String toString() {
      return "exit " + exitCode + (killed ? " (killed at the limit)" : "") + " after " + elapsed.toMillis() + " ms:\n" + output;
    }
  }

  /** {@code mpirun} on the PATH, or null. */
  public static Path mpirun() {
    String path = System.getenv("PATH");
    if (path == null) {
      return null;
    }
    for (String dir : path.split(File.pathSeparator)) {
      Path candidate = Path.of(dir.isEmpty() ? "." : dir, "mpirun");
      if (Files.isExecutable(candidate)) {
        return candidate;
      }
    }
    return null;
  }

  /** Why multi-process MPI tests cannot run here, or null. */
  public static String unavailableReason() {
    if (mpirun() == null) {
      return "mpirun is not on the PATH (install Open MPI: apt-get install openmpi-bin libopenmpi-dev)";
    }
    return MpiBackend.unavailableReason();
  }

  /** The class path of this test JVM (Surefire's, when under Surefire). */
  public static String classPath() {
    String surefire = System.getProperty("surefire.test.class.path");
    return surefire != null && !surefire.isBlank() ? surefire : System.getProperty("java.class.path");
  }

  /**
   * Runs {@code main} with {@code args} on {@code ranks} processes under mpirun, with {@code classPath}
   * and the JVM options {@code jvmOptions}; kills the job after {@code limit}.
   */
  public static Result run(int ranks, Duration limit, String classPath, List<String> jvmOptions, String main,
      String... args) throws IOException, InterruptedException {
    List<String> command = new ArrayList<>(List.of(mpirun().toString(), "--allow-run-as-root", "--oversubscribe",
        "-np", Integer.toString(ranks),
        Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED",
        // Short-lived JVMs sharing a few cores: C1 only, a small heap, the serial collector.
        "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx256m", "-Xss1m"));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", classPath, main));
    command.addAll(Arrays.asList(args));
    Path log = Files.createTempFile("commplan-mpirun-", ".log");
    try {
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
      // Cross-memory attach (process_vm_readv) is often not permitted in containers; shared memory copies work everywhere.
      builder.environment().putIfAbsent("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
      long start = System.nanoTime();
      Process process = builder.start();
      boolean finished = process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
      if (!finished) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
      Duration elapsed = Duration.ofNanos(System.nanoTime() - start);
      String output = Files.readString(log, StandardCharsets.UTF_8);
      return new Result(finished ? process.exitValue() : -1, output, elapsed, !finished);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
