package dev.commplan.samples;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** Runs {@link Main} as the command line would, capturing what it prints. */
record SampleRun(int status, String out, String err) {
  static SampleRun main(String... args) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    int status = Main.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new SampleRun(status, out.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n"),
        err.toString(StandardCharsets.UTF_8));
  }
}
