package dev.commplan.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;

/**
 * Draws one training step as an SVG timeline, in plain Java: a row per rank with two lanes, compute and
 * communication, and a box per span of work against time ({@link StepTrace.Span}); each box has a tooltip
 * with its times. For the docs: what ran when, and how much of the communication the compute hid.
 */
final class TimelineSvg {
  private static final int WIDTH = 960;
  private static final int LEFT = 120;
  private static final int RIGHT = 20;
  private static final int LANE = 18;
  private static final int LANE_GAP = 3;
  private static final int RANK_GAP = 12;
  private static final int LINE = 16;
  private static final double CHAR_WIDTH = 6.5;

  private TimelineSvg() {}

  /** Writes the timeline to {@code path} (creating its folder) and returns it. */
  static Path write(Path path, String title, List<String> notes, List<StepTrace.Span> spans) {
    try {
      Path parent = path.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(path, svg(title, notes, spans), StandardCharsets.UTF_8);
      return path;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + path, e);
    }
  }

  /**
   * The SVG text.
   *
   * @param title the first line
   * @param notes lines under it (the model, the backend, how the times were taken)
   * @param spans what to draw; times in milliseconds from the step's start
   */
  static String svg(String title, List<String> notes, List<StepTrace.Span> spans) {
    Set<Integer> ranks = new TreeSet<>();
    Set<StepTrace.Kind> kinds = EnumSet.noneOf(StepTrace.Kind.class);
    double end = 0;
    for (StepTrace.Span s : spans) {
      ranks.add(s.rank());
      kinds.add(s.kind());
      end = Math.max(end, s.endMillis());
    }
    double tick = tick(end);
    double axisEnd = Math.max(tick, Math.ceil(end / tick) * tick);
    double plot = WIDTH - LEFT - RIGHT;
    double scale = plot / axisEnd;
    int top = 30 + LINE * notes.size() + 10;
    int rankHeight = 2 * LANE + LANE_GAP + RANK_GAP;
    int axisY = top + ranks.size() * rankHeight;
    int height = axisY + 40 + LINE * kinds.size();

    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
        + " viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">%n", WIDTH, height, WIDTH, height));
    b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, height));
    b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"20\" font-size=\"14\">%s</text>%n", LEFT, escape(title)));
    for (int i = 0; i < notes.size(); i++) {
      b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" fill=\"#555555\">%s</text>%n", LEFT,
          36 + LINE * i, escape(notes.get(i))));
    }
    // the time axis and its grid
    for (int i = 0; i * tick <= axisEnd + tick / 2; i++) {
      double t = i * tick;
      double x = LEFT + t * scale;
      b.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#e0e0e0\"/>"
          + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%s</text>%n", x, top - 4, x, axisY, x, axisY + 14,
          number(t)));
    }
    b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">time (ms)</text>%n",
        LEFT + plot / 2, axisY + 30));
    // the lanes and their boxes
    int row = 0;
    for (int rank : ranks) {
      int y = top + row++ * rankHeight;
      b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">rank %d compute</text>%n",
          LEFT - 6, y + LANE - 5, rank));
      b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">communication</text>%n",
          LEFT - 6, y + 2 * LANE + LANE_GAP - 5));
      for (StepTrace.Span s : spans) {
        if (s.rank() != rank) {
          continue;
        }
        int laneY = s.kind().isCompute() ? y : y + LANE + LANE_GAP;
        double x = LEFT + s.startMillis() * scale;
        double w = Math.max(0.5, (s.endMillis() - s.startMillis()) * scale);
        b.append(String.format(Locale.ROOT, "<rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"%d\" fill=\"%s\""
            + " stroke=\"white\" stroke-width=\"0.5\"><title>rank %d: %s%s, %.3f to %.3f ms (%.3f ms)</title></rect>%n",
            x, laneY, w, LANE, color(s.kind()), rank, escape(s.kind().legend()),
            s.label().isEmpty() ? "" : " " + escape(s.label()), s.startMillis(), s.endMillis(),
            s.endMillis() - s.startMillis()));
        if (!s.label().isEmpty() && w >= s.label().length() * CHAR_WIDTH + 4) {
          b.append(String.format(Locale.ROOT, "<text x=\"%.2f\" y=\"%d\" text-anchor=\"middle\" fill=\"white\">%s</text>%n",
              x + w / 2, laneY + LANE - 5, escape(s.label())));
        }
      }
    }
    // the legend
    int legendY = axisY + 44;
    for (StepTrace.Kind kind : kinds) {
      b.append(String.format(Locale.ROOT, "<rect x=\"%d\" y=\"%d\" width=\"12\" height=\"12\" fill=\"%s\"/>"
          + "<text x=\"%d\" y=\"%d\">%s</text>%n", LEFT, legendY - 10, color(kind), LEFT + 18, legendY,
          escape(kind.legend())));
      legendY += LINE;
    }
    b.append("</svg>\n");
    return b.toString();
  }

  /** The grid's step: 1, 2 or 5 times a power of ten, for about 5 to 10 lines over {@code end}. */
  static double tick(double end) {
    if (!(end > 0)) {
      return 1;
    }
    double power = Math.pow(10, Math.floor(Math.log10(end / 5)));
    for (double m : new double[] {1, 2, 5}) {
      if (end / (m * power) <= 10) {
        return m * power;
      }
    }
    return 10 * power;
  }

  private static String number(double t) {
    return new java.math.BigDecimal(t).round(new java.math.MathContext(6)).stripTrailingZeros().toPlainString();
  }

  private static String color(StepTrace.Kind kind) {
    return switch (kind) {
      case FORWARD -> "#7f7f7f";
      case GRADIENTS -> "#1f77b4";
      case PROPAGATE -> "#9ecae1";
      case UPDATE -> "#2ca02c";
      case COMMUNICATION -> "#ff7f0e";
    };
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
  }
}
