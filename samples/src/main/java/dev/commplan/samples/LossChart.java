package dev.commplan.samples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/** Draws loss curves as an SVG line chart, in plain Java. */
final class LossChart {
  private static final int WIDTH = 640;
  private static final int HEIGHT = 400;
  private static final int LEFT = 60;
  private static final int RIGHT = 20;
  private static final int TOP = 40;
  private static final int BOTTOM = 50;
  private static final String[] COLORS = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd"};

  private LossChart() {}

  /** One curve: a value per step; dashed draws it over a solid one so that both stay visible. */
  record Series(String name, float[] values, boolean dashed) {}

  /** Writes the chart to {@code path} (creating parent folders) and returns it. */
  static Path write(Path path, String title, List<Series> series) {
    try {
      Path parent = path.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(path, svg(title, series), StandardCharsets.UTF_8);
      return path;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + path, e);
    }
  }

  static String svg(String title, List<Series> series) {
    int steps = 0;
    double max = 0;
    for (Series s : series) {
      steps = Math.max(steps, s.values().length);
      for (float v : s.values()) {
        max = Math.max(max, v);
      }
    }
    double yMax = niceCeiling(max);
    double plotW = WIDTH - LEFT - RIGHT;
    double plotH = HEIGHT - TOP - BOTTOM;
    double xScale = plotW / Math.max(1, steps - 1);
    StringBuilder b = new StringBuilder();
    b.append(String.format(Locale.ROOT,
        "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\""
            + " font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT, WIDTH, HEIGHT));
    b.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, HEIGHT));
    b.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"24\" text-anchor=\"middle\" font-size=\"14\">%s</text>%n",
        WIDTH / 2, escape(title)));
    // axes, grid and ticks
    for (int i = 0; i <= 5; i++) {
      double value = yMax * i / 5;
      double y = TOP + plotH - plotH * i / 5;
      b.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" stroke=\"#dddddd\"/>"
              + "<text x=\"%d\" y=\"%.1f\" text-anchor=\"end\">%.2f</text>%n",
          LEFT, y, WIDTH - RIGHT, y, LEFT - 6, y + 4, value));
    }
    int xTick = Math.max(1, (int) niceCeiling(steps / 10.0));
    for (int step = 0; step < steps; step += xTick) {
      double x = LEFT + step * xScale;
      b.append(String.format(Locale.ROOT,
          "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"#333333\"/>"
              + "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">%d</text>%n",
          x, TOP + (int) plotH, x, TOP + (int) plotH + 5, x, TOP + (int) plotH + 18, step));
    }
    b.append(String.format(Locale.ROOT,
        "<polyline points=\"%d,%d %d,%d %d,%d\" fill=\"none\" stroke=\"#333333\"/>%n",
        LEFT, TOP, LEFT, TOP + (int) plotH, WIDTH - RIGHT, TOP + (int) plotH));
    b.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\">step</text>%n",
        LEFT + plotW / 2, HEIGHT - 12));
    b.append(String.format(Locale.ROOT,
        "<text x=\"16\" y=\"%.1f\" text-anchor=\"middle\" transform=\"rotate(-90 16 %.1f)\">loss (MSE)</text>%n",
        TOP + plotH / 2, TOP + plotH / 2));
    // curves and legend
    for (int k = 0; k < series.size(); k++) {
      Series s = series.get(k);
      String color = COLORS[k % COLORS.length];
      String dash = s.dashed() ? " stroke-dasharray=\"6 4\"" : "";
      b.append("<polyline fill=\"none\" stroke=\"").append(color).append("\" stroke-width=\"")
          .append(s.dashed() ? "2" : "3").append('"').append(dash).append(" points=\"");
      for (int step = 0; step < s.values().length; step++) {
        double x = LEFT + step * xScale;
        double y = TOP + plotH - plotH * Math.min(s.values()[step], yMax) / yMax;
        b.append(String.format(Locale.ROOT, "%.1f,%.1f ", x, y));
      }
      b.append("\"/>\n");
      int ly = TOP + 14 + 18 * k;
      b.append(String.format(Locale.ROOT,
          "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" stroke=\"%s\" stroke-width=\"2\"%s/>"
              + "<text x=\"%d\" y=\"%d\">%s</text>%n",
          WIDTH - RIGHT - 130, ly, WIDTH - RIGHT - 100, ly, color, dash, WIDTH - RIGHT - 94, ly + 4,
          escape(s.name())));
    }
    b.append("</svg>\n");
    return b.toString();
  }

  /** The smallest of 1, 1.5, 2, 2.5, 3, 4, 5, 6 or 8 times a power of ten that is at least {@code value}. */
  private static double niceCeiling(double value) {
    if (!(value > 0)) {
      return 1;
    }
    double power = Math.pow(10, Math.floor(Math.log10(value)));
    for (double m : new double[] {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10}) {
      if (m * power >= value) {
        return m * power;
      }
    }
    return 10 * power;
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
