package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * docs/setup.md and docs/tutorial.md, as a user would paste them: the blocks marked
 * {@code <!-- consumer: PATH -->} on each page (a complete pom.xml and its classes) are written into a fresh
 * project, taken from the page each time (no copy is kept here), and built with the pom's own
 * maven-compiler-plugin, offline, against the artifacts that this build installed into its local
 * repository (whatever {@code -Dmaven.repo.local} says). Offline, so only the compiler plugin's goal runs:
 * a full {@code mvn package} would also need Maven's default resources, surefire and jar plugins, which
 * this build does not use and so may not have.
 *
 * <p>It checks that the plan class is generated, that {@code demo.Hello} (setup.md) and {@code demo.Train}
 * (the tutorial, on the local backend) print what their pages say, that a wrong {@code @Shape} is reported on
 * its line (the tutorial's with the very message it shows), and that docs/troubleshooting.md's first cause
 * is real: with the processor as a plain dependency, JDK 23+ javac does not run it and reports only
 * "cannot find symbol" for the plan class.
 */
class DocsConsumerIT {
  private static final Pattern BLOCK = Pattern.compile(
      "<!-- consumer: (\\S+) -->\\s*\\n```[a-z]*\\n(.*?)\\n```", Pattern.DOTALL);
  private static final Pattern OUTPUT = Pattern.compile(
      "<!-- consumer-output: (\\S+) -->\\s*\\n```[a-z]*\\n(.*?)\\n```", Pattern.DOTALL);
  private static final String COMPILE = "org.apache.maven.plugins:maven-compiler-plugin:compile";
  private static final Pattern ERROR = Pattern.compile(
      "<!-- consumer-error: (\\S+) -->\\s*\\n```[a-z]*\\n(.*?)\\n```", Pattern.DOTALL);
  private static final Pattern COMMPLAN_VERSION = Pattern.compile("<commplan\\.version>([^<]+)</commplan\\.version>");

  /** docs/setup.md's project. */
  private static Map<String, String> files;
  private static Map<String, String> outputs;
  /** docs/tutorial.md's project. */
  private static Map<String, String> tutorialFiles;
  private static Map<String, String> tutorialOutputs;
  private static Path work;

  @BeforeAll
  static void readTheDocs() throws IOException {
    String setUp = Files.readString(Proc.root().resolve("docs/setup.md"), StandardCharsets.UTF_8);
    files = blocks(BLOCK, setUp);
    outputs = blocks(OUTPUT, setUp);
    assertTrue(files.containsKey("pom.xml"), "docs/setup.md has no <!-- consumer: pom.xml --> block");
    files.put("pom.xml", withBuiltVersion(files.get("pom.xml"), "docs/setup.md"));
    String tutorial = Files.readString(Proc.root().resolve("docs/tutorial.md"), StandardCharsets.UTF_8);
    tutorialFiles = blocks(BLOCK, tutorial);
    tutorialOutputs = blocks(OUTPUT, tutorial);
    assertTrue(tutorialFiles.containsKey("pom.xml"), "docs/tutorial.md has no <!-- consumer: pom.xml --> block");
    tutorialFiles.put("pom.xml", withBuiltVersion(tutorialFiles.get("pom.xml"), "docs/tutorial.md"));
    work = Path.of(Proc.property("commplan.it.work"), "docs-consumer");
    deleteTree(work);
    String stale = staleInstall();
    if (stale != null) {
      System.out.println("DocsConsumerIT skipped: " + stale);
    }
    assumeTrue(stale == null, stale);
  }

  /**
   * The pasted pom names the release this build makes ({@code 0.1.0} while the build is {@code
   * 0.1.0-SNAPSHOT}, docs/release.md); it is built with the version this build installed.
   */
  private static String withBuiltVersion(String pom, String page) {
    String built = Proc.property("commplan.it.version");
    Matcher version = COMMPLAN_VERSION.matcher(pom);
    assertTrue(version.find(), "the pasted pom sets no <commplan.version>\n" + pom);
    assertEquals(release(built), version.group(1), page + "'s pom names another release than this build makes");
    return pom.substring(0, version.start(1)) + built + pom.substring(version.end(1));
  }

  /** The release a build of {@code version} makes. */
  static String release(String version) {
    return version.endsWith("-SNAPSHOT") ? version.substring(0, version.length() - "-SNAPSHOT".length()) : version;
  }

  /**
   * Why the local repository does not hold this build's artifacts (mvn verify installs nothing, so the
   * consumer would build against an older install, or find none), or null where it does.
   */
  private static String staleInstall() throws IOException {
    String version = Proc.property("commplan.it.version");
    String buildDir = System.getProperty("commplan.it.buildDir", "target");
    for (String module : List.of("annotations", "runtime", "processor")) {
      String artifactId = "commplan-" + module;
      Path installed = Proc.localRepository().resolve("dev/commplan/" + artifactId + "/" + version + "/" + artifactId + "-"
          + version + ".jar");
      Path built = Proc.root().resolve(module).resolve(buildDir).resolve(artifactId + "-" + version + ".jar");
      if (!Files.isRegularFile(installed)) {
        return installed + " is not there: run mvn install (the consumer project resolves CommPlan from the local repository)";
      }
      if (Files.isRegularFile(built) && Files.mismatch(installed, built) != -1) {
        return installed + " is not this build's " + built + ": run mvn install, not verify (the consumer project"
            + " resolves CommPlan from the local repository)";
      }
    }
    // The BOM that the pom imports: installed as it is in the checkout.
    Path bom = Proc.localRepository().resolve("dev/commplan/commplan-bom/" + version + "/commplan-bom-" + version + ".pom");
    if (!Files.isRegularFile(bom) || Files.mismatch(bom, Proc.root().resolve("bom/pom.xml")) != -1) {
      return bom + " is not this checkout's bom/pom.xml: run mvn install (the consumer project imports the BOM from"
          + " the local repository)";
    }
    return null;
  }

  private static Map<String, String> blocks(Pattern pattern, String text) {
    Map<String, String> found = new LinkedHashMap<>();
    Matcher m = pattern.matcher(text);
    while (m.find()) {
      assertEquals(null, found.put(m.group(1), m.group(2) + "\n"), "two blocks for " + m.group(1));
    }
    return found;
  }

  /** A fresh project from setup.md's blocks, with {@code replaced} files; an empty .mvn keeps ours out. */
  private static Path project(String name, Map<String, String> replaced) throws IOException {
    return project(name, files, replaced);
  }

  /** A fresh project from a page's blocks, with {@code replaced} files; an empty .mvn keeps ours out. */
  private static Path project(String name, Map<String, String> files, Map<String, String> replaced) throws IOException {
    Path dir = work.resolve(name);
    Files.createDirectories(dir.resolve(".mvn"));
    for (Map.Entry<String, String> f : files.entrySet()) {
      Path file = dir.resolve(f.getKey());
      Files.createDirectories(file.getParent());
      Files.writeString(file, replaced.getOrDefault(f.getKey(), f.getValue()), StandardCharsets.UTF_8);
    }
    return dir;
  }

  private static Proc compile(Path dir) throws Exception {
    return Proc.run(dir, Proc.javaEnv(javaHome()), 300, Proc.mavenOffline(COMPILE));
  }

  private static Path javaHome() {
    return Path.of(System.getProperty("java.home"));
  }

  private static String source(String suffix) {
    return files.entrySet().stream().filter(e -> e.getKey().endsWith(suffix)).map(Map.Entry::getValue).findFirst()
        .orElseThrow(() -> new AssertionError("docs/setup.md has no " + suffix + " block"));
  }

  private static String sourcePath(String suffix) {
    return files.keySet().stream().filter(k -> k.endsWith(suffix)).findFirst().orElseThrow();
  }

  @Test
  void thePomAsPastedGeneratesThePlanAndHelloPrintsWhatThePageSays() throws Exception {
    Path dir = project("as-pasted", Map.of());
    Proc build = compile(dir);
    assertEquals(0, build.status(), build.all());
    Path generated = dir.resolve("target/generated-sources/annotations/demo/GradsPlan.java");
    assertTrue(Files.isRegularFile(generated), "no GradsPlan.java generated\n" + build.all());
    assertTrue(Files.readString(generated).contains("@Generated(\"dev.commplan.processor.CommPlanProcessor\")"));
    assertTrue(Files.isRegularFile(dir.resolve("target/classes/demo/GradsPlan.class")), build.all());

    assertTrue(outputs.containsKey("demo.Hello"), "docs/setup.md shows no output for demo.Hello");
    Proc hello = runMain(dir, "demo.Hello");
    assertEquals(0, hello.status(), hello.all());
    assertEquals(outputs.get("demo.Hello"), hello.out().replace(System.lineSeparator(), "\n"), hello.all());
  }

  /** {@code java --enable-native-access=ALL-UNNAMED -cp target/classes:<what Maven puts there> main}, in {@code dir}. */
  private static Proc runMain(Path dir, String main) throws Exception {
    Path repo = Proc.localRepository();
    String version = Proc.property("commplan.it.version");
    // What Maven puts on a consumer's run-time class path: the runtime and its two dependencies.
    List<String> classPath = List.of(dir.resolve("target/classes").toString(),
        artifact(repo, "commplan-runtime", version).toString(), artifact(repo, "commplan-annotations", version).toString(),
        artifact(repo, "commplan-model", version).toString());
    return Proc.run(dir, Map.of(), 120, List.of(javaHome().resolve("bin/java").toString(),
        "--enable-native-access=ALL-UNNAMED", "-cp", String.join(File.pathSeparator, classPath), main));
  }

  /**
   * The tutorial as a reader follows it: its pom and classes build and generate {@code GradSyncPlan};
   * {@code demo.Train} prints on the local backend what the page shows; and step 3's mistake, {@code losses}
   * given {@code @Shape("1")}, stops the build with the error the page shows, path aside.
   */
  @Test
  void theTutorialBuildsRunsAndReportsItsMistakeAsThePageShows() throws Exception {
    Path dir = project("tutorial", tutorialFiles, Map.of());
    Proc build = compile(dir);
    assertEquals(0, build.status(), build.all());
    assertTrue(Files.isRegularFile(dir.resolve("target/generated-sources/annotations/demo/GradSyncPlan.java")),
        "no GradSyncPlan.java generated\n" + build.all());
    assertTrue(tutorialOutputs.containsKey("demo.Train"), "docs/tutorial.md shows no output for demo.Train");
    Proc train = runMain(dir, "demo.Train");
    assertEquals(0, train.status(), train.all());
    assertEquals(tutorialOutputs.get("demo.Train"), train.out().replace(System.lineSeparator(), "\n"), train.all());

    String path = "src/main/java/demo/GradSync.java";
    Map<String, String> errors = blocks(ERROR, Files.readString(Proc.root().resolve("docs/tutorial.md"),
        StandardCharsets.UTF_8));
    assertTrue(errors.containsKey(path), "docs/tutorial.md shows no <!-- consumer-error: " + path + " --> block");
    String shown = errors.get(path).strip();
    String reported = shown.substring(shown.indexOf(path)); // the page elides the reader's own folder
    Matcher losses = Pattern.compile("@Shape\\(\"ranks\"\\)(\\s+F32Buffer\\s+losses;)").matcher(tutorialFiles.get(path));
    assertTrue(losses.find(), "the tutorial's GradSync has no @Shape(\"ranks\") F32Buffer losses\n" + tutorialFiles.get(path));
    String wrong = losses.replaceFirst("@Shape(\"1\")" + "$1");
    Proc failed = compile(project("tutorial-mistake", tutorialFiles, Map.of(path, wrong)));
    assertNotEquals(0, failed.status(), failed.all());
    // javac writes '×' as '?' where the locale's charset has none: compare the ASCII
    assertTrue(ascii(failed.out()).contains(ascii(reported)), "expected\n" + reported + "\n" + failed.all());
  }

  private static String ascii(String text) {
    return text.replaceAll("[^\\x00-\\x7F]", "?");
  }

  /** A wrong receive size, planted in the page's Grads: the error is [CommPlan/GatherSize], on the @AllGather line. */
  @Test
  void aWrongShapeIsReportedOnItsLine() throws Exception {
    String grads = source("Grads.java");
    Matcher gather = Pattern.compile("@AllGather\\(into = \"(\\w+)\"\\)").matcher(grads);
    assertTrue(gather.find(), "the page's Grads has no @AllGather(into = ...)\n" + grads);
    String into = gather.group(1);
    int line = grads.substring(0, gather.start()).split("\n", -1).length;
    int column = gather.start() - grads.lastIndexOf('\n', gather.start() - 1);
    Matcher receiver = Pattern.compile("@Shape\\([^)]*\\)(\\s+F32Buffer\\s+" + into + ";)").matcher(grads);
    assertTrue(receiver.find(), "no @Shape on the receive buffer '" + into + "'\n" + grads);
    String wrong = grads.substring(0, receiver.start()) + "@Shape(\"2\")" + receiver.group(1) + grads.substring(receiver.end());

    Path dir = project("wrong-shape", Map.of(sourcePath("Grads.java"), wrong));
    Proc build = compile(dir);
    assertNotEquals(0, build.status(), build.all());
    String at = "Grads.java:[" + line + ",";
    boolean reported = build.out().lines().anyMatch(l -> l.contains(at) && l.contains("[CommPlan/GatherSize]"));
    assertTrue(reported, "expected [CommPlan/GatherSize] at " + at + column + "]\n" + build.all());
  }

  /**
   * docs/troubleshooting.md's first row: the processor as an ordinary dependency instead of on the processor path.
   * JDK 23 and newer do not run it, say nothing about it, and javac reports the plan class as missing.
   */
  @Test
  void theProcessorOnTheClassPathIsNotRunOnJdk23AndNewer() throws Exception {
    assumeTrue(Runtime.version().feature() >= 23, "javac " + Runtime.version().feature()
        + " still runs processors found on the class path (JDK 23 stopped)");
    String pom = files.get("pom.xml");
    // the element, not a mention in a comment: alone on its lines
    Matcher paths = Pattern.compile("(?ms)^\\s*<annotationProcessorPaths>\\s*$.*?^\\s*</annotationProcessorPaths>\\s*$\\n")
        .matcher(pom);
    assertTrue(paths.find(), pom);
    String misconfigured = (pom.substring(0, paths.start()) + pom.substring(paths.end())).replace("  </dependencies>",
        "    <dependency>\n      <groupId>dev.commplan</groupId>\n      <artifactId>commplan-processor</artifactId>\n"
            + "      <version>${commplan.version}</version>\n    </dependency>\n  </dependencies>");
    Path dir = project("processor-on-class-path", Map.of("pom.xml", misconfigured));
    Proc build = compile(dir);
    assertNotEquals(0, build.status(), build.all());
    assertTrue(build.out().contains("cannot find symbol") && build.out().contains("GradsPlan"), build.all());
    assertFalse(build.out().contains("[CommPlan/"), build.all());
    assertFalse(Files.exists(dir.resolve("target/generated-sources/annotations/demo/GradsPlan.java")));
  }

  /**
   * README's "Use it from Maven" and the Gradle snippet name the BOM at the release this build makes, as
   * the pasted pom does.
   */
  @Test
  void theReadmeAndTheGradleSnippetNameTheSameRelease() throws IOException {
    String release = release(Proc.property("commplan.it.version"));
    String readme = Files.readString(Proc.root().resolve("README.md"), StandardCharsets.UTF_8);
    int start = readme.indexOf("\n## Use it from Maven\n");
    assertTrue(start >= 0, "README.md has no '## Use it from Maven' section");
    String useIt = readme.substring(start, readme.indexOf("\n## ", start + 1));
    Matcher maven = Pattern.compile("<artifactId>commplan-bom</artifactId>\\s*<version>([^<]+)</version>").matcher(useIt);
    assertTrue(maven.find(), "README's 'Use it from Maven' imports no commplan-bom with a <version>\n" + useIt);
    assertEquals(release, maven.group(1), "README's BOM version");
    String setUp = Files.readString(Proc.root().resolve("docs/setup.md"), StandardCharsets.UTF_8);
    Matcher gradle = Pattern.compile("\"dev\\.commplan:commplan-bom:([^\"]+)\"").matcher(setUp);
    assertTrue(gradle.find(), "docs/setup.md's Gradle snippet has no platform(\"dev.commplan:commplan-bom:...\")");
    assertEquals(release, gradle.group(1), "the Gradle snippet's BOM version");
  }

  /** What the Gradle section says about incremental processing is in the installed processor jar. */
  @Test
  void theProcessorJarDeclaresItselfIsolatingForGradle() throws IOException {
    Path jar = artifact(Proc.localRepository(), "commplan-processor", Proc.property("commplan.it.version"));
    try (ZipFile zip = new ZipFile(jar.toFile())) {
      var entry = zip.getEntry("META-INF/gradle/incremental.annotation.processors");
      assertTrue(entry != null, jar + " has no META-INF/gradle/incremental.annotation.processors");
      String text = new String(zip.getInputStream(entry).readAllBytes(), StandardCharsets.UTF_8).strip();
      assertEquals("dev.commplan.processor.CommPlanProcessor,isolating", text);
    }
  }

  private static Path artifact(Path repo, String artifactId, String version) {
    Path jar = repo.resolve("dev/commplan/" + artifactId + "/" + version + "/" + artifactId + "-" + version + ".jar");
    assertTrue(Files.isRegularFile(jar), "not installed: " + jar);
    return jar;
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    List<Path> paths = new ArrayList<>();
    try (Stream<Path> walk = Files.walk(dir)) {
      walk.sorted(Comparator.reverseOrder()).forEach(paths::add);
    }
    for (Path p : paths) {
      Files.delete(p);
    }
  }
}
