package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * {@code java -jar commplan-bench.jar} under a JDK older than 22 says so in one line, exit status 2 (the
 * samples module's OldJdkIT checks the samples jar and plain mvn the same way). Skipped, saying so, where
 * no such JDK is installed ({@code -Dcommplan.it.oldJdk=HOME} names one).
 */
class OldJdkJarIT {
  @Test
  void theBenchJarSaysInOneLineThatItNeedsJava22() throws Exception {
    Path oldJdk = null;
    int feature = 0;
    String given = System.getProperty("commplan.it.oldJdk", System.getenv("COMMPLAN_OLD_JDK"));
    List<Path> candidates = List.of();
    if (given != null && !given.isBlank()) {
      candidates = List.of(Path.of(given));
    } else if (Files.isDirectory(Path.of("/usr/lib/jvm"))) {
      try (Stream<Path> homes = Files.list(Path.of("/usr/lib/jvm"))) {
        candidates = homes.sorted().toList();
      }
    }
    for (Path home : candidates) {
      Path release = home.resolve("release");
      if (Files.isRegularFile(release) && Files.isExecutable(home.resolve("bin/java"))) {
        Matcher m = Pattern.compile("JAVA_VERSION=\"(?:1\\.)?(\\d+)").matcher(Files.readString(release));
        if (m.find() && Integer.parseInt(m.group(1)) < 22) {
          oldJdk = home;
          feature = Integer.parseInt(m.group(1));
          break;
        }
      }
    }
    String reason = "no JDK older than 22 found (name one with -Dcommplan.it.oldJdk=HOME)";
    if (oldJdk == null) {
      System.out.println("OldJdkJarIT skipped: " + reason);
    }
    assumeTrue(oldJdk != null, reason);

    Path work = Path.of(System.getProperty("commplan.it.work", "target/it"));
    Path jar = work.getParent().resolve("commplan-bench.jar");
    assertTrue(Files.isRegularFile(jar), "no " + jar);
    Files.createDirectories(work);
    File err = work.resolve("old-jdk.err").toFile();
    File out = work.resolve("old-jdk.out").toFile();
    Process p = new ProcessBuilder(oldJdk.resolve("bin/java").toString(), "-jar", jar.toString(), "sweep")
        .redirectError(err).redirectOutput(out).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "java -jar did not finish in 60 s");
    String e = Files.readString(err.toPath(), StandardCharsets.UTF_8);
    assertEquals(2, p.exitValue(), e);
    assertEquals("", Files.readString(out.toPath(), StandardCharsets.UTF_8));
    assertEquals(1, e.lines().count(), e);
    assertTrue(e.startsWith("CommPlan needs Java 22 or newer; this is Java " + feature + " ("), e);
  }
}
