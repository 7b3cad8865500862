package dev.commplan.doctor;

import dev.commplan.doctor.AlignedGroup.Slot;
import dev.commplan.doctor.AlignedGroup.Status;
import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import dev.commplan.doctor.GroupAnalysis.Absent;
import dev.commplan.doctor.Lateness.RankLateness;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * The report as one self-contained HTML page: the verdict, why the records were written, and per group the
 * text report's section with a timeline of one row per rank. Inline CSS and SVG only (no script, no font, no
 * link), so the page opens anywhere, offline, and can be attached to a bug report.
 *
 * <p>The timeline's x axis is the group's sequence number, not time: each rank's times are on its own clock,
 * which the doctor never compares across ranks. Column k is the group's k-th operation on every rank; a
 * cell's colour is its state, a dark bar rising in it is how long the others waited for that rank there
 * (scaled to the group's largest, or to the lateness threshold where that is larger), and a rank the
 * others wait for, or one that never entered an operation, is named in red.
 */
final class HtmlReport {
  /** At most this many columns per group (the last ones): a ring of the default 32 slots is far below it. */
  static final int MAX_COLUMNS = 600;
  private static final int LABEL_WIDTH = 200;
  private static final int CELL = 14;
  private static final int ROW = 22;
  private static final int HEADER = 30;

  private static final String COMPLETED = "#8fbf8f";
  private static final String STARTED = "#f2b632";
  private static final String ENQUEUED = "#f7dc8c";
  private static final String FAILED = "#d64545";
  private static final String DROPPED = "#e2e2e2";
  private static final String LATE_BAR = "#5a0012";
  private static final String DIFFERS = "#1f5fbf";

  private HtmlReport() {}

  static String render(Diagnosis d) {
    RecordFolder.Run run = d.run();
    StringBuilder h = new StringBuilder();
    String title = "CommPlan doctor: job " + Words.quote(run.job());
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\"/>\n<title>").append(esc(title))
        .append("</title>\n<style>\n").append(CSS).append("</style>\n</head>\n<body>\n");
    h.append("<h1>").append(esc(title)).append("</h1>\n<p>").append(esc(run.backend())).append(" backend, ")
        .append(esc(Words.count(run.worldSize(), "rank"))).append("</p>\n");
    List<String> problems = d.problems();
    h.append("<section class=\"verdict ").append(problems.isEmpty() ? "ok" : "bad").append("\">\n<h2>")
        .append(problems.isEmpty() ? "Nothing wrong found" : esc(Words.count(problems.size(), "problem")))
        .append("</h2>\n");
    if (!problems.isEmpty()) {
      h.append("<ul>\n");
      for (String p : problems) {
        h.append("<li>").append(esc(p)).append("</li>\n");
      }
      h.append("</ul>\n");
    }
    h.append("</section>\n<h2>Why the records were written</h2>\n<ul>\n");
    for (Map.Entry<String, List<Integer>> r : d.reasons().entrySet()) {
      h.append("<li><b>").append(esc(Words.ranks(r.getValue()))).append("</b>: ").append(esc(r.getKey()))
          .append("</li>\n");
    }
    h.append("</ul>\n");
    legend(h);
    for (GroupAnalysis g : d.groups()) {
      StringBuilder text = new StringBuilder();
      TextReport.group(text, g);
      h.append("<section class=\"group\">\n<h2>").append(esc(g.group.label())).append("</h2>\n");
      timeline(h, g, d.lateThresholdNanos());
      h.append("<pre>").append(esc(text.toString())).append("</pre>\n</section>\n");
    }
    h.append("</body>\n</html>\n");
    return h.toString();
  }

  private static void timeline(StringBuilder h, GroupAnalysis a, long threshold) {
    AlignedGroup g = a.group;
    long from = Math.max(g.first(), g.last() - MAX_COLUMNS + 1);
    int columns = (int) Math.max(0, g.last() - from + 1);
    if (from > g.first()) {
      h.append("<p>The first ").append(from - g.first()).append(" operations are left out; the last ")
          .append(MAX_COLUMNS).append(" are drawn.</p>\n");
    }
    int width = LABEL_WIDTH + columns * CELL + 40; // room for a mark's word over the last column
    int height = HEADER + g.size() * ROW + 6;
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"timeline\" font-family=\"monospace\" font-size=\"11\"")
        .append(" width=\"").append(width).append("\" height=\"").append(height).append("\" viewBox=\"0 0 ")
        .append(width).append(' ').append(height).append("\">\n");
    for (long seq = from; seq <= g.last(); seq++) {
      int x = LABEL_WIDTH + (int) (seq - from) * CELL;
      if ((seq - from) % 5 == 0 || seq == g.last() && (seq - from) % 5 >= 3) {
        h.append("<text class=\"seq\" x=\"").append(x + CELL / 2).append("\" y=\"12\">#").append(seq)
            .append("</text>\n");
      }
      String mark = a.difference != null && a.difference.seq() == seq ? "differs"
          : a.stall != null && a.stall.seq() == seq ? "stalled" : null;
      if (mark != null) {
        String colour = mark.equals("differs") ? DIFFERS : FAILED;
        h.append("<rect x=\"").append(x).append("\" y=\"").append(HEADER - 4).append("\" width=\"").append(CELL)
            .append("\" height=\"").append(g.size() * ROW + 4).append("\" fill=\"none\" stroke=\"").append(colour)
            .append("\" stroke-width=\"2\"/>\n<text class=\"mark\" fill=\"").append(colour).append("\" x=\"")
            .append(x + CELL / 2).append("\" y=\"24\">").append(mark).append("</text>\n");
      }
    }
    Map<Integer, RankLateness> lateness = new HashMap<>();
    // Bars are scaled to the group's worst lateness, but never to less than the threshold, so that a few
    // microseconds of jitter do not look like a late rank.
    long worst = Math.max(1, threshold);
    for (RankLateness l : a.lateness) {
      lateness.put(l.worldRank(), l);
      worst = Math.max(worst, l.worstNanos());
    }
    List<Integer> absent = a.stall == null ? List.of() : a.stall.absent().stream().map(Absent::worldRank).toList();
    for (int m = 0; m < g.size(); m++) {
      int rank = g.worldRanks().get(m);
      int y = HEADER + m * ROW;
      RankLateness l = lateness.get(rank);
      boolean late = l != null && a.late.contains(l);
      boolean flagged = late || absent.contains(rank);
      // Presentation attributes, not only CSS: the SVG stays right when copied out of the page.
      h.append("<g class=\"row\" data-rank=\"").append(rank).append("\">\n<text class=\"label\" x=\"4\" y=\"")
          .append(y + 15).append('"').append(flagged ? " fill=\"" + FAILED + "\" font-weight=\"bold\"" : "")
          .append(">rank ").append(rank);
      if (late) {
        h.append(" LATE ").append(esc(Words.duration(l.medianNanos())));
      } else if (absent.contains(rank)) {
        h.append(" never entered #").append(a.stall.seq());
      } else if (!g.hasRecord(m)) {
        h.append(" (no record of this group)");
      }
      h.append("</text>\n");
      Map<Long, Long> lateAt = new HashMap<>();
      if (l != null) {
        for (long[] v : l.perCollective()) {
          lateAt.put(v[0], v[1]);
        }
      }
      for (long seq = from; seq <= g.last(); seq++) {
        int x = LABEL_WIDTH + (int) (seq - from) * CELL;
        cell(h, g, m, rank, seq, x, y, lateAt.get(seq), worst);
      }
      h.append("</g>\n");
    }
    h.append("</svg>\n");
  }

  private static void cell(StringBuilder h, AlignedGroup g, int m, int rank, long seq, int x, int y, Long late,
      long worst) {
    Slot s = g.slot(m, seq);
    String tip = "#" + seq + ", rank " + rank + ": ";
    switch (s.status()) {
      case NO_RECORD -> {
        return;
      }
      case NOT_ISSUED -> h.append(rect(x + 1, y + 2, CELL - 2, ROW - 4, "none", FAILED, true, tip + "never entered"));
      case DROPPED -> h.append(rect(x + 1, y + 2, CELL - 2, ROW - 4, DROPPED, null, false,
          tip + "issued, but no longer in its ring"));
      case KEPT -> {
        Operation op = s.op();
        StringBuilder t = new StringBuilder(tip).append(Words.what(op)).append(" (").append(op.state().jsonName());
        Long d = TextReport.duration(g.file(m), op);
        if (d != null) {
          t.append(op.state() == State.FAILED ? " after " : " for ").append(Words.duration(d));
        }
        if (op.waitedNanos() != null) {
          t.append("; waited ").append(Words.duration(op.waitedNanos()));
        }
        if (late != null) {
          t.append("; the others waited ").append(Words.duration(late)).append(" for it");
        }
        t.append(')');
        // The agreement check's calls are drawn half height: they are the runtime's, not the plan's.
        int top = op.kind() == Kind.CHECK ? y + ROW / 2 : y + 2;
        h.append(rect(x + 1, top, CELL - 2, y + ROW - 2 - top, fill(op.state()), null, false, t.toString()));
        int bar = late == null ? 0 : (int) Math.round((ROW - 4) * (double) late / worst);
        if (bar > 0) {
          h.append("<rect class=\"late\" x=\"").append(x + 4).append("\" y=\"").append(y + ROW - 2 - bar)
              .append("\" width=\"").append(CELL - 8).append("\" height=\"").append(bar).append("\" fill=\"")
              .append(LATE_BAR).append("\"/>\n");
        }
      }
    }
  }

  private static String fill(State state) {
    return switch (state) {
      case COMPLETED -> COMPLETED;
      case STARTED -> STARTED;
      case ENQUEUED -> ENQUEUED;
      case FAILED -> FAILED;
    };
  }

  private static String rect(int x, int y, int w, int ht, String fill, String stroke, boolean dashed, String tip) {
    StringBuilder r = new StringBuilder("<rect x=\"").append(x).append("\" y=\"").append(y).append("\" width=\"")
        .append(w).append("\" height=\"").append(ht).append("\" fill=\"").append(fill).append('"');
    if (stroke != null) {
      r.append(" stroke=\"").append(stroke).append('"').append(dashed ? " stroke-dasharray=\"3,2\"" : "");
    }
    return r.append("><title>").append(esc(tip)).append("</title></rect>\n").toString();
  }

  private static void legend(StringBuilder h) {
    String[][] items = {
        {COMPLETED, "completed"}, {STARTED, "started (waiting)"}, {ENQUEUED, "enqueued"}, {FAILED, "failed"},
        {DROPPED, "left the ring"}, {"none", "never entered"}, {"check", "agreement check (half height)"},
        {LATE_BAR, "the others waited for this rank"}};
    int width = 0;
    StringBuilder body = new StringBuilder();
    for (String[] item : items) {
      String fill = item[0].equals("check") ? COMPLETED : item[0];
      int y = item[0].equals("check") ? 10 : 3;
      body.append(rect(width, y, 12, 17 - y, fill, item[0].equals("none") ? FAILED : null, item[0].equals("none"),
          item[1]));
      body.append("<text x=\"").append(width + 16).append("\" y=\"15\">").append(esc(item[1])).append("</text>\n");
      width += 24 + item[1].length() * 7;
    }
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"legend\" font-family=\"monospace\" font-size=\"11\"")
        .append(" width=\"").append(width).append("\" height=\"22\">\n").append(body).append("</svg>\n");
    h.append("<p class=\"note\">Columns are each group's operations by sequence number (the k-th collective on every"
        + " rank), not time: each rank's times are on its own clock. Hover a cell for the operation.</p>\n");
  }

  /** Text for HTML and SVG: the five characters XML reserves, and control characters, escaped. */
  static String esc(String s) {
    StringBuilder b = new StringBuilder(s.length());
    for (char c : s.toCharArray()) {
      switch (c) {
        case '&' -> b.append("&amp;");
        case '<' -> b.append("&lt;");
        case '>' -> b.append("&gt;");
        case '"' -> b.append("&quot;");
        case '\'' -> b.append("&#39;");
        default -> b.append(c < 0x20 && c != '\n' && c != '\t' ? ' ' : c);
      }
    }
    return b.toString();
  }

  private static final String CSS = String.join("\n",
      "body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }",
      "h1 { font-size: 1.4em; } h2 { font-size: 1.15em; margin-top: 1.4em; }",
      ".verdict { padding: 0.2em 1em; border-left: 6px solid; }",
      ".verdict.ok { border-color: #4a9a4a; background: #eef7ee; }",
      ".verdict.bad { border-color: " + FAILED + "; background: #fbeeee; }",
      "pre { background: #f6f6f6; padding: 0.6em; overflow-x: auto; font-size: 12px; }",
      "svg text { font: 11px monospace; }",
      "svg text.seq { text-anchor: middle; fill: #666; }",
      "svg text.mark { text-anchor: middle; font-weight: bold; }",
      ".timeline { display: block; margin: 0.5em 0; }",
      ".note { color: #666; font-size: 12px; }",
      "");
}
