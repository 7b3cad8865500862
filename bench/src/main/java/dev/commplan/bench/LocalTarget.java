package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The local backend's target: AllReduce busbw at one size (64 MiB) on 2 and 4 ranks, set against the
 * memory copy bandwidth of this machine measured in the same run ({@code MemorySegment.copy} of the same
 * size between two native segments, median), which bounds what ranks-as-threads can move. Both sides are
 * timed the same way: batches of {@code iters} after the {@link SteadyState} warm-up, median of
 * {@code batches}.
 */
final class LocalTarget {
  record Line(int ranks, Sweep.Row row) {}

  private LocalTarget() {}

  /** Runs the comparison; {@code progress} (null for none) gets a line per finished part once past 2 s. */
  static void run(long bytes, List<Integer> ranksList, DataType type, int iters, int batches, SteadyState.Rule warmup,
      PrintStream out, PrintStream progress) {
    long started = System.nanoTime();
    Copy copy = memcpy(bytes, iters, batches, warmup);
    double copySeconds = copy.seconds();
    double copyGBs = bytes / 1e9 / copySeconds;
    progress(progress, started, "memcpy measured (1/" + (1 + ranksList.size()) + ")");
    List<Line> lines = new ArrayList<>();
    for (int ranks : ranksList) {
      Sweep.Config config = new Sweep.Config("local", ranks, List.of(Coll.ALL_REDUCE), type, ReduceOp.SUM, 0, bytes,
          bytes, 2, iters, batches, warmup, 0, 600, 1, Long.MAX_VALUE, 0, true);
      List<Sweep.Row> rows = Sweep.run(config, out, progress, null);
      lines.add(new Line(ranks, rows.get(0)));
      progress(progress, started, ranks + (ranks == 1 ? " rank" : " ranks") + " done (" + (1 + lines.size()) + "/" + (1 + ranksList.size()) + ")");
    }
    out.printf(Locale.ROOT, "# local backend target: AllReduce of %s %s (sum), busbw against a memory copy of the same size%n",
        Names.bytes(bytes), Names.of(type));
    out.printf(Locale.ROOT, "# memcpy %s (MemorySegment.copy, median of %d batches of %d; warm-up %s): %.1f us = %.2f GB/s"
            + " copied (%.2f GB/s read+write)%n", Names.bytes(bytes), batches, iters, copy.warmup().summary("copies"),
        copySeconds * 1e6, copyGBs, 2 * copyGBs);
    out.printf("# %5s  %10s  %10s  %12s  %11s  %6s%n", "ranks", "oop busbw", "ip busbw", "oop/memcpy", "ip/memcpy", "#wrong");
    for (Line l : lines) {
      Sweep.Result o = l.row().outOfPlace();
      Sweep.Result i = l.row().inPlace();
      out.printf(Locale.ROOT, "  %5d  %10.2f  %10.2f  %12.2f  %11.2f  %6d%n", l.ranks(), o.busbw(), i.busbw(),
          o.busbw() / copyGBs, i.busbw() / copyGBs, o.wrong() + i.wrong());
    }
    out.flush();
  }

  private static void progress(PrintStream progress, long started, String what) {
    double elapsed = (System.nanoTime() - started) / 1e9;
    if (progress != null && elapsed > 2) {
      progress.printf(Locale.ROOT, "# progress: %s, %.1f s%n", what, elapsed);
      progress.flush();
    }
  }

  /** The copy's median time and its warm-up. */
  record Copy(double seconds, SteadyState.WarmUp warmup) {}

  /** Median seconds of one {@code MemorySegment.copy} of {@code bytes} between two native segments. */
  static Copy memcpy(long bytes, int iters, int batches, SteadyState.Rule warmup) {
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment src = arena.allocate(bytes, 64);
      MemorySegment dst = arena.allocate(bytes, 64);
      src.fill((byte) 1); // touch every page before timing
      dst.fill((byte) 0);
      SteadyState.Unit batch = () -> {
        for (int i = 0; i < iters; i++) {
          MemorySegment.copy(src, 0, dst, 0, bytes);
        }
      };
      SteadyState steady = new SteadyState(SteadyState.Consensus.ALONE);
      SteadyState.WarmUp warm = steady.warmUp(warmup, iters, batch);
      SteadyState.Samples timed = steady.measure(iters, batches, Long.MAX_VALUE, batch);
      return new Copy(timed.median() / 1e9, warm);
    }
  }
}
