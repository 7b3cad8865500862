package dev.commplan.bench;

import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/**
 * The sweep's text, in nccl-tests' layout: a header per collective, one line per size with nccl-tests'
 * thirteen columns (so that scripts written for nccl-tests' output read ours), and, after each, a comment
 * line (starting with {@code #}, which such scripts skip) with the warm-up of both placements.
 */
final class SweepOutput {
  private final Sweep.Config config;
  private final PrintStream out;

  SweepOutput(Sweep.Config config, PrintStream out) {
    this.config = config;
    this.out = out;
  }

  /** What one timed unit of the sweep is, in words. */
  static String unit(int iters) {
    return "batch of " + iters + " calls back to back and one synchronize";
  }

  void header(Coll coll, int n) {
    String check = config.check() == 0 ? "0"
        : config.checkMaxBytes() < config.maxBytes()
            ? config.check() + " (sizes up to " + Names.bytes(config.checkMaxBytes()) + ")" : Integer.toString(config.check());
    out.printf(Locale.ROOT, "# %s  backend %s  ranks %d  type %s  %siters %d  batches %d  check %s%n",
        coll.ncclName, config.backend(), n, Names.of(config.type()),
        (coll.reduces() ? "op " + Names.of(config.op()) + "  " : "") + (coll.rooted() ? "root " + config.root() + "  " : ""),
        config.iters(), config.batches(), check);
    out.printf(Locale.ROOT, "# time: per call, the median of %d timed units (one %s; wall time / %d, averaged over"
        + " ranks); at most %s s of them per row%n", config.batches(), unit(config.iters()), config.iters(),
        Names.seconds(config.measureMaxS()));
    out.println("# " + config.warmup().describe(unit(config.iters()), "call")
        + (config.warmup().isFixed() ? "" : " (" + Names.seconds(config.nextMinS()) + " s after the first size, whose"
            + " calls take the same path)"));
    out.printf("#%51s%s%s%n", "", center("out-of-place", 33), center("in-place", 33).stripTrailing());
    out.printf("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s%n",
        "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
    out.println(String.format("# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s",
        "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)").stripTrailing());
    out.flush();
  }

  /** The row, then its warm-up line. */
  void row(Sweep.Row row) {
    out.printf(Locale.ROOT, "%12d  %12d  %8s  %6s  %6d%s%s%n", row.sizeBytes(), row.count(), Names.of(row.type()),
        row.op() == null ? "none" : Names.of(row.op()), row.root(), cells(row.outOfPlace()), cells(row.inPlace()));
    out.println("#   warm-up  out-of-place: " + warmUp(row.outOfPlace()) + "   in-place: " + warmUp(row.inPlace()));
    out.flush();
  }

  private String warmUp(Sweep.Result r) {
    if (r.warmup() == null) {
      return "N/A";
    }
    String s = r.warmup().summary("calls");
    return r.batches() < config.batches() ? s + " (timed " + r.batches() + " batches: the row's time was up)" : s;
  }

  void average(double busbw) {
    out.printf(Locale.ROOT, "# Avg bus bandwidth    : %g%n#%n", busbw);
    out.flush();
  }

  /** The time limit stopped the sweep before {@code size} of {@code coll}. */
  void stopped(Coll coll, long size, int done, int total) {
    out.printf(Locale.ROOT, "# stopped: --time-limit %s s reached before %s %s; %d of %d sizes were run%n",
        Names.seconds(config.timeLimitS()), coll.label, Names.bytes(size), done, total);
    out.flush();
  }

  private static String center(String s, int width) {
    int left = (width - s.length()) / 2;
    return " ".repeat(left) + s + " ".repeat(width - left - s.length());
  }

  /** nccl-tests' cells: time with 0, 1 or 2 decimals by magnitude, bandwidths with 2; N/A where not run. */
  private static String cells(Sweep.Result r) {
    if (Double.isNaN(r.timeUs())) {
      return String.format(Locale.ROOT, "  %7s  %6s  %6s  %6s", "N/A", "N/A", "N/A", "N/A");
    }
    return String.format(Locale.ROOT, "  %7s  %6.2f  %6.2f  %6s", time(r.timeUs()), r.algbw(), r.busbw(),
        r.wrong() < 0 ? "N/A" : Long.toString(r.wrong()));
  }

  static String time(double us) {
    if (us >= 10000.0) {
      return String.format(Locale.ROOT, "%7.0f", us);
    }
    if (us >= 100.0) {
      return String.format(Locale.ROOT, "%7.1f", us);
    }
    return String.format(Locale.ROOT, "%7.2f", us);
  }

  static List<Object> csvRow(Sweep.Row row) {
    Sweep.Result o = row.outOfPlace();
    Sweep.Result i = row.inPlace();
    return List.of(row.coll().label, row.backend(), row.ranks(), row.sizeBytes(), row.count(), Names.of(row.type()),
        row.op() == null ? "none" : Names.of(row.op()), row.root(),
        o.timeUs(), o.algbw(), o.busbw(), o.wrong(), i.timeUs(), i.algbw(), i.busbw(), i.wrong(),
        calls(o.warmup()), millis(o.warmup()), ending(o.warmup()), calls(i.warmup()), millis(i.warmup()),
        ending(i.warmup()), o.batches(), i.batches());
  }

  private static Object calls(SteadyState.WarmUp w) {
    return w == null ? "" : w.calls();
  }

  private static Object millis(SteadyState.WarmUp w) {
    return w == null ? "" : w.millis();
  }

  private static Object ending(SteadyState.WarmUp w) {
    return w == null ? "" : w.ending().label();
  }
}
