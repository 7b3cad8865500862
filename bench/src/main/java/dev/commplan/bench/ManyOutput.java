package dev.commplan.bench;

import dev.commplan.bench.ManyBuffers.Case;
import dev.commplan.bench.ManyBuffers.Config;
import dev.commplan.bench.ManyBuffers.Result;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** The many-buffers text and CSV rows: a header, one line per way as soon as it is done, the ratios last. */
final class ManyOutput {
  private final Config config;

  ManyOutput(Config config) {
    this.config = config;
  }

  void header(PrintStream out) {
    Case c = config.theCase();
    DataType t = config.type();
    out.printf(Locale.ROOT, "# many buffers: %s, %d buffers, %d elements (%s), %s all-reduce %s, %s%n",
        c.isGpt2() ? "GPT-2 small gradients" : c.counts().length + " x " + c.counts()[0] + " " + Names.of(t),
        c.counts().length, c.total(), Names.bytes(c.total() * t.byteSize()), Names.of(t), Names.of(config.op()),
        config.inPlace() ? "in place" : "out of place");
    out.printf(Locale.ROOT, "# backend %s  ranks %d  time per step: median and min of %d steps (at most %s s of them"
            + " per way), each the issue and one synchronize, averaged over ranks%n",
        config.backend(), config.ranks(), config.iters(), Names.seconds(config.measureMaxS()));
    out.println("# " + config.warmup().describe("step: the issue and one synchronize", "step"));
    out.printf("# %8s  %6s  %12s  %12s  %6s  %s%n", "mode", "calls", "median (us)", "min (us)", "#wrong",
        "warm-up (steps, ms, end)");
    out.flush();
  }

  /** The way's line, after the {@code # plan:} or {@code # graph:} line that says what it ran. */
  void row(PrintStream out, Result r, String planDescription, String graphDescription) {
    if (r.mode().equals("plan")) {
      out.printf("# plan: %s%n", planDescription);
    } else if (r.mode().equals("graph")) {
      out.printf("# graph: %s%n", graphDescription);
    }
    out.printf(Locale.ROOT, "  %8s  %6d  %12.1f  %12.1f  %6d  %s%s%n", r.mode(), r.calls(), r.medianUs(), r.minUs(),
        r.wrong(), r.warmup().summary("steps"),
        r.steps() < config.iters() ? " (timed " + r.steps() + " steps: the way's time was up)" : "");
    out.flush();
  }

  /** The ratios between the ways, where all of them ran. */
  static void ratios(PrintStream out, List<Result> results) {
    if (results.size() < ManyBuffers.MODES.size()) {
      return; // stopped early: some ways are missing
    }
    double plan = ManyBuffers.find(results, "plan").medianUs();
    double flat = ManyBuffers.find(results, "flat").medianUs();
    double graph = ManyBuffers.find(results, "graph").medianUs();
    out.printf(Locale.ROOT, "# separate/plan %.2fx   group/plan %.2fx   plan/flat %.2fx   graph/flat %.2fx"
            + "   graph/plan %.2fx%n",
        ManyBuffers.find(results, "separate").medianUs() / plan, ManyBuffers.find(results, "group").medianUs() / plan,
        plan / flat, graph / flat, graph / plan);
    out.flush();
  }

  /** The way's CSV row, under {@link ManyBuffers#CSV_HEADER}. */
  List<Object> csvRow(Result r) {
    Case c = config.theCase();
    SteadyState.WarmUp w = r.warmup();
    return List.of(config.backend(), config.ranks(), c.name(), c.counts().length, c.total(), Names.of(config.type()),
        Names.of(config.op()), config.inPlace() ? "in" : "out", r.mode(), r.calls(), r.medianUs(), r.minUs(),
        r.wrong(), w.calls(), w.millis(), w.ending().label(), r.steps());
  }
}
