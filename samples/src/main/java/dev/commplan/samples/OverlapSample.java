package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Data-parallel training of {@link OverlapModel}, a stack of 16 linear layers, whose gradients {@link
 * OverlapGrads} averages over the ranks. The compute is real on every backend: host work on each rank's
 * stream worker on the local backend ({@link HostStepCompute}), on the rank's thread on MPI, cuBLAS GEMMs
 * on each rank's GPU on NCCL ({@link CublasStepCompute}).
 *
 * <p>It checks a small model's training against the one-host model ({@link OverlapModel#reference}), then,
 * with {@code --measure}, times a step each way ({@link TrainStep.Mode}) in the JVM's steady state and
 * draws one step as an SVG timeline ({@link TimelineSvg}).
 */
final class OverlapSample {
  /** The model the check trains on every backend: small enough for the host's one-host model. */
  static final OverlapModel.Size CHECK_SIZE = new OverlapModel.Size(64, 16);
  static final int CHECK_STEPS = 10;
  static final Path DEFAULT_OUT = Path.of("overlap-timeline.svg");

  private OverlapSample() {}

  /**
   * What the sample needs on {@code backend} beyond the backend itself and is missing here, or null: on
   * NCCL its compute needs cuBLAS, and its timeline the CUDA runtime's timing events. Where the NCCL backend
   * cannot run at all (no GPU), null: starting the cluster says why, as for every sample.
   */
  static String unavailableReason(String backend, boolean measure) {
    if (!backend.equals("nccl") || NcclBackend.unavailableReason(1) != null) {
      return null;
    }
    String reason = Cublas.unavailableReason();
    return reason == null && measure ? CudaTiming.unavailableReason() : reason;
  }

  /**
   * The command line's {@code overlap}: checks first what it needs (cuBLAS on nccl, a writable --out where
   * it draws), then runs; returns the exit status (0 pass, 1 failed or cannot run here, 2 a bad --out).
   */
  static int command(Main.Options options, PrintStream out, PrintStream err) {
    OverlapOptions overlap = options.overlap();
    String unavailable = unavailableReason(options.backend(), overlap.measure());
    if (unavailable != null) {
      err.println("error: " + unavailable);
      return 1;
    }
    Path svg = options.out() != null ? options.out() : DEFAULT_OUT;
    String unwritable = overlap.timeline() ? OutputCheck.whyNotWritable(svg) : null;
    if (unwritable != null) {
      err.println("error: overlap cannot write its timeline to " + svg + ": " + unwritable
          + "; pick another --out (checked before training)");
      return 2;
    }
    boolean pass = options.backend().equals("mpi")
        ? runMpi(options.ranksGiven() ? options.ranks() : 0, overlap, out)
        : run(options.backend(), options.ranks(), overlap, svg, out);
    return pass ? 0 : 1;
  }

  /** What a rank's check training ended with: the global batch's loss at every step, and its parameters. */
  record Trained(float[] losses, OverlapModel.Params params) {
    float[] packed() {
      float[] params = this.params.packed();
      float[] packed = Arrays.copyOf(losses, losses.length + params.length);
      System.arraycopy(params, 0, packed, losses.length, params.length);
      return packed;
    }

    static Trained unpack(float[] packed, int steps, int width) {
      return new Trained(Arrays.copyOf(packed, steps), OverlapModel.Params.unpack(packed, steps, width));
    }
  }

  /** What a rank's measurement found: each way's times, and one step's spans (empty without a timeline). */
  record Measured(List<OverlapTiming.Timed> timed, List<StepTrace.Span> spans) {}

  /** What a rank of a cluster ends with; {@code measured} is null without --measure. */
  private record RankResult(Trained trained, Measured measured) {}

  /** The ways the measurement times, in order. */
  static final List<TrainStep.Mode> MEASURED = List.of(TrainStep.Mode.COMPUTE, TrainStep.Mode.COMMUNICATION,
      TrainStep.Mode.SERIAL);

  /** The compute of {@code comm}'s rank: cuBLAS on NCCL, host work elsewhere. */
  static StepCompute compute(Communicator comm, OverlapModel.Size size) {
    return comm.backendName().equals("nccl")
        ? new CublasStepCompute(comm, size, comm.size(), comm.rank())
        : new HostStepCompute(comm.stream(), size, comm.size(), comm.rank());
  }

  /**
   * Trains {@code steps} steps of {@code size} from {@link OverlapModel#init} on this rank (every rank calls
   * it), synchronizing after each step to read the global loss.
   */
  static Trained train(Communicator comm, OverlapModel.Size size, int steps, TrainStep.Mode mode) {
    try (StepCompute compute = compute(comm, size); GradPlan grads = GradPlan.build(comm, size.width())) {
      TrainStep step = new TrainStep(compute, grads);
      float[] losses = new float[steps];
      for (int s = 0; s < steps; s++) {
        step.run(s, mode, StepTrace.OFF);
        compute.stream().synchronize();
        losses[s] = grads.loss().get(0);
      }
      return new Trained(losses, compute.params());
    }
  }

  /**
   * Times this rank's step each way ({@link #MEASURED}), then traces one serial step where {@code timeline}
   * says so (every rank calls it together).
   */
  static Measured measure(Communicator comm, OverlapModel.Size size, SteadyState.Rule rule, int units,
      boolean timeline) {
    try (StepCompute compute = compute(comm, size); GradPlan grads = GradPlan.build(comm, size.width())) {
      TrainStep step = new TrainStep(compute, grads);
      SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
      List<OverlapTiming.Timed> timed = OverlapTiming.time(MEASURED, OverlapTiming.steps(step, compute.stream()),
          steady, rule, units, OverlapTiming.MEASURE_MAX_NANOS);
      if (!timeline) {
        return new Measured(timed, List.of());
      }
      try (StepTrace.Marks marks = comm.backendName().equals("nccl") ? new CudaMarks() : new HostMarks()) {
        StepTrace trace = new StepTrace(marks, comm.rank());
        step.run(0, TrainStep.Mode.SERIAL, trace);
        compute.stream().synchronize();
        return new Measured(timed, trace.spans());
      }
    }
  }

