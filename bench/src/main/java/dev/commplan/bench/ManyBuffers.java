package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.bench.plans.Gpt2GradsPlan;
import dev.commplan.bench.plans.Many200OutPlan;
import dev.commplan.bench.plans.Many200Plan;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.Stream;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Consumer;

/**
 * The many-buffers case: a step that all-reduces K buffers (K x s elements, or a real model's gradient
 * set), issued five ways and timed per step in the steady state (the timed unit is one step: issue, then
 * {@code stream.synchronize()}; steps until the time per step is steady ({@link SteadyState}, reported per
 * way), then the median of {@code iters} steps, each averaged over ranks):
 *
 * <ul>
 *   <li>{@code separate}: K direct calls, one per buffer, each buffer allocated on its own;
 *   <li>{@code group}: the same K calls inside one {@code groupStart()}/{@code groupEnd()};
 *   <li>{@code plan}: one {@code execute} of a plan that holds the K buffers (the processor's generated
 *       plan where one exists for the case, else the same plan built with {@link PlanBuilder});
 *   <li>{@code flat}: the ideal, one call over one buffer of the same total size;
 *   <li>{@code graph}: the same plan captured once ({@code Plan.capture}) and launched each step: on the
 *       NCCL backend one {@code cudaGraphLaunch} of a CUDA graph holding the plan's calls; on backends
 *       without CUDA graphs (local, MPI) {@code launch()} executes the plan, so the row measures that
 *       fallback, and the output says so. Built with {@link PlanBuilder} (the same plan as the generated
 *       one; generated classes gain {@code capture(Stream)} separately).
 * </ul>
 *
 * <p>After timing, each way runs once more on fresh inputs and is checked element by element (#wrong).
 * Each way's line is printed (and written to the CSV) as soon as it is done, so that a command stopped
 * from outside keeps the ways it finished; {@code timeLimitS} stops it from inside before a way starts
 * (the first always runs). Over a mesh ({@code --mesh}), the same five ways run over its axes: {@link MeshWays}.
 */
final class ManyBuffers {
  /** Where the plan comes from. */
  enum PlanSource {
    /**
     * The generated plan where the case has one (200 x n floats in or out of place, or GPT-2 in place; float,
     * sum), else the builder.
     */
    AUTO,
    GENERATED,
    BUILDER
  }

  /** The buffers of a step: their names and element counts. */
  record Case(String name, List<String> fields, long[] counts) {
    long total() {
      return Arrays.stream(counts).sum();
    }

    static Case uniform(int k, long count) {
      List<String> fields = new ArrayList<>();
      for (int i = 0; i < k; i++) {
        fields.add(String.format(Locale.ROOT, "g%03d", i));
      }
      long[] counts = new long[k];
      Arrays.fill(counts, count);
      return new Case(k + "x" + count, fields, counts);
    }

    static Case gpt2() {
      return new Case("gpt2", Gpt2.TENSORS.stream().map(t -> PlanSources.fieldName(t.name())).toList(),
          Gpt2.TENSORS.stream().mapToLong(Gpt2.Tensor::count).toArray());
    }

    boolean isGpt2() {
      return name.equals("gpt2");
    }
  }

