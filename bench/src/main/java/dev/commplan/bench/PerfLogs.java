package dev.commplan.bench;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reads the logs of {@code PERF_ONLY=1 bash bin/gpu-run}: nccl-tests' {@code *_perf} output, our sweep's
 * output (the same table, with a warm-up comment line after each row) and the host-cost probes' rows
 * ({@code NcclHostCostProbe}, {@code NcclGraphProbe}, {@code bench/native/graph_probe.c}). Lines it does
 * not know (commands, build output, {@code rc=}) are skipped.
 */
final class PerfLogs {
  private PerfLogs() {}

  /** One placement's figures at one size: every time printed for it (nccl-tests' cycles), and our warm-up. */
  static final class Cell {
    final List<Double> times = new ArrayList<>();
    String warmUp; // ours: "127640 calls, 1000.0 ms, stable"; null for nccl-tests

    double median() {
      List<Double> t = times.stream().filter(x -> !x.isNaN()).sorted().toList();
      if (t.isEmpty()) {
        return Double.NaN;
      }
      int n = t.size();
      return n % 2 == 1 ? t.get(n / 2) : (t.get(n / 2 - 1) + t.get(n / 2)) / 2;
    }
  }

  /** A collective's rows by size: out of place and in place. */
  static final class Table {
    final Map<Long, Cell> outOfPlace = new TreeMap<>();
    final Map<Long, Cell> inPlace = new TreeMap<>();
  }

  /** A probe's row: median, min, p90, enqueue (µs), heap bytes per run (NaN for C), warm-up (null for C). */
  record HostRow(String name, double medianUs, double minUs, double p90Us, double enqueueUs, double heapBytes,
      String warmUp) {}

  private static final Pattern PERF_BINARY = Pattern.compile("\\b([a-z_]+)_perf\\b");
  private static final Pattern OUR_HEADER = Pattern.compile("^# (\\w+)  backend ");
  private static final Pattern WARM_UP = Pattern.compile(
      "^#\\s+warm-up\\s+out-of-place: (.*?)\\s{3}in-place: (.*)$");
  private static final String NUM = "(-?[0-9.]+(?:e[+-]?[0-9]+)?|N/A)";
  private static final Pattern JAVA_ROW = Pattern.compile("^(\\S.*?)\\s+" + NUM + "\\s+" + NUM + "\\s+" + NUM + "\\s+"
      + NUM + "\\s+" + NUM + "\\s+(\\d+)\\s+" + NUM + "\\s+(stable|cap|fixed)\\s*$");
  private static final Pattern C_ROW = Pattern.compile("^(C: .*?)\\s+" + NUM + "\\s+" + NUM + "\\s+" + NUM + "\\s+"
      + NUM + "\\s*$");

  /**
   * nccl-tests' output of several binaries, one after the other: each section starts at a line naming its
   * {@code X_perf} (the command, or nccl-tests' own {@code # Collective test starting: X_perf}).
   */
  static Map<Coll, Table> ncclTests(List<String> lines) {
    Map<Coll, Table> tables = new LinkedHashMap<>();
    Coll current = null;
    for (String line : lines) {
      if (line.startsWith("$ ") || line.startsWith("# Collective test starting")) {
        Matcher m = PERF_BINARY.matcher(line);
        current = m.find() ? byBinary(m.group(1) + "_perf") : null;
        continue;
      }
      if (current != null) {
        row(line, tables.computeIfAbsent(current, c -> new Table()));
      }
    }
    return tables;
  }

  /** Our sweep's output: each collective's section starts at its header, {@code # AllReduce  backend ...}. */
  static Map<Coll, Table> sweep(List<String> lines) {
    Map<Coll, Table> tables = new LinkedHashMap<>();
    Coll current = null;
    Long lastSize = null;
    for (String line : lines) {
      Matcher h = OUR_HEADER.matcher(line);
      if (h.find()) {
        current = byNcclName(h.group(1));
        lastSize = null;
        continue;
      }
      if (current == null) {
        continue;
      }
      Table t = tables.computeIfAbsent(current, c -> new Table());
      Matcher w = WARM_UP.matcher(line);
      if (w.find() && lastSize != null) {
        t.outOfPlace.get(lastSize).warmUp = w.group(1).trim();
        t.inPlace.get(lastSize).warmUp = w.group(2).trim();
        continue;
      }
      Long size = row(line, t);
      if (size != null) {
        lastSize = size;
      }
    }
    return tables;
  }

  /** A data row of nccl-tests' layout into {@code t}; returns its size, or null for any other line. */
  private static Long row(String line, Table t) {
    if (line.startsWith("#") || line.isBlank()) {
      return null;
    }
    String[] f = line.trim().split("\\s+");
    if (f.length < 13) {
      return null;
    }
    long size;
    try {
      size = Long.parseLong(f[0]);
      Long.parseLong(f[1]);
    } catch (NumberFormatException e) {
      return null;
    }
    t.outOfPlace.computeIfAbsent(size, s -> new Cell()).times.add(number(f[5]));
    t.inPlace.computeIfAbsent(size, s -> new Cell()).times.add(number(f[9]));
    return size;
  }

  /** The probes' rows, by name; a name printed twice keeps its last row. */
  static Map<String, HostRow> host(List<String> lines) {
    Map<String, HostRow> rows = new LinkedHashMap<>();
    for (String line : lines) {
      if (line.startsWith("#") || line.startsWith("variant")) {
        continue;
      }
      Matcher j = JAVA_ROW.matcher(line);
      if (j.find()) {
        String name = j.group(1).trim();
        rows.put(name, new HostRow(name, number(j.group(2)), number(j.group(3)), number(j.group(4)),
            number(j.group(5)), number(j.group(6)), j.group(7) + " runs, " + j.group(8) + " ms, " + j.group(9)));
        continue;
      }
      Matcher c = C_ROW.matcher(line);
      if (c.find()) {
        String name = c.group(1).trim();
        rows.put(name, new HostRow(name, number(c.group(2)), number(c.group(3)), number(c.group(4)),
            number(c.group(5)), Double.NaN, null));
      }
    }
    return rows;
  }

  /** The row whose name starts with {@code prefix} (the probes put counts in some names), or null. */
  static HostRow find(Map<String, HostRow> rows, String prefix) {
    HostRow exact = rows.get(prefix);
    if (exact != null) {
      return exact;
    }
    return rows.values().stream().filter(r -> r.name().startsWith(prefix)).findFirst().orElse(null);
  }

  private static double number(String s) {
    if (s.equals("N/A")) {
      return Double.NaN;
    }
    try {
      return Double.parseDouble(s);
    } catch (NumberFormatException e) {
      return Double.NaN;
    }
  }

  private static Coll byBinary(String binary) {
    return Coll.values().stream().filter(c -> c.perfBinary().equals(binary)).findFirst().orElse(null);
  }

  private static Coll byNcclName(String name) {
    return Coll.values().stream().filter(c -> c.ncclName.toLowerCase(Locale.ROOT).equals(name.toLowerCase(Locale.ROOT)))
        .findFirst().orElse(null);
  }
}
