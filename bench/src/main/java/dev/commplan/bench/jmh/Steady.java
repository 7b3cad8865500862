package dev.commplan.bench.jmh;

/**
 * The warm-up of every JMH benchmark here, in one place (the {@code jmh} subcommand passes JMH's own
 * options through, so these are its defaults; {@code -wi}/{@code -w} on the command line override them).
 *
 * <p>Why ten one-second iterations: HotSpot compiles a method with C2 after about 15,000 invocations and
 * loop iterations ({@code Tier4CompileThreshold}; JDK 25's defaults), then inlines and may deoptimize and
 * compile again as the profile settles; the benchmark method itself, invoked a few hundred times a
 * second in the slowest cases ({@code separateCalls}, {@code groupedCalls}), is compiled on its loop's
 * back-edges (OSR) first. Ten seconds is thousands of invocations of the slowest benchmark method and
 * millions of the calls inside it, far past those thresholds. With three, JMH's {@code -prof comp} showed
 * the JIT at work in most measurement iterations and {@code groupedCalls}' time still falling; with ten,
 * the time had settled within the warm-up iterations and compiling during measurement was occasional
 * (docs/bench/method.md, "JMH's warm-up", has the figures). bin/gpu-run adds {@code -prof comp}, so that every run
 * shows how much the JIT did while it measured. JMH's own default is 5 × 10 s; ten one-second iterations
 * let the warm-up iterations' times show where it settles.
 */
final class Steady {
  /** Warm-up iterations. */
  static final int WARMUP_ITERATIONS = 10;
  /** Seconds per warm-up iteration. */
  static final int WARMUP_SECONDS = 1;

  private Steady() {}
}
