package dev.commplan.runtime;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/** Runs a main class of the tests in a JVM of its own (this JVM's java and class path), with a hard limit. */
public final class ChildJvm {
  private ChildJvm() {}

  /** What the child printed (stdout and stderr together) and how it ended; exit -1 when killed at the limit. */
  public record Result(int exitCode, String output, Duration elapsed, boolean killed) {
    @Override
    public String toString() {
      return "exit " + exitCode + (killed ? " (killed at the limit)" : "") + " after " + elapsed.toMillis() + " ms:\n"
          + output;
    }
  }

  /** {@code java jvmOptions -cp <this class path> main args}, killed after {@code limit}. */
  public static Result run(List<String> jvmOptions, Duration limit, String main, String... args) throws Exception {
    String classPath = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
    List<String> command = new ArrayList<>(List.of(Path.of(System.getProperty("java.home"), "bin", "java").toString(),
        "--enable-native-access=ALL-UNNAMED"));
    command.addAll(jvmOptions);
    command.addAll(List.of("-cp", classPath, main));
    command.addAll(Arrays.asList(args));
    Path log = Files.createTempFile("commplan-child-", ".log");
    try {
      long start = System.nanoTime();
      Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
      boolean finished = process.waitFor(limit.toMillis(), TimeUnit.MILLISECONDS);
      if (!finished) {
        process.destroyForcibly();
        process.waitFor(10, TimeUnit.SECONDS);
      }
      return new Result(finished ? process.exitValue() : -1, Files.readString(log, StandardCharsets.UTF_8),
          Duration.ofNanos(System.nanoTime() - start), !finished);
    } finally {
      Files.deleteIfExists(log);
    }
  }
}
