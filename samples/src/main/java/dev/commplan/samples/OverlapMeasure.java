package dev.commplan.samples;

import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The {@code overlap} sample's measurement ({@code --measure}, {@code --sweep}): its step timed each way of
 * {@link #MEASURED} in the JVM's steady state ({@link OverlapTiming}), the overlapped step for each bucket
 * size of {@link BucketSweep#sizes}, and one serial and one overlapped step traced for the timeline ({@link
 * TimelineSvg}).
 */
final class OverlapMeasure {
  /** The ways the measurement times, in order. */
  static final List<TrainStep.Mode> MEASURED = List.of(TrainStep.Mode.COMPUTE, TrainStep.Mode.COMMUNICATION,
      TrainStep.Mode.SERIAL, TrainStep.Mode.OVERLAPPED);

  private OverlapMeasure() {}

  /**
   * What a rank's measurement found.
   *
   * @param timed each way's times, in the order of {@link #MEASURED}
   * @param buckets the measured plan's buckets
   * @param sweep the overlapped step at each size of {@link BucketSweep#sizes}; null without --sweep
   * @param spans a serial step's spans, then an overlapped step's; empty without a timeline
   */
  record Measured(List<OverlapTiming.Timed> timed, List<Schedule.Bucket> buckets, BucketSweep.Sweep sweep,
      List<StepTrace.Span> spans) {}

  /**
   * Times this rank's step each way of {@link #MEASURED}, sweeps the bucket size where {@code options} say so,
   * then traces a serial and an overlapped step where they draw a timeline (every rank calls it together).
   */
  static Measured measure(Communicator comm, OverlapOptions options, SteadyState.Rule rule, int units) {
    OverlapModel.Size size = options.size();
    SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
    try (StepCompute compute = compute(comm, size);
        GradPlan grads = GradPlan.build(comm, size.width(), options.bucketBytes())) {
      TrainStep step = new TrainStep(compute, grads);
      List<OverlapTiming.Timed> timed = OverlapTiming.time(MEASURED, OverlapTiming.steps(step, compute.stream()),
          steady, rule, units, OverlapTiming.MEASURE_MAX_NANOS);
      BucketSweep.Sweep sweep = options.sweep() ? sweep(comm, compute, step, steady, rule, units, size) : null;
      if (!options.timeline()) {
        return new Measured(timed, grads.buckets(), sweep, List.of());
      }
      try (StepTrace.Marks marks = comm.backendName().equals("nccl") ? new CudaMarks() : new HostMarks()) {
        StepTrace trace = new StepTrace(marks, comm.rank());
        // Each traced step as one unit of the timing rule, which starts every rank together.
        steady.measure(1, 1, Long.MAX_VALUE, () -> {
          step.run(0, TrainStep.Mode.SERIAL, trace);
          compute.stream().synchronize();
        });
        steady.measure(1, 1, Long.MAX_VALUE, () -> {
          step.run(1, TrainStep.Mode.OVERLAPPED, trace);
          compute.stream().synchronize();
        });
        return new Measured(timed, grads.buckets(), sweep, trace.spans());
      }
    }
  }

  /**
   * The overlapped step at each size of {@link BucketSweep#sizes}, a plan built for each, next to the compute
   * alone and the serial step: every way warmed up in turn, then all timed interleaved ({@link
   * OverlapTiming#interleaved}), so that the table's rows are compared under the same conditions.
   */
  private static BucketSweep.Sweep sweep(Communicator comm, StepCompute compute, TrainStep step, SteadyState steady,
      SteadyState.Rule rule, int units, OverlapModel.Size size) {
    List<Long> sizes = BucketSweep.sizes(size);
    List<GradPlan> plans = new ArrayList<>();
    try {
      Function<TrainStep.Mode, SteadyState.Unit> steps = OverlapTiming.steps(step, compute.stream());
      List<SteadyState.Unit> ways = new ArrayList<>(List.of(steps.apply(TrainStep.Mode.COMPUTE),
          steps.apply(TrainStep.Mode.SERIAL)));
      for (long bucketBytes : sizes) {
        GradPlan plan = GradPlan.build(comm, size.width(), bucketBytes);
        plans.add(plan);
        ways.add(OverlapTiming.steps(new TrainStep(compute, plan), compute.stream()).apply(TrainStep.Mode.OVERLAPPED));
      }
      List<SteadyState.WarmUp> warmUps = new ArrayList<>();
      for (SteadyState.Unit way : ways) {
        warmUps.add(steady.warmUp(rule, 1, way));
      }
      List<SteadyState.Samples> samples = OverlapTiming.interleaved(ways, steady, units, OverlapTiming.MEASURE_MAX_NANOS);
      List<BucketSweep.Row> rows = new ArrayList<>();
      for (int i = 0; i < sizes.size(); i++) {
        rows.add(new BucketSweep.Row(sizes.get(i), plans.get(i).buckets().size(), samples.get(2 + i).median() / 1e6,
            warmUps.get(2 + i)));
      }
      return new BucketSweep.Sweep(samples.get(0).median() / 1e6, samples.get(1).median() / 1e6, samples.get(0).count(),
          rows);
    } finally {
      for (int i = plans.size() - 1; i >= 0; i--) {
        plans.get(i).close();
      }
    }
  }