  /**
   * What to run: {@code iters} timed steps per way (fewer where {@code measureMaxS} passes first) after the
   * {@code warmup}; no way starts after {@code timeLimitS} (0: no limit). With {@code mesh}, the world is laid
   * out as that mesh and each buffer is all-reduced over one axis of {@code over}: alternately ({@code i mod
   * A}), or in {@code axisBlocks}, the first K/A buffers over the first axis and so on ({@link MeshWays});
   * null for the whole world. {@code modes} are the ways to run, in {@link ManyBuffers#MODES}' order (all of them by default).
   */
  record Config(String backend, int ranks, Case theCase, DataType type, ReduceOp op, boolean inPlace,
      int iters, SteadyState.Rule warmup, double measureMaxS, double timeLimitS, PlanSource planSource,
      boolean quiet, MeshSpec mesh, List<String> over, boolean axisBlocks, List<String> modes) {
    /** Every way. */
    Config(String backend, int ranks, Case theCase, DataType type, ReduceOp op, boolean inPlace, int iters,
        SteadyState.Rule warmup, double measureMaxS, double timeLimitS, PlanSource planSource, boolean quiet,
        MeshSpec mesh, List<String> over, boolean axisBlocks) {
      this(backend, ranks, theCase, type, op, inPlace, iters, warmup, measureMaxS, timeLimitS, planSource, quiet, mesh,
          over, axisBlocks, MODES);
    }

    Config(String backend, int ranks, Case theCase, DataType type, ReduceOp op, boolean inPlace, int iters,
        SteadyState.Rule warmup, PlanSource planSource) {
      this(backend, ranks, theCase, type, op, inPlace, iters, warmup, 60, 0, planSource, true);
    }

    /** Over the whole world (no mesh). */
    Config(String backend, int ranks, Case theCase, DataType type, ReduceOp op, boolean inPlace, int iters,
        SteadyState.Rule warmup, double measureMaxS, double timeLimitS, PlanSource planSource, boolean quiet) {
      this(backend, ranks, theCase, type, op, inPlace, iters, warmup, measureMaxS, timeLimitS, planSource, quiet, null,
          List.of(), false);
    }
  }

  /**
   * One way's result: NCCL calls per step, median and minimum time per step (µs), #wrong, its warm-up and
   * the steps timed.
   */
  record Result(String mode, int calls, double medianUs, double minUs, long wrong, SteadyState.WarmUp warmup,
      int steps) {}

  static final String CSV_HEADER = "backend,ranks,case,buffers,elements,type,redop,placement,mode,calls,median_us,"
      + "min_us,wrong,warmup_steps,warmup_ms,warmup_end,steps,mesh,over,axis_split";

  static final List<String> MODES = List.of("separate", "group", "plan", "flat", "graph");

  /** Progress lines on stderr, as the sweep's: only after 2 s, then at most one every 5 s within a way (tests set 0). */
  static volatile double quietForS = 2;
  static volatile double everyS = 5;

  private final Config config;
  private final PrintStream progress;
  private final long started = System.nanoTime();
  private long lastProgress = started;
  private volatile String planDescription = "";
  private volatile String graphDescription = "";

  private ManyBuffers(Config config, PrintStream progress) {
    this.config = config;
    this.progress = progress;
  }

  static List<Result> run(Config config, PrintStream out, Csv csv) {
    return run(config, out, null, csv);
  }

  /** Runs the case; {@code progress} (may be null) gets progress lines unless the config is quiet. */
  static List<Result> run(Config config, PrintStream out, PrintStream progress, Csv csv) {
    ManyBuffers m = new ManyBuffers(config, progress);
    RankSync sync = new RankSync(config.ranks());
    List<List<Result>> perRank;
    if (csv != null) {
      csv.header(CSV_HEADER);
    }
    try (Cluster cluster = Backends.cluster(config.backend(), config.ranks())) {
      perRank = cluster.call(comm -> {
        try {
          return m.runRank(comm, sync, comm.rank() == 0 ? out : null, csv);
        } catch (Throwable t) {
          sync.fail();
          throw t;
        }
      });
    }
    return perRank.get(0); // every rank holds the same agreed results
  }

  /** Runs every way on this rank; rank 0 prints each way's line ({@code out} is null on the others). */
  private List<Result> runRank(Communicator comm, RankSync sync, PrintStream out, Csv csv) {
    if (config.mesh() == null) {
      return runRank(comm, null, sync, out, csv);
    }
    try (Mesh mesh = config.mesh().build(comm)) {
      return runRank(comm, new MeshWays(config, mesh), sync, out, csv);
    }
  }