  /** The sample on a cluster of {@code ranks}: prints the check and, with --measure, the measurement. */
  static boolean run(String backend, int ranks, OverlapOptions options, Path svg, PrintStream out) {
    return run(backend, ranks, options, svg, out, SteadyState.Rule.DEFAULT, OverlapTiming.MEASURED_STEPS);
  }

  /** {@link #run(String, int, OverlapOptions, Path, PrintStream)} with the measurement's warm-up and units given. */
  static boolean run(String backend, int ranks, OverlapOptions options, Path svg, PrintStream out,
      SteadyState.Rule rule, int units) {
    printCheckHeader(out, ranks, backend);
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(comm -> new RankResult(train(comm, CHECK_SIZE, CHECK_STEPS, TrainStep.Mode.SERIAL),
          options.measure() ? measure(comm, options.size(), rule, units, true) : null));
    }
    boolean pass = printCheck(out, results.stream().map(RankResult::trained).toList());
    if (options.measure()) {
      printMeasurement(out, ranks, backend, options.size(), rule, results.get(0).measured().timed());
      List<StepTrace.Span> spans = new ArrayList<>();
      for (RankResult r : results) {
        spans.addAll(r.measured().spans());
      }
      Path written = TimelineSvg.write(svg, "overlap: one serial training step, " + LossTable.ranks(ranks) + ", "
          + backend + " backend", timelineNotes(backend, options.size()), StepTrace.fromZero(spans));
      out.println("timeline of one serial step: " + written.toAbsolutePath());
    }
    return pass;
  }

  /** The sample as one rank of {@code MPI_COMM_WORLD}: rank 0 prints the report; no timeline. */
  static boolean runMpi(int ranks, OverlapOptions options, PrintStream out) {
    List<List<OverlapTiming.Timed>> timed = new ArrayList<>();
    MpiWorld.Gathered world = MpiWorld.run(ranks, comm -> {
      float[] packed = train(comm, CHECK_SIZE, CHECK_STEPS, TrainStep.Mode.SERIAL).packed();
      if (options.measure()) {
        timed.add(measure(comm, options.size(), SteadyState.Rule.DEFAULT, OverlapTiming.MEASURED_STEPS, false)
            .timed());
      }
      return packed;
    }, out);
    printCheckHeader(world.out(), world.results().size(), "mpi");
    List<Trained> trained = new ArrayList<>();
    for (float[] packed : world.results()) {
      trained.add(Trained.unpack(packed, CHECK_STEPS, CHECK_SIZE.width()));
    }
    boolean pass = printCheck(world.out(), trained);
    if (options.measure()) {
      printMeasurement(world.out(), world.results().size(), "mpi", options.size(), SteadyState.Rule.DEFAULT,
          timed.get(0));
      world.out().println("timeline: not drawn on mpi, where a rank's compute and its communication share one thread");
    }
    return pass;
  }

  private static void printCheckHeader(PrintStream out, int ranks, String backend) {
    out.printf(Locale.ROOT, "overlap: %s, %s, %s backend; %d SGD steps, gradients averaged by OverlapGradsPlan"
        + " after the backward pass, checked against one host%n", CHECK_SIZE.describe(), LossTable.ranks(ranks),
        backend, CHECK_STEPS);
  }

  /** The check against the one-host model; returns whether it passed. */
  private static boolean printCheck(PrintStream out, List<Trained> trained) {
    OverlapModel.Trained reference = OverlapModel.reference(CHECK_SIZE, trained.size(), CHECK_STEPS);
    List<float[]> losses = trained.stream().map(Trained::losses).toList();
    return Report.check(out, losses, reference.losses(), r -> trained.get(r).params().maxDiff(reference.params()),
        r -> "rank " + r, LossTable.ranks(trained.size()));
  }

  private static void printMeasurement(PrintStream out, int ranks, String backend, OverlapModel.Size size,
      SteadyState.Rule rule, List<OverlapTiming.Timed> timed) {
    out.printf(Locale.ROOT, "measure: %s, %s, %s backend, %s%n", size.describe(), LossTable.ranks(ranks), backend,
        backend.equals("nccl") ? "cuBLAS on each rank's stream" : backend.equals("local")
            ? "host compute on each rank's stream worker" : "host compute on each rank's thread");
    OverlapTiming.lines(rule, timed).forEach(out::println);
    new OverlapTiming.Figures(OverlapTiming.medianMillis(timed, TrainStep.Mode.COMPUTE),
        OverlapTiming.medianMillis(timed, TrainStep.Mode.COMMUNICATION),
        OverlapTiming.medianMillis(timed, TrainStep.Mode.SERIAL), Double.NaN, Double.NaN).lines().forEach(out::println);
  }

  private static List<String> timelineNotes(String backend, OverlapModel.Size size) {
    return List.of(size.describe() + "; after the timed steps",
        backend.equals("nccl")
            ? "times: CUDA events with timing on each rank's streams, from the rank's first (ranks aligned at their start)"
            : "times: the host's clock, read by a host task in each rank's stream order (one clock for every rank)");
  }
}
