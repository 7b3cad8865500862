package dev.commplan.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.apache.maven.model.Dependency;
import org.apache.maven.model.Developer;
import org.apache.maven.model.License;
import org.apache.maven.model.Model;
import org.apache.maven.model.Plugin;
import org.apache.maven.model.PluginExecution;
import org.apache.maven.model.Scm;
import org.codehaus.plexus.util.xml.Xpp3Dom;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every POM a release publishes carries what Maven Central requires (name, description, url, a license,
 * scm, developers), read from the effective POMs, so inherited values count and missing ones are found
 * wherever they were meant to come from. Which modules are published is read from them too (a module that
 * sets {@code maven.deploy.skip} is not), and must be the list below: a new module is published only by
 * a decision here.
 */
class PublishedPomsTest {
  /**
   * What a release uploads: the parent (the others' POMs name it), the BOM, the four library jars, the
   * doctor's (a command users download: docs/doctor.md) and the conformance kit's (the suites a third party's
   * backend runs from its own build: conformance/README.md).
   */
  private static final Set<String> PUBLISHED = Set.of("commplan-parent", "commplan-bom", "commplan-model",
      "commplan-annotations", "commplan-processor", "commplan-runtime", "commplan-doctor", "commplan-conformance");
  private static final String LICENSE = "Apache-2.0";
  private static final String LICENSE_URL = "https://www.apache.org/licenses/LICENSE-2.0.txt";

  private static Map<String, Model> poms;
  private static Map<String, Model> releasePoms;

  @BeforeAll
  static void buildTheEffectivePoms() throws Exception {
    poms = EffectivePoms.of(Checkout.root(), Checkout.localRepository(), List.of());
    releasePoms = EffectivePoms.of(Checkout.root(), Checkout.localRepository(), List.of("release"));
  }

  private static List<Model> published() {
    return poms.values().stream().filter(m -> !"true".equals(m.getProperties().getProperty("maven.deploy.skip")))
        .toList();
  }

  @Test
  void exactlyTheReleaseArtifactsArePublished() {
    Set<String> published = published().stream().map(Model::getArtifactId).collect(Collectors.toCollection(TreeSet::new));
    assertEquals(new TreeSet<>(PUBLISHED), published, "modules without maven.deploy.skip=true (which deploy would upload)");
    for (String unpublished : List.of("samples", "bench", "release-checks", "spi-check")) {
      assertTrue(poms.containsKey(unpublished), "the root pom no longer lists " + unpublished);
    }
  }

  @Test
  void everyPublishedPomCarriesWhatMavenCentralRequires() {
    Model root = poms.get("");
    List<String> missing = new ArrayList<>();
    for (Model pom : published()) {
      String id = pom.getArtifactId() + ":";
      require(missing, id + " groupId dev.commplan", "dev.commplan".equals(pom.getGroupId()));
      require(missing, id + " version without ${...}", resolved(pom.getVersion()));
      require(missing, id + " <name>", resolved(pom.getName()));
      require(missing, id + " <description>", resolved(pom.getDescription()));
      require(missing, id + " <url>", resolved(pom.getUrl()));
      require(missing, id + " <url> " + root.getUrl() + " (not one with the module appended), was " + pom.getUrl(),
          Objects.equals(root.getUrl(), pom.getUrl()));
      List<License> licenses = pom.getLicenses();
      require(missing, id + " one <license>, " + LICENSE + " at " + LICENSE_URL + ", was "
          + licenses.stream().map(l -> l.getName() + " " + l.getUrl()).toList(),
          licenses.size() == 1 && LICENSE.equals(licenses.get(0).getName()) && LICENSE_URL.equals(licenses.get(0).getUrl()));
      List<Developer> developers = pom.getDevelopers();
      require(missing, id + " <developers> with a name and an email each", !developers.isEmpty()
          && developers.stream().allMatch(d -> resolved(d.getName()) && resolved(d.getEmail())));
      Scm scm = pom.getScm();
      require(missing, id + " <scm>", scm != null);
      if (scm != null && root.getScm() != null) {
        for (Map.Entry<String, Function<Scm, String>> part : Map.<String, Function<Scm, String>>of(
            "connection", Scm::getConnection, "developerConnection", Scm::getDeveloperConnection, "url", Scm::getUrl).entrySet()) {
          String value = part.getValue().apply(scm);
          String expected = part.getValue().apply(root.getScm());
          require(missing, id + " <scm><" + part.getKey() + "> " + expected + " (not one with the module appended), was "
              + value, resolved(value) && Objects.equals(value, expected));
        }
      }
    }
    assertTrue(missing.isEmpty(), "published POMs lack what Maven Central requires:\n  " + String.join("\n  ", missing));
  }

