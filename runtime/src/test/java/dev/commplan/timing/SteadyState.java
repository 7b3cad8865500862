package dev.commplan.timing;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Locale;
import java.util.function.LongSupplier;

/**
 * The one warm-up rule of CommPlan's timing tools (bench's {@code sweep}, {@code many} and {@code
 * local-target}, the NCCL host-cost probes, {@code OrderCheckCost}), so that every figure they print is
 * taken the same way, from a JVM in its steady state.
 *
 * <p>A tool times a <em>unit</em>: what runs between two readings of the clock, made of a known number of
 * calls (nccl-tests' batch of {@code iters} calls and one synchronize; one step of {@code many}; one run
 * and its wait of a probe). {@link #warmUp} runs units until all of these hold:
 *
 * <ul>
 *   <li>the median time per call of the last {@code window} units is within {@code tolerance} of the
 *       median of the {@code window} units before them;
 *   <li>the JIT spent no time compiling while the last {@code window} units ran (the JVM's
 *       {@link CompilationMXBean}, where it measures compile time);
 *   <li>at least {@code min} has passed;
 * </ul>
 *
 * or until {@code max} has passed, the cap that makes every command end; the result says which ({@link
 * Ending}), with the calls and milliseconds it took, since a job's first steps are a real cost too. Then
 * {@link #measure} times units and the tool prints their median.
 *
 * <p>Ranks that run the same units together (threads of one JVM, or processes) must stop warming up after
 * the same unit, or their collectives would no longer pair. So after each unit the figures every rank
 * measured pass through a {@link Consensus}, and every rank decides from the same agreed numbers.
 */
public final class SteadyState {
  /** What a tool times: runs once per reading of the clock. */
  @FunctionalInterface
  public interface Unit {
    /** Runs the unit (its calls, and whatever wait the tool times with them). */
    void run();
  }

  /** Makes the ranks that run the same units see the same figures. */
  @FunctionalInterface
  public interface Consensus {
    /** One rank alone: its own figures. */
    Consensus ALONE = values -> values;

    /**
     * Returns every rank's {@code values}, averaged element by element over the ranks; every rank gets the
     * same numbers. Also a barrier: no rank returns before every rank called it.
     *
     * @param values this rank's figures
     * @return the figures averaged over the ranks (may be {@code values} itself)
     */
    double[] average(double[] values);
  }

  /** How a warm-up ended. */
  public enum Ending {
    /** The per-call time was stable and the JIT quiet. */
    STABLE("stable"),
    /** The cap was reached first: the figures that follow may still include JIT or other warm-up work. */
    CAP("cap"),
    /** A fixed number of calls was asked for ({@link Rule#fixed}), with no rule. */
    FIXED("fixed");

    private final String label;

    Ending(String label) {
      this.label = label;
    }

    /** The word the tools print: {@code stable}, {@code cap} or {@code fixed}. */
    public String label() {
      return label;
    }
  }

  /**
   * When a warm-up ends: {@link #steady} (the rule above) or {@link #fixed} (a count of calls, no rule,
   * which reproduces the old cold figures).
   *
   * @param window units per window of the stability rule
   * @param tolerance the largest relative change between the medians of two consecutive windows
   * @param minNanos the least time a warm-up takes
   * @param maxNanos the cap
   * @param fixedCalls the calls of a fixed warm-up, or -1 for the rule
   */
  public record Rule(int window, double tolerance, long minNanos, long maxNanos, long fixedCalls) {
    /**
     * The defaults: windows of 10 units within 5 %, at least 1 s, at most 10 s. The minimum is what tells a
     * compiled steady state from a plateau on the way to it: HotSpot runs a method interpreted, then
     * compiled by C1 with profiling, and compiles it with C2 only after about 15,000 invocations and loop
     * iterations (Tier4CompileThreshold); meanwhile the time per call can be flat and the JIT idle. A second
     * is over 15,000 calls of every host path we time (0.2 to 100 µs a call).
     */
    public static final Rule DEFAULT = steady(10, 0.05, 1, 10);

    public Rule {
      if (fixedCalls < 0 && (window < 1 || tolerance < 0 || minNanos < 0 || maxNanos < minNanos)) {
        throw new IllegalArgumentException("warm-up rule: window " + window + " (at least 1), tolerance " + tolerance
            + " (at least 0), min " + minNanos + " ns, max " + maxNanos + " ns (at least min)");
      }
    }

    /**
     * The steady-state rule.
     *
     * @param window units per window
     * @param tolerance relative change allowed between two windows' medians (0.05 = 5 %)
     * @param minSeconds the least time
     * @param maxSeconds the cap
     * @return the rule
     */
    public static Rule steady(int window, double tolerance, double minSeconds, double maxSeconds) {
      return new Rule(window, tolerance, (long) (minSeconds * 1e9), (long) (maxSeconds * 1e9), -1);
    }

