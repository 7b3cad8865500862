package dev.commplan.bench;

import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.List;
import java.util.Locale;

/** {@code mesh-cost}'s text and CSV rows: a header, one line per mesh as soon as it is done. */
final class MeshCostOutput {
  private static final String UNIT = "Mesh.builder(world)...build() and its close()";

  private final MeshCost.Config config;
  private final PrintStream out;

  MeshCostOutput(MeshCost.Config config, PrintStream out) {
    this.config = config;
    this.out = out;
  }

  void header() {
    out.printf(Locale.ROOT, "# mesh-cost  backend %s: building a mesh (the agreement check, one all-gather over the"
        + " world; then one split per axis) and closing it (the splits)%n", config.backend());
    out.printf(Locale.ROOT, "# total: the median of %d timed units (one %s, averaged over ranks), at most %s s of them"
            + " per mesh; build, close: each rank's median over those units, averaged over ranks; first: the first"
            + " build on that world (cold)%n", config.reps(), UNIT, Names.seconds(config.measureMaxS()));
    out.println("# " + config.warmup().describe(UNIT, "build"));
    out.printf("# %5s  %-20s  %6s  %12s  %11s  %11s  %11s  %11s  %5s  %s%n", "ranks", "mesh", "splits", "first (us)",
        "build (us)", "close (us)", "total (us)", "min (us)", "units", "warm-up (builds, ms, end)");
    out.flush();
  }

  /** The mesh's line (or its refusal, as a comment), and its CSV row. */
  void row(MeshCost.Row r, Csv csv) {
    if (r.refused() != null) {
      out.printf(Locale.ROOT, "# %5d  %-20s  refused: %s%n", r.mesh().ranks(), r.mesh().describe(), r.refused());
      out.flush();
      return;
    }
    String warm = r.warmup().summary("builds");
    out.printf(Locale.ROOT, "  %5d  %-20s  %6d  %12.1f  %11.1f  %11.1f  %11.1f  %11.1f  %5d  %s%s%n", r.mesh().ranks(),
        r.mesh().describe(), r.mesh().names().size(), r.firstBuildUs(), r.buildUs(), r.closeUs(), r.totalUs(),
        r.minUs(), r.units(), warm, r.units() < config.reps() ? " (timed " + r.units() + ": the mesh's time was up)" : "");
    out.flush();
    if (csv != null) {
      SteadyState.WarmUp w = r.warmup();
      csv.row(List.of(r.backend(), r.mesh().ranks(), r.mesh().shape(), String.join(" ", r.mesh().names()),
          r.firstBuildUs(), r.buildUs(), r.closeUs(), r.totalUs(), r.minUs(), r.units(), w.calls(), w.millis(),
          w.ending().label()));
    }
  }

  /** The time limit stopped the command before {@code mesh}. */
  void stopped(MeshSpec mesh, int done) {
    out.printf(Locale.ROOT, "# stopped: --time-limit %s s reached before %s; %d of %d meshes were run%n",
        Names.seconds(config.timeLimitS()), mesh.describe(), done, config.meshes().size());
    out.flush();
  }
}
