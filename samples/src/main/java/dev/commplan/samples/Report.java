package dev.commplan.samples;

import java.io.PrintStream;
import java.util.List;
import java.util.Locale;
import java.util.function.IntFunction;
import java.util.function.IntToDoubleFunction;

/**
 * The end of the {@code tp} and {@code 3d} reports: the loss curve at every step next to the one-host
 * model's, one line per rank (its loss curve and its parameters against the one-host model's, {@code ok}
 * or {@code WRONG}), and the check line.
 */
final class Report {
  private Report() {}

  /**
   * Prints the table, the rank lines and the check line; returns whether every rank is within {@link
   * ParallelMlp#TOLERANCE}.
   *
   * @param losses each rank's loss curve, or null for a rank that has none (a pipeline stage but the last)
   * @param reference the one-host model's loss curve
   * @param paramDiff the largest difference between a rank's parameters and the one-host model's
   * @param label what a rank holds, the start of its line
   * @param curve the name of the curve's column, after "loss "
   */
  static boolean check(PrintStream out, List<float[]> losses, float[] reference, IntToDoubleFunction paramDiff,
      IntFunction<String> label, String curve) {
    int ranks = losses.size();
    float[] shown = losses.stream().filter(l -> l != null).findFirst().orElseThrow();
    String name = "loss (" + curve + ")";
    int width = Math.max(name.length(), 9);
    out.printf(Locale.ROOT, "step  %" + width + "s  %15s  |diff|%n", name, "loss (one host)");
    for (int step = 0; step < reference.length; step++) {
      out.printf(Locale.ROOT, "%4d  %" + width + ".6f  %15.6f  %.1e%n", step, shown[step], reference[step],
          Math.abs(shown[step] - reference[step]));
    }
    double worstLoss = 0;
    int withLoss = 0;
    for (float[] l : losses) {
      if (l != null) {
        worstLoss = Math.max(worstLoss, LossTable.maxDiff(l, reference));
        withLoss++;
      }
    }
    out.printf(Locale.ROOT, "max |diff| over %d steps, on every rank that has the loss (%d of %d): %.1e%n",
        reference.length, withLoss, ranks, worstLoss);
    int wrong = 0;
    double worst = 0;
    for (int r = 0; r < ranks; r++) {
      double params = paramDiff.applyAsDouble(r);
      double loss = losses.get(r) == null ? 0 : LossTable.maxDiff(losses.get(r), reference);
      boolean ok = params <= ParallelMlp.TOLERANCE && loss <= ParallelMlp.TOLERANCE;
      wrong += ok ? 0 : 1;
      worst = Math.max(worst, Math.max(params, loss));
      out.printf(Locale.ROOT, "%s, max |diff| vs one host: %sparameters %.1e  %s%n", label.apply(r),
          losses.get(r) == null ? "" : String.format(Locale.ROOT, "loss %.1e, ", loss), params, ok ? "ok" : "WRONG");
    }
    if (wrong == 0) {
      out.printf(Locale.ROOT, "check: PASS, %s parameters and %s match the one-host model (max |diff| %.1e,"
          + " tolerance %.0e)%n", ranks == 1 ? "the rank's" : "all " + ranks + " ranks'",
          withLoss == 1 ? "its loss curve" : "the " + withLoss + " loss curves", worst, ParallelMlp.TOLERANCE);
    } else {
      out.printf(Locale.ROOT, "check: FAILED, %d of %d ranks differ from the one-host model by more than %.0e"
          + " (max |diff| %.1e)%n", wrong, ranks, ParallelMlp.TOLERANCE, worst);
    }
    return wrong == 0;
  }
}
