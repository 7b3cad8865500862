package dev.commplan.runtime;

import dev.commplan.doctor.Doctor;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * The doctor ({@code java -jar commplan-doctor.jar}), run as a library on a folder of flight records, and what
 * the scenarios' tests read in its report.
 *
 * @param status its exit status: 0 nothing wrong, 1 a problem, 2 unreadable input, 3 a bug
 * @param out its report
 * @param err what it said on standard error
 */
public record DoctorRun(int status, String out, String err) {
  private static final Pattern LATENESS = Pattern.compile(
      "(?m)^ {4}rank (\\d+) +median +([0-9.]+) (us|ms|s) +worst +([0-9.]+) (us|ms|s)");

  /** Runs the doctor on {@code dir} with {@code options} before it ({@code --html OUT}, say). */
  public static DoctorRun on(Path dir, String... options) {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    List<String> args = new ArrayList<>(List.of(options));
    args.add(dir.toString());
    int status = Doctor.run(args.toArray(String[]::new), new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
    return new DoctorRun(status, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
  }

  /** The {@code *.json} files in {@code dir}, by name. */
  public static List<String> files(Path dir) throws IOException {
    try (Stream<Path> s = Files.list(dir)) {
      return s.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  /**
   * The first group's lateness lines, as printed (slowest first): each {@code {worldRank, medianMicros,
   * worstMicros}}.
   */
  public List<long[]> lateness() {
    List<long[]> rows = new ArrayList<>();
    Matcher m = LATENESS.matcher(out);
    while (m.find()) {
      if (!rows.isEmpty() && rows.stream().anyMatch(r -> r[0] == Long.parseLong(m.group(1)))) {
        break; // the next group's
      }
      rows.add(new long[] {Long.parseLong(m.group(1)), micros(m.group(2), m.group(3)), micros(m.group(4), m.group(5))});
    }
    return rows;
  }

  private static long micros(String value, String unit) {
    double v = Double.parseDouble(value);
    return Math.round(switch (unit) {
      case "us" -> v;
      case "ms" -> v * 1e3;
      default -> v * 1e6;
    });
  }

  @Override
  public String toString() {
    return "doctor exit " + status + "\n" + out + err;
  }
}
