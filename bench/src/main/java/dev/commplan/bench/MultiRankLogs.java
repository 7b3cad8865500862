package dev.commplan.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the logs of {@code bin/gpu-multirank-perf}, where each file holds several rank counts one after the
 * other: {@code c-baseline.txt} (bench/native/multirank_perf.c: its sweep in our sweep's layout, its
 * many-buffers rows as {@code C: ...} probe rows), {@code sweep.txt} (our sweeps) and {@code many.txt} (our
 * {@code many} runs, each after the {@code $ command} line the script prints). The tables themselves are
 * read by {@link PerfLogs}; this class splits the files by rank count and reads {@code many}'s rows.
 */
final class MultiRankLogs {
  private MultiRankLogs() {}

  /**
   * A header that names its rank count between two double spaces: our sweep's {@code # AllReduce  backend
   * nccl  ranks 2  ...}, the C baseline's {@code # AllReduce  backend c  ranks 2  ...} and {@code # many  ranks 2
   * ...}, our many's {@code # backend nccl  ranks 4  time per step ...}.
   */
  private static final Pattern RANKS = Pattern.compile("^#.*?\\s{2}ranks (\\d+)\\s{2}");
  private static final Pattern C_MANY = Pattern.compile("^# many  ranks (\\d+)  ([^:]*)");
  private static final Pattern AGREEMENT = Pattern.compile("-Dcommplan\\.agreementCheck=(\\w+)");
  private static final Pattern RC = Pattern.compile("^rc=(\\d+)\\s*$");
  private static final Pattern MANY_ROW = Pattern.compile(
      "^\\s+(" + String.join("|", ManyBuffers.MODES) + ")\\s+(\\d+)\\s+(\\S+)\\s+(\\S+)\\s+(-?\\d+)\\s+(.*?)\\s*$");

  /**
   * Each rank count's lines, in order: a header that names a rank count starts that count's section (the
   * header included); lines before the first such header belong to none.
   */
  static Map<Integer, List<String>> byRanks(List<String> lines) {
    Map<Integer, List<String>> sections = new TreeMap<>();
    List<String> current = null;
    for (String line : lines) {
      Matcher m = RANKS.matcher(line);
      if (m.find()) {
        current = sections.computeIfAbsent(Integer.parseInt(m.group(1)), r -> new ArrayList<>());
      }
      if (current != null) {
        current.add(line);
      }
    }
    return sections;
  }

  /** Our sweep's tables (or the C baseline's, in the same layout), per rank count. */
  static Map<Integer, Map<Coll, PerfLogs.Table>> sweeps(List<String> lines) {
    Map<Integer, Map<Coll, PerfLogs.Table>> tables = new TreeMap<>();
    byRanks(lines).forEach((ranks, section) -> tables.put(ranks, PerfLogs.sweep(section)));
    return tables;
  }

  /** The C baseline's many-buffers rows ({@code C: ...}), per rank count, by name. */
  static Map<Integer, Map<String, PerfLogs.HostRow>> cMany(List<String> lines) {
    Map<Integer, Map<String, PerfLogs.HostRow>> rows = new TreeMap<>();
    byRanks(lines).forEach((ranks, section) -> {
      Map<String, PerfLogs.HostRow> c = PerfLogs.host(section);
      if (!c.isEmpty()) {
        rows.put(ranks, c);
      }
    });
    return rows;
  }

  /** The case of the C baseline's many-buffers part per rank count: {@code 200 x 256 float all-reduce sum, ...}. */
  static Map<Integer, String> cManyCase(List<String> lines) {
    Map<Integer, String> found = new TreeMap<>();
    for (String line : lines) {
      Matcher m = C_MANY.matcher(line);
      if (m.find()) {
        found.putIfAbsent(Integer.parseInt(m.group(1)), m.group(2).trim());
      }
    }
    return found;
  }

  /** One way's line of our {@code many}: {@code mode}, NCCL calls per step, median and min µs per step, #wrong, warm-up. */
  record ManyRow(String mode, int calls, double medianUs, double minUs, long wrong, String warmUp) {}

  /**
   * One run of our {@code many}: its command line, its ranks (0 where its output never said), whether the
   * agreement check was on ({@code -Dcommplan.agreementCheck}; on where the command does not say, the
   * runtime's default), the case it ran ({@code # many buffers:} line), its rows by mode, and its exit status
   * (-1 where the log has none).
   */
  record ManyRun(String command, int ranks, boolean agreementCheck, String theCase, Map<String, ManyRow> rows,
      int rc) {}

  /** Our many runs, each from its {@code $ } line to the next. */
  static List<ManyRun> many(List<String> lines) {
    List<ManyRun> runs = new ArrayList<>();
    String command = null;
    int ranks = 0;
    int rc = -1;
    String theCase = "";
    Map<String, ManyRow> rows = new LinkedHashMap<>();
    for (String line : lines) {
      if (line.startsWith("$ ")) {
        if (command != null) {
          runs.add(run(command, ranks, theCase, rows, rc));
        }
        command = line.substring(2).trim();
        ranks = 0;
        rc = -1;
        theCase = "";
        rows = new LinkedHashMap<>();
        continue;
      }
      if (command == null) {
        continue;
      }
      Matcher r = RANKS.matcher(line);
      if (r.find()) {
        ranks = Integer.parseInt(r.group(1));
      }
      if (line.startsWith("# many buffers:")) {
        theCase = line.substring("# many buffers:".length()).trim();
      }
      Matcher code = RC.matcher(line);
      if (code.find()) {
        rc = Integer.parseInt(code.group(1));
      }
      Matcher m = MANY_ROW.matcher(line);
      if (m.find()) {
        rows.put(m.group(1), new ManyRow(m.group(1), Integer.parseInt(m.group(2)), number(m.group(3)),
            number(m.group(4)), Long.parseLong(m.group(5)), m.group(6)));
      }
    }
    if (command != null) {
      runs.add(run(command, ranks, theCase, rows, rc));
    }
    return runs;
  }

  private static ManyRun run(String command, int ranks, String theCase, Map<String, ManyRow> rows, int rc) {
    Matcher a = AGREEMENT.matcher(command);
    boolean check = !a.find() || !a.group(1).equals("false");
    return new ManyRun(command, ranks, check, theCase, rows, rc);
  }

  private static double number(String s) {
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }
}