    /**
     * Exactly {@code calls} calls (rounded up to whole units), no rule: what the tools did before.
     *
     * @param calls calls to run, 0 for none
     * @return the rule
     */
    public static Rule fixed(long calls) {
      if (calls < 0) {
        throw new IllegalArgumentException("a fixed warm-up of " + calls + " calls");
      }
      return new Rule(0, 0, 0, 0, calls);
    }

    /**
     * This rule with {@code min} and {@code max} replaced (seconds; negative keeps the value).
     *
     * @param minSeconds the least time, or negative to keep it
     * @param maxSeconds the cap, or negative to keep it
     * @return the new rule
     */
    public Rule withTimes(double minSeconds, double maxSeconds) {
      return new Rule(window, tolerance, minSeconds < 0 ? minNanos : (long) (minSeconds * 1e9),
          maxSeconds < 0 ? maxNanos : (long) (maxSeconds * 1e9), fixedCalls);
    }

    /** Whether this is a fixed count. */
    public boolean isFixed() {
      return fixedCalls >= 0;
    }

    /**
     * The rule in words, for the header of a tool's output.
     *
     * @param unit what one unit is, e.g. "batch of 20 calls and one synchronize"
     * @param call what the time is given per, e.g. "call", "step", "run"
     * @return one line without a leading {@code #}
     */
    public String describe(String unit, String call) {
      if (isFixed()) {
        return String.format(Locale.ROOT, "warm-up: %d %ss (fixed; no steady-state rule), in units of one %s",
            fixedCalls, call, unit);
      }
      return String.format(Locale.ROOT, "warm-up: units (one %s) until the median time per %s of the last %d is"
              + " within %.0f%% of the %d before and the JIT compiled nothing during the last %d; at least %s s, at"
              + " most %s s", unit, call, window, tolerance * 100, window, window, seconds(minNanos), seconds(maxNanos));
    }

    private static String seconds(long nanos) {
      return new java.math.BigDecimal(nanos / 1e9).round(new java.math.MathContext(3)).stripTrailingZeros()
          .toPlainString();
    }
  }

  /**
   * What a warm-up took.
   *
   * @param units units run
   * @param calls calls run (units × calls per unit)
   * @param millis wall time of the warm-up (agreed over ranks)
   * @param ending why it stopped
   * @param perCallNanos the median per-call time of its last window (of all its units when fewer)
   */
  public record WarmUp(long units, long calls, double millis, Ending ending, double perCallNanos) {
    /**
     * One phrase: {@code 20400 calls, 102.3 ms, stable}.
     *
     * @param callName what a call is called in this tool, e.g. "calls", "steps", "runs"
     * @return the phrase
     */
    public String summary(String callName) {
      return String.format(Locale.ROOT, "%d %s, %.1f ms, %s", calls, callName, millis, ending.label());
    }
  }

  /**
   * The measured units, per call, in nanoseconds, sorted.
   *
   * @param perCallNanos each unit's time divided by its calls (agreed over ranks), ascending
   * @param millis wall time of the measurement
   */
  public record Samples(double[] perCallNanos, double millis) {
    /** Units measured. */
    public int count() {
      return perCallNanos.length;
    }

    /** The median per-call time (ns). */
    public double median() {
      return SteadyState.median(perCallNanos, 0, perCallNanos.length);
    }

    /** The fastest unit's per-call time (ns). */
    public double min() {
      return perCallNanos[0];
    }

    /** The 90th percentile per-call time (ns): the unit at index {@code floor(0.9 n)}. */
    public double p90() {
      return perCallNanos[(int) (perCallNanos.length * 0.9)];
    }
  }

  private final LongSupplier clock;
  private final LongSupplier compileMillis;
  private final Consensus consensus;

  /**
   * The real clock ({@code System.nanoTime}) and the JVM's compile time.
   *
   * @param consensus how the ranks that run the units together agree ({@link Consensus#ALONE} for one)
   */
  public SteadyState(Consensus consensus) {
    this(System::nanoTime, jitMillis(), consensus);
  }

  /**
   * A given clock and compile-time counter (tests use fakes).
   *
   * @param clock nanoseconds, as {@code System.nanoTime}
   * @param compileMillis total JIT compile time so far, in ms, never decreasing
   * @param consensus how the ranks agree
   */
  public SteadyState(LongSupplier clock, LongSupplier compileMillis, Consensus consensus) {
    this.clock = clock;
    this.compileMillis = compileMillis;
    this.consensus = consensus;
  }

