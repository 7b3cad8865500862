package dev.commplan.release;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import java.io.IOException;
import java.lang.module.ModuleFinder;
import java.lang.module.ModuleReference;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * The public API of the published modules is the one {@code api/<artifactId>.txt} records: an API change
 * is always a reviewed change of that file. It fails on any difference, printing it and the command that
 * rewrites the files ({@code bin/api-update}, which runs this test with {@code -Dcommplan.api.update=true}).
 *
 * <p>The processor has no API to call: what users depend on there is its diagnostics and the generated
 * classes, which docs/dsl.md, the diagnostics catalogue test and the processor's golden files hold.
 */
class ApiSurfaceTest {
  static final String UPDATE = "bin/api-update";

  @ParameterizedTest(name = "{0}")
  @CsvSource({"commplan-model, dev.commplan.model", "commplan-annotations, dev.commplan.annotations",
      "commplan-runtime, dev.commplan.runtime", "commplan-conformance, dev.commplan.conformance"})
  void theBuiltApiIsTheRecordedOne(String artifactId, String moduleName) throws IOException {
    String built = header(artifactId) + ApiSurface.of(module(moduleName), getClass().getClassLoader());
    Path file = Checkout.root().resolve("api").resolve(artifactId + ".txt");
    String recorded = Files.exists(file) ? Files.readString(file, StandardCharsets.UTF_8) : null;
    if (Boolean.getBoolean("commplan.api.update")) {
      if (!built.equals(recorded)) {
        Files.createDirectories(file.getParent());
        Files.writeString(file, built, StandardCharsets.UTF_8);
        System.out.println("ApiSurfaceTest: rewrote " + file);
      }
      return;
    }
    assertTrue(recorded != null, file + " is missing: run " + UPDATE + " and commit it");
    if (!built.equals(recorded)) {
      fail("The public API of " + artifactId + " differs from " + Checkout.root().relativize(file)
          + " (- recorded, + built):\n" + LineDiff.of(recorded, built)
          + "If the change is meant, run " + UPDATE + " and commit the file with it (review the diff: it is the API"
          + " change; docs/release.md says what is breaking). If not, restore the API.");
    }
  }

  private static String header(String artifactId) {
    return """
        # The public API of %s: what its exported packages let other code name and call, read from the
        # built classes. ApiSurfaceTest (release-checks) fails when they differ from this file. Regenerate
        # with %s; the diff is the API change (docs/release.md).

        """.formatted(artifactId, UPDATE);
  }

  /** The module on this test's class path, found through its module-info.class. */
  private static ModuleReference module(String name) throws IOException {
    List<URL> descriptors = Collections.list(ApiSurfaceTest.class.getClassLoader().getResources("module-info.class"));
    List<String> seen = new ArrayList<>();
    for (URL url : descriptors) {
      Path location = location(url);
      Optional<ModuleReference> found = ModuleFinder.of(location).find(name);
      if (found.isPresent()) {
        return found.get();
      }
      seen.add(location.toString());
    }
    throw new AssertionError("module " + name + " is not on the test class path; module-info.class found in " + seen);
  }

  /** The jar or class folder that holds a module-info.class. */
  private static Path location(URL descriptor) {
    try {
      String url = descriptor.toString();
      if (url.startsWith("jar:")) {
        return Path.of(URI.create(url.substring(4, url.indexOf("!/"))));
      }
      return Path.of(descriptor.toURI()).getParent();
    } catch (URISyntaxException e) {
      throw new IllegalStateException("cannot locate " + descriptor, e);
    }
  }
}
