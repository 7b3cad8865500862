package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import dev.commplan.timing.SteadyState;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The {@code overlap} sample's measurement: its training step timed in each way ({@link TrainStep.Mode}),
 * every way warmed up to the JVM's steady state first ({@link SteadyState}, the rule every timing tool of
 * CommPlan uses; the ranks agree when to stop), then the ways timed interleaved, a step of each in turn
 * ({@link #interleaved}), and what the times say ({@link Figures}).
 */
final class OverlapTiming {
  /** Steps timed per way after the warm-ups. */
  static final int MEASURED_STEPS = 50;
  /** The most time the timed steps of one way may take; fewer are timed where this passes first. */
  static final long MEASURE_MAX_NANOS = 20_000_000_000L;

  private OverlapTiming() {}

  /**
   * One way's times.
   *
   * @param warmUp what its warm-up took
   * @param samples the timed steps' times, per step
   */
  record Timed(TrainStep.Mode mode, SteadyState.WarmUp warmUp, SteadyState.Samples samples) {
    double medianMillis() {
      return samples.median() / 1e6;
    }
  }

  /**
   * Warms up each of {@code modes} in turn, then times them interleaved ({@link #interleaved}); every rank
   * calls this together, on its own thread.
   *
   * @param unit what one unit of a mode runs: on the ranks, one step and the synchronize of its stream
   * @param units how many units to time per mode after the warm-ups
   * @param maxNanos the most time the timed units of one mode may take together
   * @return the times, in the order of {@code modes}
   */
  static List<Timed> time(List<TrainStep.Mode> modes, Function<TrainStep.Mode, SteadyState.Unit> unit,
      SteadyState steady, SteadyState.Rule rule, int units, long maxNanos) {
    List<SteadyState.Unit> runs = modes.stream().map(unit).toList();
    List<SteadyState.WarmUp> warmUps = new ArrayList<>();
    for (SteadyState.Unit run : runs) {
      warmUps.add(steady.warmUp(rule, 1, run));
    }
    List<SteadyState.Samples> samples = interleaved(runs, steady, units, maxNanos);
    List<Timed> timed = new ArrayList<>();
    for (int m = 0; m < modes.size(); m++) {
      timed.add(new Timed(modes.get(m), warmUps.get(m), samples.get(m)));
    }
    return timed;
  }

  /**
   * Times {@code ways} interleaved, after their warm-ups: up to {@code rounds} rounds, each one unit of every
   * way in turn, each unit timed alone (the ranks agree on its time, {@link SteadyState#measure}); stops after
   * the round in which the ways' timed units passed {@code maxNanos} per way. Interleaved, so that what else
   * runs on the machine meanwhile (a shared build machine's other jobs, a clock that changes) weighs on every
   * way alike: their differences are what the comparison needs, and timing one way after another let the
   * load of the moment decide them.
   *
   * @return each way's samples, in the order of {@code ways}
   */
  static List<SteadyState.Samples> interleaved(List<SteadyState.Unit> ways, SteadyState steady, int rounds,
      long maxNanos) {
    double[][] nanos = new double[ways.size()][rounds];
    double total = 0;
    int done = 0;
    while (done < rounds && total < (double) maxNanos * ways.size()) {
      for (int w = 0; w < ways.size(); w++) {
        double t = steady.measure(1, 1, Long.MAX_VALUE, ways.get(w)).perCallNanos()[0];
        nanos[w][done] = t;
        total += t; // agreed over the ranks, so every rank stops after the same round
      }
      done++;
    }
    List<SteadyState.Samples> samples = new ArrayList<>();
    for (double[] way : nanos) {
      double[] sorted = Arrays.copyOf(way, done);
      Arrays.sort(sorted);
      samples.add(new SteadyState.Samples(sorted, Arrays.stream(sorted).sum() / 1e6));
    }
    return samples;
  }

  /** The median step time of {@code mode} in {@code timed}, in milliseconds; NaN where it was not timed. */
  static double medianMillis(List<Timed> timed, TrainStep.Mode mode) {
    return timed.stream().filter(t -> t.mode() == mode).mapToDouble(Timed::medianMillis).findFirst()
        .orElse(Double.NaN);
  }

  /** A unit of {@code mode} for {@link #time}: the next step (each picks the next batch), then a synchronize. */
  static Function<TrainStep.Mode, SteadyState.Unit> steps(TrainStep step, Stream stream) {
    int[] next = {0};
    return mode -> () -> {
      step.run(next[0]++, mode, StepTrace.OFF);
      stream.synchronize();
    };
  }

  /**
   * The share of the communication a step pays for when nothing overlaps ({@code serial - compute}) that an
   * overlapped step hid: 1 when it takes no longer than the compute alone, 0 when as long as the serial step.
   * The sample's "hidden fraction": its denominator is the communication as the serial step pays for it, which
   * is what overlapping can win back; the report also gives {@code (serial - overlapped) / communication
   * alone}, which differs where the compute and the communication slow each other down (shared cores or
   * memory bandwidth).
   */
  static double hidden(double compute, double serial, double overlapped) {
    return (serial - overlapped) / (serial - compute);
  }

  /** The report's lines for {@code timed}: a header, then one line per way. */
  static List<String> lines(SteadyState.Rule rule, List<Timed> timed) {
    List<String> lines = new ArrayList<>();
    lines.add("step time, the median of the timed steps, a step of each way in turn after every way's warm-up; "
        + rule.describe("step and a synchronize", "step"));
    for (Timed t : timed) {
      lines.add(String.format(Locale.ROOT, "  %-36s %10.3f ms   (%d steps timed; warm-up %s)", t.mode().description(),
          t.medianMillis(), t.samples().count(), t.warmUp().summary("steps")));
    }
    return lines;
  }

  /**
   * What the step times say, in milliseconds.
   *
   * @param compute the compute alone
   * @param communication the plan alone
   * @param serial backward, then the plan
   * @param overlapped the buckets reduced during the backward pass; NaN where not measured
   * @param lastBucket the last bucket's communication, which nothing can hide; NaN where not known
   */
  record Figures(double compute, double communication, double serial, double overlapped, double lastBucket) {
    /** The communication as the serial step pays for it: what overlapping can hide at most. */
    double exposedWhenSerial() {
      return serial - compute;
    }

    /** The share of {@link #exposedWhenSerial()} that the overlapped step hid. */
    double hidden() {
      return OverlapTiming.hidden(compute, serial, overlapped);
    }

    /** The target: {@code 1.1 x max(compute, communication) + the last bucket's communication}. */
    double target() {
      return 1.1 * Math.max(compute, communication) + lastBucket;
    }

    /** The lines of the report: the exposed communication, and with an overlapped time what was hidden. */
    List<String> lines() {
      List<String> lines = new ArrayList<>();
      lines.add(String.format(Locale.ROOT, "communication in the serial step (serial - compute alone): %.3f ms;"
          + " alone: %.3f ms", exposedWhenSerial(), communication));
      if (!Double.isNaN(overlapped)) {
        lines.add(String.format(Locale.ROOT, "communication hidden by the overlap: %.0f %% ((serial - overlapped)"
            + " / (serial - compute alone) = (%.3f - %.3f) / %.3f); %.0f %% of the communication alone", 100 * hidden(),
            serial, overlapped, exposedWhenSerial(), 100 * (serial - overlapped) / communication));
      }
      if (!Double.isNaN(overlapped) && !Double.isNaN(lastBucket)) {
        lines.add(String.format(Locale.ROOT, "target: overlapped <= 1.1 x max(compute %.3f, communication %.3f)"
            + " + last bucket %.3f = %.3f ms; overlapped %.3f ms: %s", compute, communication, lastBucket, target(),
            overlapped, overlapped <= target() ? "met" : "missed"));
      }
      return lines;
    }
  }
}
