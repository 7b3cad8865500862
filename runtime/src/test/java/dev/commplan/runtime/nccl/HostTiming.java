package dev.commplan.runtime.nccl;

import dev.commplan.timing.SteadyState;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;

/**
 * The one measurement of the host-cost probes ({@link NcclHostCostProbe}, {@link NcclGraphProbe}), so that
 * their rows, set side by side in docs/gpu.md and docs/performance.md, are taken the same way: runs (each
 * the calls and then the wait) until the time per run is steady ({@link SteadyState}'s rule, the same as
 * bench's; reported per row), then {@code reps} runs: wall time from the first call to the end of the wait
 * (median, min, p90), the calls alone ({@code enqueue}, median), and Java heap bytes per run
 * ({@code ThreadMXBean.getThreadAllocatedBytes} over 200 runs without the wait, twice: the row gives the
 * second pass, and a comment line after it the first where that allocated more. 200 runs of 200 direct
 * calls without a wait are 40,000 calls, and the agreement check's pool grows to what that many unwaited
 * calls need, once: docs/reliability/agreement-cost.md, "Its memory").
 */
final class HostTiming {
  /** Runs per heap pass, without a wait between them. */
  private static final int HEAP_RUNS = 200;

  private HostTiming() {}

  /** What one row runs: the calls, or the wait after them. */
  interface Body {
    void run();
  }

  /**
   * One measured row, in µs and bytes, with the warm-up before it.
   *
   * @param warmup the runs and milliseconds the warm-up took, and how it ended
   */
  record Row(String name, double medianUs, double minUs, double p90Us, double enqueueUs, double heapBytes,
      double firstPassHeapBytes, SteadyState.WarmUp warmup) {
    /** The column header matching {@link #print}, the name column {@code nameWidth} wide. */
    static void printHeader(int nameWidth) {
      System.out.println(String.format(Locale.ROOT, "%-" + nameWidth + "s %9s %9s %9s %10s %11s %11s %10s %6s",
          "variant", "median_us", "min_us", "p90_us", "enqueue_us", "heap_B/run", "warmup_runs", "warmup_ms",
          "warmup"));
    }

    /** Prints the row on one line, the name column {@code nameWidth} wide. */
    void print(int nameWidth) {
      System.out.println(String.format(Locale.ROOT, "%-" + nameWidth + "s %9.1f %9.1f %9.1f %10.1f %11.1f %11d %10.1f %6s",
          name, medianUs, minUs, p90Us, enqueueUs, heapBytes, warmup.units(), warmup.millis(), warmup.ending().label()));
      if (firstPassHeapBytes >= heapBytes + 1) {
        System.out.println(String.format(Locale.ROOT, "#   heap_B/run above: the second %d runs without a wait; the"
            + " first allocated %.1f B/run (pools growing to what that many unwaited calls need)", HEAP_RUNS,
            firstPassHeapBytes));
      }
    }
  }

  /**
   * The warm-up of the probes' command lines: {@code auto} (or nothing) for {@link SteadyState.Rule#DEFAULT},
   * {@code auto:MIN:MAX} for the same rule with at least MIN and at most MAX seconds a row (so that a whole
   * probe fits a time limit), a whole number for exactly that many runs.
   */
  static SteadyState.Rule warmUp(String spec) {
    if (spec == null || spec.equals("auto")) {
      return SteadyState.Rule.DEFAULT;
    }
    if (spec.startsWith("auto:")) {
      String[] times = spec.substring("auto:".length()).split(":");
      if (times.length != 2) {
        throw new IllegalArgumentException("warm-up '" + spec + "': auto, auto:MIN:MAX (seconds) or a number of runs");
      }
      return SteadyState.Rule.DEFAULT.withTimes(Double.parseDouble(times[0]), Double.parseDouble(times[1]));
    }
    return SteadyState.Rule.fixed(Long.parseLong(spec));
  }

  static Row measure(String name, Body body, Body wait, int reps, SteadyState.Rule warmUp) {
    SteadyState.WarmUp warm = new SteadyState(SteadyState.Consensus.ALONE).warmUp(warmUp, 1, () -> {
      body.run();
      wait.run();
    });
    long[] total = new long[reps];
    long[] enqueue = new long[reps];
    for (int i = 0; i < reps; i++) {
      long t0 = System.nanoTime();
      body.run();
      long t1 = System.nanoTime();
      wait.run();
      long t2 = System.nanoTime();
      total[i] = t2 - t0;
      enqueue[i] = t1 - t0;
    }
    com.sun.management.ThreadMXBean threads =
        (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().threadId();
    double[] perRun = new double[2];
    for (int pass = 0; pass < perRun.length; pass++) {
      long before = threads.getThreadAllocatedBytes(id);
      for (int i = 0; i < HEAP_RUNS; i++) {
        body.run();
      }
      long after = threads.getThreadAllocatedBytes(id);
      wait.run();
      perRun[pass] = (after - before) / (double) HEAP_RUNS;
    }
    Arrays.sort(total);
    Arrays.sort(enqueue);
    return new Row(name, total[reps / 2] / 1e3, total[0] / 1e3, total[(int) (reps * 0.9)] / 1e3,
        enqueue[reps / 2] / 1e3, perRun[1], perRun[0], warm);
  }
}