  /** The ways on the world, or over the mesh's axes where {@code meshWays} is not null. */
  private List<Result> runRank(Communicator comm, MeshWays meshWays, RankSync sync, PrintStream out, Csv csv) {
    List<Result> results = new ArrayList<>();
    long maxPiece = config.theCase().total() * config.type().byteSize();
    ManyOutput output = new ManyOutput(config);
    if (out != null) {
      output.header(out);
    }
    try (HostStage stage = new HostStage(maxPiece)) {
      List<String> modes = config.modes();
      for (String mode : modes) {
        if (config.timeLimitS() > 0 && !results.isEmpty()
            && sync.average(comm.rank(), (System.nanoTime() - started) / 1e9) > config.timeLimitS()) {
          if (out != null) {
            out.printf(Locale.ROOT, "# stopped: --time-limit %s s reached before %s; %d of %d ways were run%n",
                Names.seconds(config.timeLimitS()), mode, results.size(), modes.size());
            out.flush();
          }
          break;
        }
        if (comm.rank() == 0) {
          progress(false, mode + " (" + (results.size() + 1) + "/" + modes.size() + "): allocating and filling");
        }
        try (ManyWay way = meshWays != null ? meshWays.prepare(mode) : prepare(mode, comm)) {
          if (meshWays != null && comm.rank() == 0) {
            planDescription = meshWays.planDescription();
            graphDescription = meshWays.graphDescription();
          }
          Result result = measure(way, comm.rank(), sync, stage);
          results.add(result);
          if (out != null) {
            output.row(out, result, planDescription, graphDescription);
            if (csv != null) {
              csv.row(output.csvRow(result));
            }
          }
          if (comm.rank() == 0) {
            progress(true, String.format(Locale.ROOT, "%s done (%d/%d): %d call%s, median %.1f us per step",
                mode, results.size(), modes.size(), result.calls(), result.calls() == 1 ? "" : "s", result.medianUs()));
          }
        }
      }
    }
    if (out != null) {
      ManyOutput.ratios(out, results);
    }
    return results;
  }

  /** The way's warm-up, timed steps and checked run, by the world's {@code rank}. */
  private Result measure(ManyWay way, int rank, RankSync sync, HostStage stage) {
    if (rank == 0) {
      progress(false, way.mode() + ": warming up (" + (config.warmup().isFixed() ? config.warmup().fixedCalls() + " steps"
          : "at most " + Names.seconds(config.warmup().maxNanos() / 1e9) + " s") + ")");
    }
    SteadyState.Unit step = way::step;
    SteadyState steady = new SteadyState(sync.consensus(rank));
    SteadyState.WarmUp warm = steady.warmUp(config.warmup(), 1, step);
    if (rank == 0) {
      progress(false, way.mode() + ": warm-up " + warm.summary("steps") + "; timing " + config.iters() + " steps");
    }
    SteadyState.Samples timed = steady.measure(1, config.iters(), (long) (config.measureMaxS() * 1e9), step);
    double median = timed.median() / 1e3;
    double min = timed.min() / 1e3;

    // The checked run, on fresh inputs (the timed runs summed in place over and over).
    for (ManyPiece p : way.pieces()) {
      if (!config.inPlace()) {
        stage.host.asSlice(0, p.bytes(config.type())).fill((byte) 0);
        stage.upload(p.recvMemory(), p.recvOffset(), p.bytes(config.type()));
      }
      Pattern.fill(stage.host, config.type(), p.count(), config.op(), p.rank(), p.seed());
      stage.upload(p.sendMemory(), p.sendOffset(), p.bytes(config.type()));
    }
    way.step();
    long wrong = 0;
    for (ManyPiece p : way.pieces()) {
      stage.download(p.recvMemory(), p.recvOffset(), p.bytes(config.type()));
      wrong += Pattern.countWrong(stage.host, config.type(), p.count(),
          i -> Pattern.expectedReduction(config.type(), config.op(), p.ranks(), p.seed() + i));
    }
    wrong = (long) sync.sum(rank, wrong);
    return new Result(way.mode(), way.calls(), median, min, wrong, warm, timed.count());
  }

