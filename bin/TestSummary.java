import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

/**
 * bin/test's last lines: why tests were skipped, once per test class and reason, read from the Surefire
 * and Failsafe reports this run wrote (TEST-*.xml newer than the stamp file bin/test made before Maven
 * started), then
 * the totals as one line: {@code tests: N passed, N failed, N skipped}.
 *
 * <pre>java bin/TestSummary.java STAMP_FILE [ROOT]</pre>
 *
 * A single-file program (JEP 330): it runs on the JDK that bin/env.sh selects, with nothing to build.
 */
public final class TestSummary {
  /** Surefire's unit tests and failsafe's integration tests (*IT). */
  private static final List<String> REPORT_DIRS = List.of("surefire-reports", "failsafe-reports");

  public static void main(String[] args) throws Exception {
    long since = new File(args[0]).lastModified();
    Path root = Path.of(args.length > 1 ? args[1] : ".");
    List<Path> reports;
    try (Stream<Path> files = Files.find(root, 5, (p, a) -> a.isRegularFile()
        && p.getFileName().toString().startsWith("TEST-") && p.getFileName().toString().endsWith(".xml")
        && p.getParent() != null && REPORT_DIRS.contains(p.getParent().getFileName().toString())
        && a.lastModifiedTime().toMillis() >= since)) {
      reports = files.sorted().toList();
    }
    long tests = 0;
    long failed = 0;
    long skipped = 0;
    // class -> reason -> count, in class order
    Map<String, Map<String, Integer>> reasons = new TreeMap<>();
    DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
    for (Path report : reports) {
      Document doc = factory.newDocumentBuilder().parse(report.toFile());
      Element suite = doc.getDocumentElement();
      tests += number(suite, "tests");
      failed += number(suite, "failures") + number(suite, "errors");
      skipped += number(suite, "skipped");
      NodeList cases = suite.getElementsByTagName("testcase");
      for (int i = 0; i < cases.getLength(); i++) {
        Element testcase = (Element) cases.item(i);
        NodeList skips = testcase.getElementsByTagName("skipped");
        if (skips.getLength() == 0) {
          continue;
        }
        String className = testcase.getAttribute("classname");
        if (className.isEmpty()) {
          className = suite.getAttribute("name");
        }
        reasons.computeIfAbsent(className, k -> new TreeMap<>())
            .merge(reason((Element) skips.item(0)), 1, Integer::sum);
      }
    }
    if (reports.isEmpty()) {
      System.out.println("tests: no Surefire report from this run (were the tests skipped?)");
      return;
    }
    if (!reasons.isEmpty()) {
      System.out.println("Skipped tests, once per class and reason:");
      for (Map.Entry<String, Map<String, Integer>> c : reasons.entrySet()) {
        for (Map.Entry<String, Integer> r : c.getValue().entrySet()) {
          System.out.println("  " + c.getKey() + " (" + r.getValue() + " skipped): " + r.getKey());
        }
      }
    }
    System.out.println("tests: " + (tests - failed - skipped) + " passed, " + failed + " failed, " + skipped + " skipped");
  }

  private static long number(Element e, String attribute) {
    String v = e.getAttribute(attribute);
    return v.isEmpty() ? 0 : Long.parseLong(v.trim());
  }

  /** The skip's message; without one (an assumption that failed), the first line of its stack trace, trimmed. */
  static String reason(Element skipped) {
    String message = skipped.getAttribute("message").strip();
    if (message.isEmpty()) {
      String text = skipped.getTextContent() == null ? "" : skipped.getTextContent().strip();
      message = text.isEmpty() ? "" : text.lines().findFirst().orElse("");
      for (String prefix : new String[] {"org.opentest4j.TestAbortedException:", "Assumption failed:"}) {
        if (message.startsWith(prefix)) {
          message = message.substring(prefix.length()).strip();
        }
      }
    }
    return message.isEmpty() ? "no reason given (the test should say why it skips)" : message;
  }

  private TestSummary() {}
}
