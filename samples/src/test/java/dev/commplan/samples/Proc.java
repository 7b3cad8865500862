package dev.commplan.samples;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A child process for the integration tests ({@code *IT}): run to the end (or killed at the timeout), its
 * stdout and stderr kept apart. Also where the build told failsafe to find Maven, the local repository and
 * the checkout.
 */
record Proc(int status, String out, String err) {
  /** Stdout and stderr, for assertion messages. */
  String all() {
    return "--- stdout ---\n" + out + "--- stderr ---\n" + err;
  }

  static Proc run(Path dir, Map<String, String> env, long timeoutSeconds, List<String> command)
      throws IOException, InterruptedException {
    Path outFile = Files.createTempFile("commplan-it-", ".out");
    Path errFile = Files.createTempFile("commplan-it-", ".err");
    try {
      ProcessBuilder builder = new ProcessBuilder(command).directory(dir.toFile())
          .redirectOutput(outFile.toFile()).redirectError(errFile.toFile()).redirectInput(ProcessBuilder.Redirect.from(
              new File("/dev/null")));
      builder.environment().putAll(env);
      Process process = builder.start();
      if (!process.waitFor(timeoutSeconds, TimeUnit.SECONDS)) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
        process.waitFor();
        throw new AssertionError("did not finish within " + timeoutSeconds + " s: " + command + "\n"
            + Files.readString(outFile, StandardCharsets.UTF_8) + Files.readString(errFile, StandardCharsets.UTF_8));
      }
      return new Proc(process.exitValue(), Files.readString(outFile, StandardCharsets.UTF_8),
          Files.readString(errFile, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(outFile);
      Files.deleteIfExists(errFile);
    }
  }

  /** A build property that failsafe passes (root pom, maven-failsafe-plugin); fails the test where it is missing. */
  static String property(String name) {
    String value = System.getProperty(name);
    if (value == null || value.isBlank() || value.startsWith("${")) {
      throw new AssertionError("system property " + name + " is not set: run this test through Maven (mvn verify)");
    }
    return value;
  }

  /** The checkout's root folder. */
  static Path root() {
    return Path.of(property("commplan.it.root")).toAbsolutePath().normalize();
  }

  /** The build's local repository; a relative -Dmaven.repo.local is relative to where mvn was started. */
  static Path localRepository() {
    Path repo = Path.of(property("commplan.it.localRepository"));
    String started = System.getProperty("commplan.it.executionRoot");
    if (!repo.isAbsolute() && started != null && !started.isBlank() && !started.startsWith("${")) {
      repo = Path.of(started).resolve(repo);
    }
    return repo.toAbsolutePath().normalize();
  }

  /** The mvn that runs this build ({@code maven.home}), else the one on the PATH. */
  static String mvn() {
    String home = System.getProperty("commplan.it.mavenHome");
    if (home != null && !home.isBlank() && !home.startsWith("${")) {
      Path mvn = Path.of(home, "bin", "mvn");
      if (Files.isExecutable(mvn)) {
        return mvn.toString();
      }
    }
    return "mvn";
  }

  /** The environment for a child that must run on {@code javaHome}: JAVA_HOME set, its bin first on the PATH. */
  static Map<String, String> javaEnv(Path javaHome) {
    return Map.of("JAVA_HOME", javaHome.toString(),
        "PATH", javaHome.resolve("bin") + File.pathSeparator + System.getenv().getOrDefault("PATH", ""));
  }

  /** An offline Maven command on the build's local repository: the child must find everything the build installed. */
  static List<String> mavenOffline(String... args) {
    List<String> command = new ArrayList<>(List.of(mvn(), "-B", "-o", "-Dmaven.repo.local=" + localRepository()));
    command.addAll(List.of(args));
    return command;
  }
}
