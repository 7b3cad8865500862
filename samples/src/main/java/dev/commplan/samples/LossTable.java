package dev.commplan.samples;

import java.io.PrintStream;
import java.util.Locale;

/** The table the training samples print: every tenth step and the last, then the largest difference. */
final class LossTable {
  private LossTable() {}

  static void print(PrintStream out, int steps, String nameA, float[] a, String nameB, float[] b) {
    int wa = Math.max(nameA.length(), 9);
    int wb = Math.max(nameB.length(), 9);
    out.printf(Locale.ROOT, "%4s  %" + wa + "s  %" + wb + "s  %s%n", "step", nameA, nameB, "|diff|");
    for (int step = 0; step < steps; step++) {
      if (step % 10 == 0 || step == steps - 1) {
        out.printf(Locale.ROOT, "%4d  %" + wa + ".6f  %" + wb + ".6f  %.1e%n", step, a[step], b[step], Math.abs(a[step] - b[step]));
      }
    }
    out.printf(Locale.ROOT, "max |diff| over %d steps: %.1e%n", steps, maxDiff(a, b));
  }

  /** "1 rank", "4 ranks". */
  static String ranks(int n) {
    return n + (n == 1 ? " rank" : " ranks");
  }

  static double maxDiff(float[] a, float[] b) {
    double max = 0;
    for (int i = 0; i < a.length; i++) {
      max = Math.max(max, Math.abs(a[i] - b[i]));
    }
    return max;
  }
}