  /**
   * A progress line, on rank 0's thread only: {@code # progress: <what>, <elapsed> s}. Nothing in the first
   * 2 s (short runs stay quiet, as the sweep's do); after that, lines that end a way always, the others
   * at most every 5 s.
   */
  private void progress(boolean milestone, String what) {
    if (config.quiet() || progress == null) {
      return;
    }
    long now = System.nanoTime();
    double elapsed = (now - started) / 1e9;
    if (elapsed < quietForS || (!milestone && (now - lastProgress) / 1e9 < everyS)) {
      return;
    }
    lastProgress = now;
    progress.printf(Locale.ROOT, "# progress: %s, %.1f s%n", what, elapsed);
    progress.flush();
  }

  private ManyWay prepare(String mode, Communicator comm) {
    Case c = config.theCase();
    DataType type = config.type();
    ReduceOp op = config.op();
    return switch (mode) {
      case "separate", "group" -> {
        int k = c.counts().length;
        Buffer[] send = new Buffer[k];
        Buffer[] recv = new Buffer[k];
        List<ManyPiece> pieces = new ArrayList<>(k);
        for (int i = 0; i < k; i++) {
          send[i] = Buffer.allocate(type, comm, c.counts()[i]);
          recv[i] = config.inPlace() ? send[i] : Buffer.allocate(type, comm, c.counts()[i]);
          pieces.add(ManyPiece.of(send[i], recv[i], comm, 0));
        }
        boolean group = mode.equals("group");
        Stream s = comm.stream();
        Runnable issue = () -> {
          if (group) {
            comm.groupStart();
          }
          for (int i = 0; i < send.length; i++) {
            comm.allReduce(send[i], recv[i], op, s);
          }
          if (group) {
            comm.groupEnd();
          }
        };
        AutoCloseable free = () -> {
          for (int i = 0; i < k; i++) {
            send[i].close();
            recv[i].close();
          }
        };
        yield new ManyWay(mode, k, issue, List.of(s), pieces, free);
      }
      case "flat" -> {
        Buffer send = Buffer.allocate(type, comm, c.total());
        Buffer recv = config.inPlace() ? send : Buffer.allocate(type, comm, c.total());
        AutoCloseable free = () -> {
          send.close();
          recv.close();
        };
        Stream s = comm.stream();
        yield new ManyWay(mode, 1, () -> comm.allReduce(send, recv, op, s), List.of(s), List.of(ManyPiece.of(send, recv, comm, 0)),
            free);
      }
      case "plan" -> planWay(comm);
      case "graph" -> graphWay(comm);
      default -> throw new IllegalArgumentException(mode);
    };
  }

