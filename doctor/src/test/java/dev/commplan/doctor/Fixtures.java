package dev.commplan.doctor;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/** The hand-written records under src/test/resources/fixtures, and the command run on them in this JVM. */
final class Fixtures {
  private Fixtures() {}

  /** The fixture folder {@code name} ({@code stuck}, {@code damaged/truncated}) as the tests see it. */
  static Path dir(String name) {
    URL url = Fixtures.class.getResource("/fixtures/" + name);
    if (url == null) {
      throw new AssertionError("no fixture " + name);
    }
    try {
      return Path.of(url.toURI());
    } catch (URISyntaxException e) {
      throw new AssertionError(e);
    }
  }

  /**
   * What the command did.
   *
   * @param status its exit status
   * @param out what it printed on standard output
   * @param err what it printed on standard error
   */
  record Result(int status, String out, String err) {
    /** For assertion messages: everything it printed. */
    String all() {
      return "exit " + status + "\n--- out:\n" + out + "--- err:\n" + err;
    }
  }

  static Result doctor(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status;
    try (PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
        PrintStream e = new PrintStream(err, true, StandardCharsets.UTF_8)) {
      status = Doctor.run(args, o, e);
    }
    return new Result(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** The run in {@code name}, read and analysed with the default threshold. */
  static Diagnosis diagnosis(String name) throws BadInputException {
    return Diagnosis.of(RecordFolder.read(dir(name)), Doctor.DEFAULT_LATE_MS * 1_000_000);
  }
}
