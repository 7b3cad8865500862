package dev.commplan.release;

import java.nio.file.Path;

/** Where the build told surefire the checkout and the local repository are (release-checks/pom.xml). */
final class Checkout {
  private Checkout() {}

  /** The checkout's root folder. */
  static Path root() {
    return Path.of(property("commplan.root")).toAbsolutePath().normalize();
  }

  /** The build's local Maven repository. */
  static Path localRepository() {
    return Path.of(property("commplan.localRepository")).toAbsolutePath().normalize();
  }

  private static String property(String name) {
    String value = System.getProperty(name);
    if (value == null || value.isBlank() || value.startsWith("${")) {
      throw new AssertionError("system property " + name + " is not set: run this test through Maven");
    }
    return value;
  }
}
