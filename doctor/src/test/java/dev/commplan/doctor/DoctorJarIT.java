package dev.commplan.doctor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * The built jar as users run it, {@code java -jar commplan-doctor.jar DIR}: the exit statuses and streams on
 * the fixtures, nothing inside but the doctor and its launcher, and one line under a Java older than 22.
 */
class DoctorJarIT {
  private static final Path WORK = Path.of(System.getProperty("commplan.it.work", "target/it"));
  private static final Path JAR = WORK.getParent().resolve("commplan-doctor.jar");

  record Run(int status, String out, String err) {}

  @Test
  void theJarRunsOnTheRecordsWithItsExitStatuses() throws Exception {
    Path java = Path.of(System.getProperty("java.home"), "bin", "java");
    Run stuck = run(java, Fixtures.dir("stuck").toString());
    assertEquals(1, stuck.status(), stuck.err());
    assertTrue(stuck.out().startsWith("CommPlan doctor: job \"fixture-stuck\""), stuck.out());
    assertEquals("", stuck.err());
    Run fine = run(java, Fixtures.dir("fine").toString());
    assertEquals(0, fine.status(), fine.err());
    Path truncated = Fixtures.dir("damaged/truncated");
    Run bad = run(java, truncated.toString());
    assertEquals(2, bad.status());
    assertEquals("", bad.out());
    assertEquals("commplan-doctor: " + truncated.resolve("rank-1.json") + ": not valid JSON: unexpected end of input"
        + " at line 20, column 319 (the file ends early: truncated?)\n", bad.err());
  }

  @Test
  void theJarHoldsTheDoctorAndItsLauncherOnly() throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      assertEquals("dev.commplan.launcher.Launcher", jar.getManifest().getMainAttributes().getValue("Main-Class"));
      assertEquals("dev.commplan.doctor.Doctor", jar.getManifest().getMainAttributes().getValue("CommPlan-Main-Class"));
      List<String> other = new ArrayList<>();
      for (String name : Collections.list(jar.entries()).stream().map(e -> e.getName()).toList()) {
        if (!name.startsWith("META-INF/") && !name.startsWith("dev/commplan/doctor/")
            && !name.startsWith("dev/commplan/launcher/") && !List.of("dev/", "dev/commplan/").contains(name)) {
          other.add(name);
        }
      }
      assertEquals(List.of(), other, "entries that are not the doctor's");
    }
  }

  /** Under a JDK older than 22: one line, exit 2. Skipped, saying so, where none is installed. */
  @Test
  void underAnOldJavaTheJarSaysSoInOneLine() throws Exception {
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
      System.out.println("DoctorJarIT skipped the old-Java case: " + reason);
    }
    assumeTrue(oldJdk != null, reason);
    Run r = run(oldJdk.resolve("bin/java"), Fixtures.dir("stuck").toString());
    assertEquals(2, r.status(), r.err());
    assertEquals("", r.out());
    assertEquals(1, r.err().lines().count(), r.err());
    assertTrue(r.err().startsWith("CommPlan needs Java 22 or newer; this is Java " + feature + " ("), r.err());
  }

  private static Run run(Path java, String... args) throws Exception {
    assertTrue(Files.isRegularFile(JAR), "no " + JAR);
    Files.createDirectories(WORK);
    Path out = Files.createTempFile(WORK, "doctor", ".out");
    Path err = Files.createTempFile(WORK, "doctor", ".err");
    List<String> command = new ArrayList<>(List.of(java.toString(), "-jar", JAR.toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectOutput(out.toFile()).redirectError(err.toFile()).start();
    assertTrue(p.waitFor(60, TimeUnit.SECONDS), "java -jar did not finish in 60 s");
    return new Run(p.exitValue(), Files.readString(out, StandardCharsets.UTF_8), Files.readString(err, StandardCharsets.UTF_8));
  }
}
