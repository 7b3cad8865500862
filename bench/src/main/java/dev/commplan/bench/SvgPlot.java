package dev.commplan.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/** The two plots, as SVG written by hand: busbw against size, and the many-buffers ratios. */
final class SvgPlot {
  private static final String[] COLORS = {
    "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#17becf", "#7f7f7f", "#bcbd22"
  };
  private static final int W = 960;
  private static final int H = 480;
  private static final int LEFT = 70;
  private static final int RIGHT = 330;
  private static final int TOP = 40;
  private static final int BOTTOM = 60;

  private SvgPlot() {}

  /** One line of points. */
  private record Series(String label, boolean dashed, List<double[]> points) {}

  /**
   * Bandwidth (GB/s, nccl-tests' {@code metric}: "busbw" or "algbw") against size (bytes, log2 axis): a
   * colour per backend, ranks and collective; out of place solid, in place dashed ({@code placements}
   * picks "out", "in" or both). Series that are zero everywhere (busbw of one rank) are left out, and the
   * bandwidth axis is logarithmic, since small messages are orders of magnitude below large ones.
   */
  static void bandwidth(List<Path> csvs, Path out, String metric, Set<String> placements) {
    if (!metric.equals("busbw") && !metric.equals("algbw")) {
      throw new IllegalArgumentException("--metric must be busbw or algbw, not " + metric);
    }
    Map<String, Series> series = new LinkedHashMap<>();
    for (Path csv : csvs) {
      List<List<String>> rows = Csv.read(csv);
      Map<String, Integer> col = columns(rows.get(0), csv);
      for (List<String> r : rows.subList(1, rows.size())) {
        String key = r.get(col.get("backend")) + ", " + r.get(col.get("ranks")) + " ranks, " + r.get(col.get("collective"))
            + meshNote(r, col, "over " + cell(r, col, "over"));
        double size = Double.parseDouble(r.get(col.get("size_bytes")));
        if (placements.contains("out")) {
          series.computeIfAbsent(key + " (out of place)", k -> new Series(k, false, new ArrayList<>()))
              .points().add(new double[] {size, Double.parseDouble(r.get(col.get("oop_" + metric + "_gbs")))});
        }
        double inPlace = Double.parseDouble(r.get(col.get("ip_" + metric + "_gbs")));
        if (placements.contains("in") && !Double.isNaN(inPlace)) { // NaN: no in-place form (all-to-all, sendrecv)
          series.computeIfAbsent(key + " (in place)", k -> new Series(k, true, new ArrayList<>()))
              .points().add(new double[] {size, inPlace});
        }
      }
    }
    series.values().removeIf(s -> s.points().stream().allMatch(p -> p[1] <= 0));
    if (series.isEmpty()) {
      throw new IllegalArgumentException("no non-zero " + metric + " in " + csvs);
    }
    double minX = Double.MAX_VALUE;
    double maxX = 0;
    double minY = Double.MAX_VALUE;
    double maxY = 0;
    for (Series s : series.values()) {
      for (double[] p : s.points()) {
        minX = Math.min(minX, p[0]);
        maxX = Math.max(maxX, p[0]);
        if (p[1] > 0) {
          minY = Math.min(minY, p[1]);
          maxY = Math.max(maxY, p[1]);
        }
      }
    }
    double lx0 = Math.floor(log2(minX));
    double lx1 = Math.max(lx0 + 1, Math.ceil(log2(maxX)));
    double ly0 = Math.floor(Math.log10(minY));
    double ly1 = Math.max(ly0 + 1, Math.ceil(Math.log10(maxY)));
    StringBuilder svg = begin(metric + " against size (nccl-tests' " + metric + ")");
    int pw = W - LEFT - RIGHT;
    int ph = H - TOP - BOTTOM;
    // Axes and grid.
    for (int e = (int) lx0; e <= lx1; e += Math.max(1, (int) Math.ceil((lx1 - lx0) / 14))) {
      double x = LEFT + (e - lx0) / (lx1 - lx0) * pw;
      line(svg, x, TOP, x, TOP + ph, "#e0e0e0");
      text(svg, x, TOP + ph + 16, "middle", sizeLabel(e));
    }
    for (int e = (int) ly0; e <= ly1; e++) {
      double y = TOP + ph - (e - ly0) / (ly1 - ly0) * ph;
      line(svg, LEFT, y, LEFT + pw, y, "#e0e0e0");
      text(svg, LEFT - 6, y + 4, "end", fmt(Math.pow(10, e)));
    }
    rect(svg, LEFT, TOP, pw, ph);
    text(svg, LEFT + pw / 2.0, H - 18, "middle", "size (bytes, log scale)");
    svg.append(String.format(Locale.ROOT,
        "<text x=\"16\" y=\"%d\" transform=\"rotate(-90 16 %d)\" text-anchor=\"middle\" font-size=\"12\">%s (GB/s, log scale)</text>%n",
        TOP + ph / 2, TOP + ph / 2, metric));
    int i = 0;
    String previousKey = null;
    int colour = -1;
    for (Series s : series.values()) {
      String seriesKey = s.label().substring(0, s.label().lastIndexOf(" ("));
      if (!seriesKey.equals(previousKey)) {
        colour++;
        previousKey = seriesKey;
      }
      String color = COLORS[colour % COLORS.length];
      StringBuilder path = new StringBuilder();
      for (double[] p : s.points()) {
        if (p[1] <= 0) {
          continue; // no point on a log axis; the line skips it
        }
        double x = LEFT + (log2(p[0]) - lx0) / (lx1 - lx0) * pw;
        double y = TOP + ph - (Math.log10(p[1]) - ly0) / (ly1 - ly0) * ph;
        path.append(path.isEmpty() ? "M" : " L").append(String.format(Locale.ROOT, "%.1f %.1f", x, y));
      }
      svg.append(String.format(Locale.ROOT,
          "<path d=\"%s\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s/>%n", path, color,
          s.dashed() ? " stroke-dasharray=\"5 3\"" : ""));
      double ly = TOP + 10 + i * 16;
      svg.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"1.8\"%s/>%n",
          W - RIGHT + 12, ly, W - RIGHT + 34, ly, color, s.dashed() ? " stroke-dasharray=\"5 3\"" : ""));
      text(svg, W - RIGHT + 40, ly + 4, "start", s.label());
      i++;
    }
    write(out, svg.append("</svg>\n"));
  }

  /**
   * One group of bars per CSV (a case on a backend): separate/plan, group/plan, plan/flat and, where the
   * CSV has the {@code graph} row (captured plans, issue 18; older CSVs do not), graph/flat, on a log
   * scale with a line at 1. On backends without CUDA graphs the graph row is the executing fallback.
   */
  static void manyBuffers(List<Path> csvs, Path out) {
    record Group(String label, double[] ratios) {}
    List<Group> groups = new ArrayList<>();
    for (Path csv : csvs) {
      List<List<String>> rows = Csv.read(csv);
      Map<String, Integer> col = columns(rows.get(0), csv);
      Map<String, Double> median = new LinkedHashMap<>();
      String label = null;
      for (List<String> r : rows.subList(1, rows.size())) {
        median.put(r.get(col.get("mode")), Double.parseDouble(r.get(col.get("median_us"))));
        label = r.get(col.get("backend")) + " " + r.get(col.get("ranks")) + "r " + r.get(col.get("case")) + " "
            + r.get(col.get("placement")) + meshNote(r, col, cell(r, col, "axis_split"));
      }
      for (String mode : ManyBuffers.MODES) {
        if (!median.containsKey(mode) && !mode.equals("graph")) {
          throw new IllegalArgumentException(csv + " has no row for mode " + mode);
        }
      }
      double plan = median.get("plan");
      double flat = median.get("flat");
      Double graph = median.get("graph");
      groups.add(new Group(label, new double[] {
          median.get("separate") / plan, median.get("group") / plan, plan / flat,
          graph == null ? Double.NaN : graph / flat}));
    }
    String[] names = {"separate / plan", "group / plan", "plan / flat", "graph / flat"};
    double lo = 0.5;
    double hi = 2;
    for (Group g : groups) {
      for (double r : g.ratios()) {
        if (Double.isNaN(r)) {
          continue; // no graph row in this CSV
        }
        lo = Math.min(lo, r / 1.5);
        hi = Math.max(hi, r * 1.5);
      }
    }
    double l0 = Math.floor(Math.log10(lo));
    double l1 = Math.ceil(Math.log10(hi));
    StringBuilder svg = begin("Many buffers: time per step, ratios of medians");
    int pw = W - LEFT - RIGHT;
    int ph = H - TOP - BOTTOM;
    for (int e = (int) l0; e <= l1; e++) {
      for (int m : new int[] {1, 2, 5}) {
        double v = m * Math.pow(10, e);
        double lv = Math.log10(v);
        if (lv < l0 || lv > l1) {
          continue;
        }
        double y = TOP + ph - (lv - l0) / (l1 - l0) * ph;
        line(svg, LEFT, y, LEFT + pw, y, m == 1 ? "#c0c0c0" : "#ececec");
        text(svg, LEFT - 6, y + 4, "end", fmt(v) + "x");
      }
    }
    double one = TOP + ph - (0 - l0) / (l1 - l0) * ph;
    line(svg, LEFT, one, LEFT + pw, one, "#000000");
    rect(svg, LEFT, TOP, pw, ph);
    double gw = (double) pw / groups.size();
    double bw = gw / (names.length + 1.5);
    for (int g = 0; g < groups.size(); g++) {
      Group group = groups.get(g);
      for (int b = 0; b < names.length; b++) {
        double r = group.ratios()[b];
        if (Double.isNaN(r)) {
          continue;
        }
        double y = TOP + ph - (Math.log10(r) - l0) / (l1 - l0) * ph;
        double x = LEFT + g * gw + bw * (0.75 + b);
        double top = Math.min(y, one);
        svg.append(String.format(Locale.ROOT,
            "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>%n",
            x, top, bw * 0.9, Math.abs(one - y), COLORS[b]));
        text(svg, x + bw * 0.45, top - 4, "middle", String.format(Locale.ROOT, "%.2f", r));
      }
      text(svg, LEFT + g * gw + gw / 2, TOP + ph + 16, "middle", group.label());
    }
    for (int b = 0; b < names.length; b++) {
      double ly = TOP + 10 + b * 18;
      svg.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%.1f\" width=\"14\" height=\"10\" fill=\"%s\"/>%n",
          W - RIGHT + 12, ly - 5, COLORS[b]));
      text(svg, W - RIGHT + 32, ly + 4, "start", names[b]);
    }
    text(svg, LEFT + pw / 2.0, H - 18, "middle", "backend, ranks, case, placement");
    write(out, svg.append("</svg>\n"));
  }

  /** {@code , mesh dp=2,tp=4 <what>} for a row over a mesh (CSVs of before issue 23 have no such column): "". */
  private static String meshNote(List<String> r, Map<String, Integer> col, String what) {
    String mesh = cell(r, col, "mesh");
    return mesh.isEmpty() ? "" : ", mesh " + mesh + " " + what;
  }

  private static String cell(List<String> r, Map<String, Integer> col, String name) {
    Integer i = col.get(name);
    return i == null || i >= r.size() ? "" : r.get(i);
  }

  private static Map<String, Integer> columns(List<String> header, Path csv) {
    Map<String, Integer> col = new LinkedHashMap<>();
    for (int i = 0; i < header.size(); i++) {
      col.put(header.get(i), i);
    }
    if (!col.containsKey("backend")) {
      throw new IllegalArgumentException(csv + " is not a CSV written by commplan-bench (no 'backend' column)");
    }
    return col;
  }

  private static StringBuilder begin(String title) {
    StringBuilder svg = new StringBuilder();
    svg.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " font-family=\"sans-serif\" font-size=\"11\">%n", W, H, W, H));
    svg.append(String.format("<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", W, H));
    text(svg, W / 2.0, 22, "middle", title);
    return svg;
  }

  private static void line(StringBuilder svg, double x1, double y1, double x2, double y2, String color) {
    svg.append(String.format(Locale.ROOT,
        "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\"/>%n", x1, y1, x2, y2, color));
  }

  private static void rect(StringBuilder svg, double x, double y, double w, double h) {
    svg.append(String.format(Locale.ROOT,
        "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#606060\"/>%n", x, y, w, h));
  }

  private static void text(StringBuilder svg, double x, double y, String anchor, String s) {
    svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\">%s</text>%n", x, y, anchor,
        s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")));
  }

  private static String sizeLabel(int log2) {
    String[] units = {"B", "K", "M", "G", "T"};
    int u = Math.min(log2 / 10, units.length - 1);
    return (1L << (log2 - 10 * u)) + units[u];
  }

  private static double log2(double v) {
    return Math.log(v) / Math.log(2);
  }

  private static double niceCeil(double v) {
    if (v <= 0) {
      return 1;
    }
    double p = Math.pow(10, Math.floor(Math.log10(v)));
    for (double m : new double[] {1, 2, 2.5, 5, 10}) {
      if (m * p >= v) {
        return m * p;
      }
    }
    return 10 * p;
  }

  private static String fmt(double v) {
    return v == Math.rint(v) ? String.format(Locale.ROOT, "%.0f", v) : String.format(Locale.ROOT, "%.3g", v);
  }

  private static void write(Path out, CharSequence svg) {
    try {
      Path parent = out.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(out, svg, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + out, e);
    }
  }
}