  /** The plan, from the processor where the case has a generated class, else from {@link PlanBuilder}. */
  private ManyWay planWay(Communicator comm) {
    Case c = config.theCase();
    boolean generatedFits = config.type() == DataType.F32 && config.op() == ReduceOp.SUM
        && (c.isGpt2() ? config.inPlace() : isUniform(c, PlanSources.K));
    if (config.planSource() == PlanSource.GENERATED && !generatedFits) {
      throw new Args.UsageException("no generated plan for " + c.name() + " " + Names.of(config.type()) + " "
          + Names.of(config.op()) + (config.inPlace() ? " in place" : " out of place")
          + ": generated plans are 200 x n floats (in or out of place) and GPT-2 (in place), all float and sum");
    }
    Consumer<Stream> execute;
    Stream stream = comm.stream();
    Schedule schedule;
    AutoCloseable close;
    String source;
    if (generatedFits && config.planSource() != PlanSource.BUILDER) {
      if (c.isGpt2()) {
        Gpt2GradsPlan p = Gpt2GradsPlan.builder().build(comm);
        execute = p::execute;
        schedule = p.schedule();
        close = p;
        source = "generated Gpt2GradsPlan";
      } else if (config.inPlace()) {
        Many200Plan p = Many200Plan.builder().n(c.counts()[0]).build(comm);
        execute = p::execute;
        schedule = p.schedule();
        close = p;
        source = "generated Many200Plan";
      } else {
        Many200OutPlan p = Many200OutPlan.builder().n(c.counts()[0]).build(comm);
        execute = p::execute;
        schedule = p.schedule();
        close = p;
        source = "generated Many200OutPlan";
      }
    } else {
      Plan p = buildPlan(comm);
      execute = p::execute;
      schedule = p.schedule();
      close = p;
      source = "PlanBuilder";
    }
    List<ManyPiece> pieces = new ArrayList<>();
    int steps = schedule.steps().size();
    for (Step step : schedule.steps()) {
      for (CollectiveCall call : step.calls()) {
        if (call.collective() != Collective.ALL_REDUCE) {
          throw new IllegalStateException("the many-buffers plan issued a " + call.collective().label());
        }
        pieces.add(ManyPiece.of(call, comm, 0));
      }
    }
    if (comm.rank() == 0) {
      planDescription = source + ", " + steps + (steps == 1 ? " step, " : " steps, ") + pieces.size()
          + (pieces.size() == 1 ? " call" : " calls");
    }
    return new ManyWay("plan", pieces.size(), () -> execute.accept(stream), List.of(stream), pieces, close);
  }

  /**
   * The plan captured once on the communicator's stream; each step is one {@code launch()} (a CUDA graph
   * launch on NCCL, an execute elsewhere).
   */
  private ManyWay graphWay(Communicator comm) {
    Plan p = buildPlan(comm);
    CapturedPlan captured;
    try {
      captured = p.capture(comm.stream());
    } catch (RuntimeException e) {
      p.close();
      throw e;
    }
    List<ManyPiece> pieces = new ArrayList<>();
    for (Step step : p.schedule().steps()) {
      for (CollectiveCall call : step.calls()) {
        pieces.add(ManyPiece.of(call, comm, 0));
      }
    }
    if (comm.rank() == 0) {
      graphDescription = captured.isGraph()
          ? "one CUDA graph of the PlanBuilder plan's " + pieces.size() + (pieces.size() == 1 ? " call" : " calls")
              + ", launched with cudaGraphLaunch"
          : "the " + config.backend() + " backend has no CUDA graphs: launch() executes the plan (this row measures"
              + " that fallback, not a graph)";
    }
    AutoCloseable close = () -> {
      captured.close();
      p.close();
    };
    return new ManyWay("graph", pieces.size(), captured::launch, List.of(comm.stream()), pieces, close);
  }

  /** The same plan a generated class would build: one buffer per field, every all-reduce in step 0. */
  private Plan buildPlan(Communicator comm) {
    Case c = config.theCase();
    PlanBuilder b = new PlanBuilder("dev.commplan.bench.ManyBuffers[" + c.name() + "]", comm, 0);
    int k = c.counts().length;
    int[] send = new int[k];
    int[] recv = new int[k];
    for (int i = 0; i < k; i++) {
      String shape = "{\"" + c.counts()[i] + "\"}";
      send[i] = b.buffer(c.fields().get(i), config.type(), c.counts()[i], shape, null);
      recv[i] = config.inPlace() ? send[i] : b.buffer(c.fields().get(i) + "_out", config.type(), c.counts()[i], shape, null);
    }
    for (int i = 0; i < k; i++) {
      b.allReduce(0, send[i], recv[i], config.op());
    }
    return b.build();
  }

  private static boolean isUniform(Case c, int k) {
    return c.counts().length == k && Arrays.stream(c.counts()).allMatch(x -> x == c.counts()[0]);
  }

  static Result find(List<Result> results, String mode) {
    return results.stream().filter(r -> r.mode().equals(mode)).findFirst().orElseThrow();
  }
}