  /** The JVM's total JIT compile time; a constant where the JVM does not measure it (then only time counts). */
  static LongSupplier jitMillis() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
      return () -> 0;
    }
    return jit::getTotalCompilationTime;
  }

  /**
   * Runs {@code unit} until {@code rule} says the steady state is reached, or its cap.
   *
   * @param rule when to stop
   * @param callsPerUnit the calls one unit makes (at least 1)
   * @param unit what to run
   * @return what the warm-up took
   */
  public WarmUp warmUp(Rule rule, long callsPerUnit, Unit unit) {
    if (callsPerUnit < 1) {
      throw new IllegalArgumentException("a unit of " + callsPerUnit + " calls");
    }
    int w = Math.max(1, rule.window());
    double[] perCall = new double[2 * w]; // the last two windows, a ring
    double[] jit = new double[w + 1]; // compile time after each of the last w + 1 units, a ring
    double[] a = new double[w];
    double[] b = new double[w];
    double[] figures = new double[3];
    long start = clock.getAsLong();
    double elapsed = 0;
    long units = 0;
    while (true) {
      if (rule.isFixed() && units * callsPerUnit >= rule.fixedCalls()) {
        return new WarmUp(units, units * callsPerUnit, elapsed / 1e6, Ending.FIXED, lastMedian(perCall, units, w, a));
      }
      long t0 = clock.getAsLong();
      unit.run();
      long t1 = clock.getAsLong();
      figures[0] = (t1 - t0) / (double) callsPerUnit;
      figures[1] = t1 - start;
      figures[2] = compileMillis.getAsLong();
      double[] agreed = consensus.average(figures);
      perCall[(int) (units % (2 * w))] = agreed[0];
      jit[(int) (units % (w + 1))] = agreed[2];
      elapsed = agreed[1];
      units++;
      if (rule.isFixed()) {
        continue;
      }
      if (units >= 2L * w && elapsed >= rule.minNanos()) {
        for (int i = 0; i < w; i++) {
          a[i] = perCall[(int) ((units - 2L * w + i) % (2 * w))];
          b[i] = perCall[(int) ((units - w + i) % (2 * w))];
        }
        double before = median(sort(a), 0, w);
        double last = median(sort(b), 0, w);
        boolean jitQuiet = jit[(int) ((units - 1) % (w + 1))] == jit[(int) (units % (w + 1))]; // now vs w units ago
        if (Math.abs(last - before) <= rule.tolerance() * Math.min(last, before) && jitQuiet) {
          return new WarmUp(units, units * callsPerUnit, elapsed / 1e6, Ending.STABLE, last);
        }
      }
      if (elapsed >= rule.maxNanos()) {
        return new WarmUp(units, units * callsPerUnit, elapsed / 1e6, Ending.CAP, lastMedian(perCall, units, w, a));
      }
    }
  }

  /**
   * Times {@code units} units (fewer where {@code maxNanos} passes first; at least one), per call.
   *
   * @param callsPerUnit the calls one unit makes (at least 1)
   * @param units how many units to time
   * @param maxNanos stop after the unit during which this much time passed
   * @param unit what to run
   * @return the per-call times, sorted
   */
  public Samples measure(long callsPerUnit, int units, long maxNanos, Unit unit) {
    if (callsPerUnit < 1 || units < 1) {
      throw new IllegalArgumentException("measure " + units + " units of " + callsPerUnit + " calls");
    }
    double[] perCall = new double[units];
    double[] figures = new double[2];
    consensus.average(figures); // every rank starts together
    long start = clock.getAsLong();
    int n = 0;
    double elapsed = 0;
    while (n < units) {
      long t0 = clock.getAsLong();
      unit.run();
      long t1 = clock.getAsLong();
      figures[0] = (t1 - t0) / (double) callsPerUnit;
      figures[1] = t1 - start;
      double[] agreed = consensus.average(figures);
      perCall[n++] = agreed[0];
      elapsed = agreed[1];
      if (elapsed >= maxNanos) {
        break;
      }
    }
    double[] done = Arrays.copyOf(perCall, n);
    Arrays.sort(done);
    return new Samples(done, elapsed / 1e6);
  }

  private static double lastMedian(double[] ring, long units, int w, double[] scratch) {
    int n = (int) Math.min(units, w);
    if (n == 0) {
      return Double.NaN;
    }
    for (int i = 0; i < n; i++) {
      scratch[i] = ring[(int) ((units - n + i) % ring.length)];
    }
    Arrays.sort(scratch, 0, n);
    return median(scratch, 0, n);
  }

  private static double[] sort(double[] values) {
    Arrays.sort(values);
    return values;
  }

  /** The median of {@code sorted[from..to)}: the middle one, or the mean of the middle two. */
  static double median(double[] sorted, int from, int to) {
    int n = to - from;
    if (n == 0) {
      return Double.NaN;
    }
    int mid = from + n / 2;
    return n % 2 == 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
  }
}