  @Test
  void theBomManagesEveryPublishedJarAtItsOwnVersion() {
    Model bom = poms.get("bom");
    assertEquals("commplan-bom", bom.getArtifactId());
    assertEquals(poms.get("").getVersion(), bom.getVersion(), "bom/pom.xml has no parent: its version must follow the root's");
    assertEquals(null, bom.getParent(), "an imported BOM brings its parent's dependencyManagement along");
    Set<String> jars = published().stream().filter(m -> m.getPackaging().equals("jar")).map(Model::getArtifactId)
        .collect(Collectors.toCollection(TreeSet::new));
    List<Dependency> managed = bom.getDependencyManagement().getDependencies();
    assertEquals(jars, managed.stream().map(Dependency::getArtifactId).collect(Collectors.toCollection(TreeSet::new)),
        "what the BOM manages (the published jars, nothing else)");
    for (Dependency d : managed) {
      assertEquals("dev.commplan", d.getGroupId(), d.toString());
      assertEquals(bom.getVersion(), d.getVersion(), d.toString());
      assertEquals("jar", d.getType(), d.toString());
      assertEquals(null, d.getScope(), d + ": a scope in a BOM is forced on every user");
    }
  }

  /** mvn -P release: a -sources.jar and a -javadoc.jar next to each published jar, none for the others. */
  @Test
  void theReleaseProfileAttachesSourcesAndJavadocToEveryPublishedJar() {
    List<String> wrong = new ArrayList<>();
    for (Map.Entry<String, Model> entry : releasePoms.entrySet()) {
      Model pom = entry.getValue();
      if (!pom.getPackaging().equals("jar")) {
        continue;
      }
      boolean publishedJar = !"true".equals(pom.getProperties().getProperty("maven.deploy.skip"));
      String sourcesSkipped = executionParameter(pom, "maven-source-plugin", "jar-no-fork", "skipSource");
      if (publishedJar && !"false".equals(sourcesSkipped)) {
        wrong.add(pom.getArtifactId() + ": no maven-source-plugin jar-no-fork (skipSource " + sourcesSkipped + ")");
      }
      if (!publishedJar && !"true".equals(sourcesSkipped)) {
        wrong.add(pom.getArtifactId() + ": not published, yet a sources jar (skipSource " + sourcesSkipped + ")");
      }
      if (publishedJar && !hasGoal(pom, "maven-javadoc-plugin", "jar")) {
        wrong.add(pom.getArtifactId() + ": no maven-javadoc-plugin jar in its build");
      }
    }
    assertTrue(wrong.isEmpty(), String.join("\n", wrong));
  }

  @Test
  void theLicenseFileIsTheApacheLicense2() throws IOException {
    String text = Files.readString(Checkout.root().resolve("LICENSE"), StandardCharsets.UTF_8);
    assertTrue(text.strip().startsWith("Apache License\n                           Version 2.0, January 2004"),
        "LICENSE does not start as the Apache License 2.0 does");
    assertTrue(text.contains("END OF TERMS AND CONDITIONS"), "LICENSE is not the whole Apache License 2.0");
  }

  private static boolean hasGoal(Model pom, String plugin, String goal) {
    return executions(pom, plugin).stream().anyMatch(e -> e.getGoals().contains(goal));
  }

  /** A parameter of the plugin's execution that runs {@code goal}, as interpolated; null where none. */
  private static String executionParameter(Model pom, String plugin, String goal, String parameter) {
    for (PluginExecution e : executions(pom, plugin)) {
      if (e.getGoals().contains(goal) && e.getConfiguration() instanceof Xpp3Dom configuration
          && configuration.getChild(parameter) != null) {
        return configuration.getChild(parameter).getValue();
      }
    }
    return null;
  }

  private static List<PluginExecution> executions(Model pom, String artifactId) {
    return pom.getBuild().getPlugins().stream().filter(p -> p.getArtifactId().equals(artifactId))
        .map(Plugin::getExecutions).flatMap(List::stream).toList();
  }

  private static boolean resolved(String value) {
    return value != null && !value.isBlank() && !value.contains("${");
  }

  private static void require(List<String> missing, String what, boolean present) {
    if (!present) {
      missing.add(what);
    }
  }
}
