package dev.commplan.bench;

import dev.commplan.bench.Args.UsageException;
import dev.commplan.samples.OutputCheck;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code commplan-bench report}: reads a GPU run's logs and writes the comparison as markdown. Two kinds:
 * issue 24's (bin/gpu-run's PERF_ONLY logs: {@link PerfReport}) and, with {@code --multirank}, issue 31's
 * (bin/gpu-multirank-perf's logs: {@link MultiRankReport}).
 */
final class ReportCommand {
  private ReportCommand() {}

  static void run(Args a, PrintStream out) {
    boolean multirank = a.flag("multirank");
    String dir = a.string("dir", null);
    if (dir != null && !Files.isDirectory(Path.of(dir))) {
      throw new UsageException("--dir " + dir + " is not a folder");
    }
    List<Path> logs = new ArrayList<>();
    String md;
    if (multirank) {
      Path c = logPath(a, "c-baseline", dir, "c-baseline.txt", logs);
      Path sweep = logPath(a, "sweep", dir, "sweep.txt", logs);
      Path many = logPath(a, "many", dir, "many.txt", logs);
      String outPath = outPath(a, logs, "report --multirank needs --dir DIR or at least one of --c-baseline, --sweep,"
          + " --many");
      md = MultiRankReport.markdown(lines(c), lines(sweep), lines(many), sources(logs));
      write(md, outPath, out);
    } else {
      Path nccl = logPath(a, "nccl-tests", dir, "nccl-tests.txt", logs);
      Path sweep = logPath(a, "sweep", dir, "sweep.txt", logs);
      Path host = logPath(a, "host", dir, "host-cost.txt", logs);
      String outPath = outPath(a, logs, "report needs --dir DIR or at least one of --nccl-tests, --sweep, --host");
      md = PerfReport.markdown(PerfLogs.ncclTests(lines(nccl)), PerfLogs.sweep(lines(sweep)),
          PerfLogs.host(lines(host)), sources(logs));
      write(md, outPath, out);
    }
  }

  /** --out, checked before any reading; and that some log was found ({@code none} otherwise). */
  private static String outPath(Args a, List<Path> logs, String none) {
    String outPath = a.string("out", null);
    a.finish();
    if (logs.isEmpty()) {
      throw new UsageException(none);
    }
    if (outPath != null) {
      String why = OutputCheck.whyNotWritable(Path.of(outPath));
      if (why != null) {
        throw new UsageException("cannot write --out " + outPath + ": " + why);
      }
    }
    return outPath;
  }

  private static String sources(List<Path> logs) {
    return String.join(", ", logs.stream().map(p -> "`" + p.getFileName() + "`").toList());
  }

  private static void write(String md, String outPath, PrintStream out) {
    if (outPath == null) {
      out.print(md);
      out.flush();
      return;
    }
    try {
      Files.writeString(Path.of(outPath), md);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + outPath, e);
    }
    out.println("wrote " + outPath);
  }

  /** --NAME FILE, else DIR/FILE where DIR was given and the file is there; null for neither. Found ones join {@code logs}. */
  private static Path logPath(Args a, String name, String dir, String file, List<Path> logs) {
    String given = a.string(name, null);
    Path p = null;
    if (given != null) {
      p = BenchMain.paths("--" + name, given).get(0);
    } else if (dir != null && Files.isReadable(Path.of(dir, file))) {
      p = Path.of(dir, file);
    }
    if (p != null) {
      logs.add(p);
    }
    return p;
  }

  private static List<String> lines(Path p) {
    if (p == null) {
      return List.of();
    }
    try {
      return Files.readAllLines(p, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + p, e);
    }
  }
}
