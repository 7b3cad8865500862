package dev.commplan.launcher;

import java.io.InputStream;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.MethodType;
import java.net.URL;
import java.util.Enumeration;
import java.util.jar.Attributes;
import java.util.jar.Manifest;

/**
 * The {@code Main-Class} of the samples and bench jars. It is compiled for Java 8 (every other class of
 * the jars needs Java 22), so that {@code java -jar} under an older Java says in one line what is wrong,
 * exit status 2, instead of {@code UnsupportedClassVersionError}. On Java 22 or newer it calls the jar's
 * real main class, named by the manifest's {@code CommPlan-Main-Class}, with the same arguments;
 * exceptions pass through unchanged. The manifest's {@code Enable-Native-Access: ALL-UNNAMED} applies as
 * before: it covers every class of the jar, whichever class {@code java -jar} starts.
 *
 * <p>One source, compiled into both jars: the bench module compiles this folder too.
 */
public final class Launcher {
  /** The oldest Java the runtime runs on: FFM is final from 22. */
  static final int REQUIRED = 22;

  static final String MAIN_ATTRIBUTE = "CommPlan-Main-Class";

  /** Optional: what else the user can do, appended to the line ("or use bin/sample, which picks JDK 25"). */
  static final String HINT_ATTRIBUTE = "CommPlan-Hint";

  private Launcher() {}

  public static void main(String[] args) throws Throwable {
    Attributes manifest = manifest();
    String version = System.getProperty("java.specification.version", "?");
    if (feature(version) < REQUIRED) {
      System.err.println(tooOld(version, System.getProperty("java.home", "?"),
          manifest == null ? null : manifest.getValue(HINT_ATTRIBUTE)));
      System.exit(2);
      return;
    }
    String mainClass = manifest == null ? null : manifest.getValue(MAIN_ATTRIBUTE);
    if (mainClass == null) {
      System.err.println("error: this jar's manifest names no " + MAIN_ATTRIBUTE + " (a broken build of CommPlan)");
      System.exit(1);
      return;
    }
    MethodHandle main = MethodHandles.publicLookup().findStatic(
        Class.forName(mainClass.trim()), "main", MethodType.methodType(void.class, String[].class));
    main.invokeExact(args);
  }

  /** The one line printed under a Java older than 22. */
  static String tooOld(String version, String javaHome, String hint) {
    return "CommPlan needs Java " + REQUIRED + " or newer; this is Java " + version + " (" + javaHome
        + "); run the jar with the java of a JDK 22 or newer (JAVA_HOME/bin/java -jar ...)"
        + (hint == null || hint.trim().isEmpty() ? "" : ", " + hint.trim());
  }

  /** The feature release: "1.8" is 8, "17" is 17, "25" is 25; anything unreadable counts as 0. */
  static int feature(String specificationVersion) {
    String v = specificationVersion.startsWith("1.") ? specificationVersion.substring(2) : specificationVersion;
    int end = 0;
    while (end < v.length() && Character.isDigit(v.charAt(end))) {
      end++;
    }
    try {
      return Integer.parseInt(v.substring(0, end));
    } catch (NumberFormatException e) {
      return 0;
    }
  }

  /** The main attributes of the manifest of the jar this class was loaded from (the one that names a main class). */
  private static Attributes manifest() throws java.io.IOException {
    String self = Launcher.class.getResource("Launcher.class").toString();
    Enumeration<URL> manifests = Launcher.class.getClassLoader().getResources("META-INF/MANIFEST.MF");
    Attributes fallback = null;
    while (manifests.hasMoreElements()) {
      URL url = manifests.nextElement();
      Attributes attributes;
      InputStream in = url.openStream();
      try {
        attributes = new Manifest(in).getMainAttributes();
      } finally {
        in.close();
      }
      if (attributes.getValue(MAIN_ATTRIBUTE) == null) {
        continue;
      }
      String jar = url.toString().substring(0, url.toString().length() - "META-INF/MANIFEST.MF".length());
      if (self.startsWith(jar)) {
        return attributes;
      }
      if (fallback == null) {
        fallback = attributes;
      }
    }
    return fallback;
  }
}