  private static StepCompute compute(Communicator comm, OverlapModel.Size size) {
    return OverlapSample.compute(comm, size);
  }

  /** The buckets in one line, in the order they go out: "b15..w14 (32.5 KiB), ..., b0..loss (16.3 KiB)". */
  static String describe(List<Schedule.Bucket> buckets) {
    List<String> parts = new ArrayList<>();
    for (Schedule.Bucket b : buckets) {
      List<String> fields = b.fields();
      String names = fields.size() == 1 ? fields.get(0) : fields.get(0) + ".." + fields.get(fields.size() - 1);
      parts.add(names + " (" + OverlapModel.bytes(b.bytes()) + ")");
    }
    return String.join(", ", parts);
  }

  /** "1 bucket", "6 buckets". */
  static String buckets(int n) {
    return n + (n == 1 ? " bucket" : " buckets");
  }

  /** Prints rank 0's measurement: each way's times, what they say, and the sweep's table. */
  static void print(PrintStream out, int ranks, String backend, OverlapOptions options, SteadyState.Rule rule,
      Measured measured) {
    OverlapModel.Size size = options.size();
    out.printf(Locale.ROOT, "measure: %s, %s, %s backend, %s%n", size.describe(), LossTable.ranks(ranks), backend,
        backend.equals("nccl") ? "cuBLAS on each rank's stream" : backend.equals("local")
            ? "host compute on each rank's stream worker" : "host compute on each rank's thread");
    List<Schedule.Bucket> buckets = measured.buckets();
    long gradients = buckets.stream().mapToLong(Schedule.Bucket::bytes).sum();
    Schedule.Bucket last = buckets.get(buckets.size() - 1);
    out.printf(Locale.ROOT, "overlapped: %s of at most %s (%s), last layer first: %s%n", buckets(buckets.size()),
        OverlapModel.bytes(bucketBytes(options)), options.bucketBytes() > 0 ? "the builder's bucketBytes"
            : "@CommPlan(bucketBytes)", describe(buckets));
    OverlapTiming.lines(rule, measured.timed()).forEach(out::println);
    List<OverlapTiming.Timed> timed = measured.timed();
    double communication = OverlapTiming.medianMillis(timed, TrainStep.Mode.COMMUNICATION);
    new OverlapTiming.Figures(OverlapTiming.medianMillis(timed, TrainStep.Mode.COMPUTE), communication,
        OverlapTiming.medianMillis(timed, TrainStep.Mode.SERIAL),
        OverlapTiming.medianMillis(timed, TrainStep.Mode.OVERLAPPED),
        communication * last.bytes() / gradients).lines().forEach(out::println);
    if (measured.sweep() != null) {
      measured.sweep().lines().forEach(out::println);
    }
  }

  /** The measured plan's bucketBytes: --bucket-bytes, or the annotation's. */
  private static long bucketBytes(OverlapOptions options) {
    return options.bucketBytes() > 0 ? options.bucketBytes() : OverlapGrads.BUCKET_BYTES;
  }

  /** Draws the timeline from every rank's spans and says where. */
  static void drawTimeline(PrintStream out, Path svg, int ranks, String backend, OverlapOptions options,
      List<Measured> measured) {
    List<StepTrace.Span> spans = new ArrayList<>();
    for (Measured m : measured) {
      spans.addAll(m.spans());
    }
    Path written = TimelineSvg.write(svg, "overlap: a serial training step, then an overlapped one, "
        + LossTable.ranks(ranks) + ", " + backend + " backend", notes(backend, options, measured.get(0).buckets()),
        StepTrace.fromZero(spans));
    out.println("timeline of a serial step, then an overlapped one: " + written.toAbsolutePath());
  }

  private static List<String> notes(String backend, OverlapOptions options, List<Schedule.Bucket> buckets) {
    return List.of(options.size().describe() + "; after the timed steps",
        "overlapped: " + buckets(buckets.size()) + " of at most " + OverlapModel.bytes(bucketBytes(options))
            + ", on each rank's communication stream",
        backend.equals("nccl")
            ? "times: CUDA events with timing on each rank's streams, from the rank's first (ranks aligned at their start)"
            : "times: the host's clock, read by a host task in each rank's stream order (one clock for every rank)");
  }
}
