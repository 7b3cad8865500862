package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a user gets under a JDK older than 22 (Java 17 is the default on our machines): {@code java -jar}
 * of the samples jar and a plain {@code mvn} in the checkout each say so in one line, instead of
 * {@code UnsupportedClassVersionError} and "Unrecognized option: --sun-misc-unsafe-memory-access=allow".
 * Skipped, saying so, where no such JDK is installed ({@code -Dcommplan.it.oldJdk=HOME} names one).
 */
class OldJdkIT {
  private static Path oldJdk;
  private static int oldFeature;

  @BeforeAll
  static void findAnOldJdk() throws IOException {
    String given = System.getProperty("commplan.it.oldJdk", System.getenv("COMMPLAN_OLD_JDK"));
    List<Path> candidates;
    if (given != null && !given.isBlank()) {
      candidates = List.of(Path.of(given));
    } else if (Files.isDirectory(Path.of("/usr/lib/jvm"))) {
      try (Stream<Path> homes = Files.list(Path.of("/usr/lib/jvm"))) {
        candidates = homes.sorted().toList();
      }
    } else {
      candidates = List.of();
    }
    for (Path home : candidates) {
      int feature = feature(home);
      if (feature > 0 && feature < 22 && Files.isExecutable(home.resolve("bin/java"))) {
        oldJdk = home;
        oldFeature = feature;
        break;
      }
    }
    String reason = "no JDK older than 22 found (looked in " + (given != null ? given : "/usr/lib/jvm")
        + "; name one with -Dcommplan.it.oldJdk=HOME)";
    if (oldJdk == null) {
      System.out.println("OldJdkIT skipped: " + reason);
    }
    assumeTrue(oldJdk != null, reason);
  }

  /** The feature release from a JDK's {@code release} file (JAVA_VERSION="17.0.15"), or 0. */
  static int feature(Path home) throws IOException {
    Path release = home.resolve("release");
    if (!Files.isRegularFile(release)) {
      return 0;
    }
    Matcher m = Pattern.compile("JAVA_VERSION=\"(?:1\\.)?(\\d+)").matcher(Files.readString(release));
    return m.find() ? Integer.parseInt(m.group(1)) : 0;
  }

  @Test
  void theSamplesJarSaysInOneLineThatItNeedsJava22() throws Exception {
    Path jar = Path.of(Proc.property("commplan.it.root"), "samples", "target", "commplan-samples.jar");
    Path built = Path.of(System.getProperty("commplan.it.work")).getParent().resolve("commplan-samples.jar");
    if (Files.isRegularFile(built)) {
      jar = built; // this build's jar, where -Dcommplan.build.dir moved it
    }
    Proc run = Proc.run(Path.of("."), Map.of(), 60, List.of(oldJdk.resolve("bin/java").toString(), "-jar", jar.toString(), "seed"));
    assertEquals(2, run.status(), run.all());
    assertEquals("", run.out(), run.all());
    assertEquals(1, run.err().lines().count(), run.all());
    assertTrue(run.err().startsWith("CommPlan needs Java 22 or newer; this is Java " + oldFeature + " ("), run.all());
    assertTrue(run.err().contains("bin/sample"), run.all());
  }

  /** Plain mvn in the checkout: Maven starts (.mvn/jvm.config is harmless), then the enforcer's one line. */
  @Test
  void plainMavenInTheCheckoutSaysWhatToDo() throws Exception {
    Proc mvn = Proc.run(Path.of(Proc.property("commplan.it.root")), Proc.javaEnv(oldJdk), 180,
        Proc.mavenOffline("-q", "-N", "validate"));
    assertNotEquals(0, mvn.status(), mvn.all());
    assertFalse(mvn.all().contains("Unrecognized option"), mvn.all());
    assertTrue(mvn.out().contains("CommPlan needs JDK 22 or newer; this is " + oldFeature + "."), mvn.all());
    assertTrue(mvn.out().contains("set JAVA_HOME to a JDK 22+"), mvn.all());
  }
}
