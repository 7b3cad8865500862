package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Data-parallel training of {@link OverlapModel}, a stack of 16 linear layers, whose gradients {@link
 * OverlapGrads} averages over the ranks in buckets. The compute is real on every backend: host work on each
 * rank's stream worker on the local backend ({@link HostStepCompute}), on the rank's thread on MPI, cuBLAS
 * GEMMs on each rank's GPU on NCCL ({@link CublasStepCompute}).
 *
 * <p>It trains a small model each way that trains ({@link #CHECKED}: overlapped, serial, compute alone) and
 * checks each against one host, then, with {@code --measure}, times a step each way in the JVM's steady
 * state, with {@code --sweep} the overlapped step for a range of bucket sizes too, and draws a serial and an
 * overlapped step as an SVG timeline ({@link OverlapMeasure}).
 */
final class OverlapSample {
  /** The model the check trains on every backend: small enough for the host's one-host model. */
  static final OverlapModel.Size CHECK_SIZE = new OverlapModel.Size(64, 16);
  static final int CHECK_STEPS = 10;
  /**
   * The check's bucketBytes: three of its weight gradients (48 KiB), so that its 260 KiB of gradients go in
   * 8 buckets of about two layers each (the annotation's size would make them one).
   */
  static final long CHECK_BUCKET_BYTES = 3 * CHECK_SIZE.weightBytes();
  /** The ways the check trains, in the order it prints them. */
  static final List<TrainStep.Mode> CHECKED = List.of(TrainStep.Mode.OVERLAPPED, TrainStep.Mode.SERIAL,
      TrainStep.Mode.COMPUTE);
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

    static Trained unpack(float[] packed, int from, int steps, int width) {
      return new Trained(Arrays.copyOfRange(packed, from, from + steps),
          OverlapModel.Params.unpack(packed, from + steps, width));
    }

    static int packedLength(int steps, int width) {
      return steps + OverlapModel.LAYERS * (width * width + width);
    }
  }

  /** What a rank ends with: its training each way of {@link #CHECKED}; {@code measured} null without --measure. */
  private record RankResult(List<Trained> trained, OverlapMeasure.Measured measured) {}

  /** The compute of {@code comm}'s rank: cuBLAS on NCCL, host work elsewhere. */
  static StepCompute compute(Communicator comm, OverlapModel.Size size) {
    return comm.backendName().equals("nccl")
        ? new CublasStepCompute(comm, size, comm.size(), comm.rank())
        : new HostStepCompute(comm.stream(), size, comm.size(), comm.rank());
  }

  /**
   * Trains {@code steps} steps of {@code size} from {@link OverlapModel#init} on this rank (every rank calls
   * it), the gradients in buckets of {@code bucketBytes} marked ready in {@code order} where {@code mode}
   * overlaps, synchronizing after each step to read the global loss.
   */
  static Trained train(Communicator comm, OverlapModel.Size size, int steps, TrainStep.Mode mode, long bucketBytes,
      ReadyOrder order) {
    try (StepCompute compute = compute(comm, size); GradPlan grads = GradPlan.build(comm, size.width(), bucketBytes)) {
      TrainStep step = new TrainStep(compute, grads, order);
      float[] losses = new float[steps];
      for (int s = 0; s < steps; s++) {
        step.run(s, mode, StepTrace.OFF);
        compute.stream().synchronize();
        losses[s] = grads.loss().get(0);
      }
      return new Trained(losses, compute.params());
    }
  }

  /** The check's training of this rank each way of {@link #CHECKED}, in that order. */
  static List<Trained> check(Communicator comm) {
    List<Trained> trained = new ArrayList<>();
    for (TrainStep.Mode mode : CHECKED) {
      trained.add(train(comm, CHECK_SIZE, CHECK_STEPS, mode, CHECK_BUCKET_BYTES, ReadyOrder.AS_PRODUCED));
    }
    return trained;
  }

  /** The check plan's buckets (the same on every rank and backend), built on {@code comm} to ask. */
  private static List<Schedule.Bucket> checkBuckets(Communicator comm) {
    try (GradPlan grads = GradPlan.build(comm, CHECK_SIZE.width(), CHECK_BUCKET_BYTES)) {
      return grads.buckets();
    }
  }

  /** The sample on a cluster of {@code ranks}: prints the check and, with --measure, the measurement. */
  static boolean run(String backend, int ranks, OverlapOptions options, Path svg, PrintStream out) {
    return run(backend, ranks, options, svg, out, SteadyState.Rule.DEFAULT, OverlapTiming.MEASURED_STEPS);
  }

  /** {@link #run(String, int, OverlapOptions, Path, PrintStream)} with the measurement's warm-up and units given. */
  static boolean run(String backend, int ranks, OverlapOptions options, Path svg, PrintStream out,
      SteadyState.Rule rule, int units) {
    List<RankResult> results;
    List<Schedule.Bucket> buckets;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      buckets = cluster.call(OverlapSample::checkBuckets).get(0);
      results = cluster.call(comm -> new RankResult(check(comm),
          options.measure() ? OverlapMeasure.measure(comm, options, rule, units) : null));
    }
    printCheckHeader(out, ranks, backend, buckets);
    boolean pass = printCheck(out, results.stream().map(RankResult::trained).toList());
    if (options.measure()) {
      OverlapMeasure.print(out, ranks, backend, options, rule, results.get(0).measured());
      OverlapMeasure.drawTimeline(out, svg, ranks, backend, options,
          results.stream().map(RankResult::measured).toList());
    }
    return pass;
  }

  /** The sample as one rank of {@code MPI_COMM_WORLD}: rank 0 prints the report; no timeline. */
  static boolean runMpi(int ranks, OverlapOptions options, PrintStream out) {
    List<OverlapMeasure.Measured> measured = new ArrayList<>();
    List<List<Schedule.Bucket>> buckets = new ArrayList<>();
    MpiWorld.Gathered world = MpiWorld.run(ranks, comm -> {
      buckets.add(checkBuckets(comm));
      List<Trained> trained = check(comm);
      if (options.measure()) {
        measured.add(OverlapMeasure.measure(comm, options, SteadyState.Rule.DEFAULT, OverlapTiming.MEASURED_STEPS));
      }
      int length = Trained.packedLength(CHECK_STEPS, CHECK_SIZE.width());
      float[] packed = new float[trained.size() * length];
      for (int m = 0; m < trained.size(); m++) {
        System.arraycopy(trained.get(m).packed(), 0, packed, m * length, length);
      }
      return packed;
    }, out);
    printCheckHeader(world.out(), world.results().size(), "mpi", buckets.get(0));
    int length = Trained.packedLength(CHECK_STEPS, CHECK_SIZE.width());
    List<List<Trained>> trained = new ArrayList<>();
    for (float[] packed : world.results()) {
      List<Trained> ways = new ArrayList<>();
      for (int m = 0; m < CHECKED.size(); m++) {
        ways.add(Trained.unpack(packed, m * length, CHECK_STEPS, CHECK_SIZE.width()));
      }
      trained.add(ways);
    }
    boolean pass = printCheck(world.out(), trained);
    if (options.measure()) {
      OverlapMeasure.print(world.out(), world.results().size(), "mpi", options, SteadyState.Rule.DEFAULT,
          measured.get(0));
      world.out().println("timeline: not drawn on mpi, where a rank's compute and its communication share one thread");
    }
    return pass;
  }

  private static void printCheckHeader(PrintStream out, int ranks, String backend, List<Schedule.Bucket> buckets) {
    out.printf(Locale.ROOT, "overlap: %s, %s, %s backend; %d SGD steps each way, checked against one host%n",
        CHECK_SIZE.describe(), LossTable.ranks(ranks), backend, CHECK_STEPS);
    out.printf(Locale.ROOT, "gradients: OverlapGradsPlan in %s of at most %s, last layer first: %s%n",
        OverlapMeasure.buckets(buckets.size()), OverlapModel.bytes(CHECK_BUCKET_BYTES),
        OverlapMeasure.describe(buckets));
  }

  /**
   * The check against one host, each way of {@link #CHECKED}: the overlapped training's loss curve next to
   * the one-host model's, a line per way with its worst rank, and the check line; returns whether it passed.
   * Overlapped and serial are checked against the one-host model of the global batch; the compute alone, where
   * nothing averages, each rank against one host that trains on that rank's share alone.
   *
   * @param trained per rank, its training each way of {@link #CHECKED}
   */
  private static boolean printCheck(PrintStream out, List<List<Trained>> trained) {
    int ranks = trained.size();
    OverlapModel.Trained reference = OverlapModel.reference(CHECK_SIZE, ranks, CHECK_STEPS);
    List<OverlapModel.Trained> alone = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      alone.add(OverlapModel.referenceAlone(CHECK_SIZE, ranks, r, CHECK_STEPS));
    }
    int overlapped = CHECKED.indexOf(TrainStep.Mode.OVERLAPPED);
    String name = "loss (overlapped, " + LossTable.ranks(ranks) + ")";
    out.printf(Locale.ROOT, "step  %s  %15s  |diff|%n", name, "loss (one host)");
    float[] shown = trained.get(0).get(overlapped).losses();
    for (int step = 0; step < CHECK_STEPS; step++) {
      out.printf(Locale.ROOT, "%4d  %" + name.length() + ".6f  %15.6f  %.1e%n", step, shown[step],
          reference.losses()[step], Math.abs(shown[step] - reference.losses()[step]));
    }
    out.printf(Locale.ROOT, "%-38s  %s%n", "max |diff| vs one host, worst rank:", "loss     parameters");
    double worst = 0;
    int wrong = 0;
    for (int m = 0; m < CHECKED.size(); m++) {
      TrainStep.Mode mode = CHECKED.get(m);
      double loss = 0;
      double params = 0;
      for (int r = 0; r < ranks; r++) {
        OverlapModel.Trained expected = mode == TrainStep.Mode.COMPUTE ? alone.get(r) : reference;
        Trained got = trained.get(r).get(m);
        loss = Math.max(loss, LossTable.maxDiff(got.losses(), expected.losses()));
        params = Math.max(params, got.params().maxDiff(expected.params()));
      }
      boolean ok = loss <= ParallelMlp.TOLERANCE && params <= ParallelMlp.TOLERANCE;
      wrong += ok ? 0 : 1;
      worst = Math.max(worst, Math.max(loss, params));
      out.printf(Locale.ROOT, "  %-36s  %.1e  %.1e     %s%s%n", mode.description(), loss, params, ok ? "ok" : "WRONG",
          mode == TrainStep.Mode.COMPUTE ? " (each rank vs one host trained on its share alone)" : "");
    }
    if (wrong == 0) {
      out.printf(Locale.ROOT, "check: PASS, each way %s parameters and loss curves match one host (max |diff| %.1e,"
          + " tolerance %.0e)%n", ranks == 1 ? "the rank's" : "all " + ranks + " ranks'", worst, ParallelMlp.TOLERANCE);
    } else {
      out.printf(Locale.ROOT, "check: FAILED, %d of %d ways differ from one host by more than %.0e (max |diff| %.1e)%n",
          wrong, CHECKED.size(), ParallelMlp.TOLERANCE, worst);
    }
    return wrong == 0;
  }
}
