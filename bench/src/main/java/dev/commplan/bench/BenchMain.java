package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.bench.Args.UsageException;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DataType;
import dev.commplan.samples.OutputCheck;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Set;

/**
 * The benchmark tool's command line:
 *
 * <pre>
 *   java --enable-native-access=ALL-UNNAMED -jar bench/target/commplan-bench.jar &lt;command&gt; [options]
 *   .device/run dev.commplan.bench.BenchMain &lt;command&gt; [options]          (the GPU machine)
 * </pre>
 *
 * See {@link #USAGE} and docs/performance.md.
 */
public final class BenchMain {
  static final String USAGE =
      """
      usage: commplan-bench <command> [options]
        sweep          nccl-tests' sweep per collective: size, count, type, time, algbw, busbw, #wrong,
                       out of place and in place (same formulas as NVIDIA/nccl-tests doc/PERFORMANCE.md),
                       in the steady state: time is the median per call of timed batches (each --iters
                       calls and one synchronize, as nccl-tests times), after a warm-up reported per row
          --backend local|nccl   (default local)
          --ranks N              (default: 2 on local, 1 on nccl)
          --coll LIST            all (default) or a list of all-reduce, broadcast, all-gather,
                                 reduce-scatter, reduce, gather, scatter, alltoall, sendrecv
          --min SIZE --max SIZE  first and last size in bytes, e.g. 8, 64K, 64M, 1G (default 8 .. 1G)
          --factor F             size step factor (default 2)
          --iters N              calls per timed batch (default 20: nccl-tests' -n)
          --batches N            timed batches per row; the time is their median (default 20)
          --measure-max S        at most S seconds of timed batches per row (default 10)
          --warmup auto|N        auto (default): batches until the median per call of the last
                                 --warmup-window (10) is within --warmup-tolerance (0.05) of the ones
                                 before and the JIT is quiet, at least --warmup-min (1 s) on each
                                 collective's first size and --warmup-min-next (0.1 s) on the others,
                                 at most --warmup-max (10 s); N: N calls, in whole batches, no rule
                                 (the old, cold way)
          --check N              checked runs per size, 0 for none (default 1)
          --check-max SIZE       check sizes up to SIZE only (default: all)
          --time-limit S         start no new size after S seconds (default: no limit)
          --type T --op OP       float (default), half, bfloat16, double, int8, ..., f8e4m3, f8e5m2;
                                 sum (default), prod, max, min, avg
          --root R               the root of broadcast, reduce, gather, scatter (default 0)
          --csv FILE             also write the rows as CSV (with the warm-up of each row)
          --quiet                no progress lines on stderr
          --mesh dp=2,tp=4 --over tp   lay the world out as that mesh (axes outermost first; --ranks is
                                 their product) and run every collective over the groups of one axis, all
                                 groups at once: size, count, root and busbw are the group's; --check
                                 compares each group's result with the reference for that group
        many           the many-buffers case: K buffers as K separate calls, one group of K calls, one plan,
                       one flat call over the same bytes, and the plan captured once and launched (graph:
                       a CUDA graph on nccl; on local and mpi launch() executes the plan, and the output
                       says so) (time per step, median of iterations after the warm-up; each way's line
                       is printed when it is done)
          --buffers K --count S  K buffers of S elements (default 200 x 256)
          --model gpt2           instead: GPT-2 small's 148 gradient tensors (124,439,808 parameters)
          --in-place             all-reduce in place (default: out of place)
          --plan auto|generated|builder   where the plan comes from (default auto: the generated class
                                 where the case has one, else PlanBuilder)
          --iters N              timed steps per way (default 50), at most --measure-max S (10) seconds
          --warmup auto|N        as sweep's, in steps (--warmup-min, -max, -window, -tolerance)
          --time-limit S         start no new way after S seconds (default: no limit)
          --modes LIST           all (default) or some of separate, group, plan, flat, graph
          --backend, --ranks, --type, --op, --csv, --quiet as above
          --mesh dp=2,tp=2       over a mesh: each buffer all-reduced over one axis (PlanBuilder's over),
                                 alternately over the axes of --over (default: all the mesh's), or in blocks
                                 with --axis-blocks; separate, group and flat are per axis
        mesh-cost      what building a mesh costs: Mesh.builder(world)...build() (the agreement check and
                       one split per axis) and close(), per mesh, median of timed builds after the warm-up
          --backend local|nccl|mpi   (mpi: one process per rank under mpirun; default local)
          --meshes LIST          shapes such as 2x4,2x2x2 (axes dp,tp or pp,dp,tp); default on local
                                 1x2,1x1x2,2x2,1x2x2,2x4,2x2x2
          --ranks N              instead: a 2-D and a 3-D mesh of N ranks (nccl's default, N = 1: 1x1 and
                                 1x1x1); on mpi, the default, of mpirun's -np ranks
          --mesh dp=2,tp=4       instead: one mesh with named axes
          --reps N               timed builds per mesh (default 50), at most --measure-max S (10) seconds
          --warmup auto|N        as sweep's, in builds; --time-limit S, --csv FILE, --quiet as above
        local-target   all-reduce, all-gather, reduce-scatter and broadcast of 64 MiB on 2 and 4 local ranks
                       against a memcpy of the same size in the same process, in the steady state (after
                       the warm-up, rounds that time memcpys and then calls of every case; medians), with
                       the CPU time per call
          --size SIZE --ranks LIST (default 64M, 2,4) --coll LIST (default all four)
          --rounds N --calls N   rounds, and timed calls of each case per round (default 5, 10)
          --warmup auto|N        as sweep's, in calls (--warmup-min, -max, -window, -tolerance)
          --type T --quiet
        finite-cost    what the finite check (@CommPlan(checkFinite)) costs: one all-reduce of --size as a direct
                       call, as a plan with the check off and as the same plan with it on, in the steady state
                       (after each way's warm-up, rounds that time calls of every way in turn; medians, and the
                       ratios on/off and off/direct); last, a NaN must be refused on every rank
          --backend local|nccl --ranks N   (default local; 1 rank)
          --size SIZE            (default 64M)  --type T (a floating-point type; default float)
          --in-place             all-reduce in place (default: out of place)
          --rounds N --calls N   (default 5, 10)  --warmup auto|N as sweep's, in calls
        plot           SVG plots from CSV files written by sweep and many
          --sweep FILES          comma-separated sweep CSVs: bandwidth against size, one line per series
          --metric busbw|algbw   which bandwidth (default busbw; one rank's busbw is 0, use algbw)
          --placement out|in|both  which columns (default both)
          --name FILE            the sweep plot's file name (default METRIC.svg)
          --many FILES           comma-separated many CSVs: the ratios separate/plan, group/plan, plan/flat,
                                 graph/flat (where the CSV has the graph row)
          --out DIR              where to write the plots, many-buffers.svg for --many (default .)
        report         the comparison tables of issue 24 (markdown, for docs/performance.md and docs/gpu.md)
                       from the logs of PERF_ONLY=1 bash bin/gpu-run: our sweep against nccl-tests per
                       collective and size, and the host-cost targets (execute, launch, bytes per call)
          --dir DIR              the logs' folder: DIR/nccl-tests.txt, DIR/sweep.txt, DIR/host-cost.txt
          --nccl-tests F --sweep F --host F   or each log by name (override --dir's)
          --multirank            instead, issue 31's tables from the logs of bin/gpu-multirank-perf (several
                                 ranks on one GPU): our sweep and many against the C baseline, per rank
                                 count, and the agreement check's share: DIR/c-baseline.txt, DIR/sweep.txt,
                                 DIR/many.txt (or --c-baseline F --sweep F --many F)
          --out FILE             write the markdown there (default: standard output)
        jmh [JMH options]        the JMH benchmarks of execute()'s host cost (e.g. -prof gc); the NCCL one
                                 is skipped, with the reason, where NCCL cannot run
      """;

  /**
   * The most ranks the local backend runs here: each local rank is a thread of this one JVM with its own
   * buffers, and the collectives' work grows with the square of the ranks (see the samples' limit).
   */
  static final int MAX_LOCAL_RANKS = 256;

  private static final List<String> COMMANDS =
      List.of("sweep", "many", "mesh-cost", "local-target", "finite-cost", "plot", "report", "jmh");

  private BenchMain() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs the command line; returns the exit status: 0 ok, 1 a failure while running, 2 a mistake on the
   * command line (one line on {@code err}, found before any measuring starts).
   */
  static int run(String[] argv, PrintStream out, PrintStream err) {
    if (argv.length == 0) {
      return usageError(err, "name a command: " + String.join(", ", COMMANDS));
    }
    if (argv[0].equals("-h") || argv[0].equals("--help") || argv[0].equals("help")) {
      out.print(USAGE);
      return 0;
    }
    String command = argv[0];
    List<String> rest = Arrays.asList(argv).subList(1, argv.length);
    try {
      switch (command) {
        case "sweep" -> sweep(Args.parse(rest, Set.of("quiet")), out, err);
        case "many" -> many(Args.parse(rest, Set.of("in-place", "quiet", "axis-blocks")), out, err);
        case "local-target" -> localTarget(Args.parse(rest, Set.of("quiet")), out, err);
        case "finite-cost" -> finiteCost(Args.parse(rest, Set.of("in-place")), out);
        case "plot" -> plot(Args.parse(rest, Set.of()), out);
        case "report" -> ReportCommand.run(Args.parse(rest, Set.of("multirank")), out);
        case "mesh-cost" -> MeshCost.command(Args.parse(rest, Set.of("quiet")), out, err);
        case "jmh" -> {
          return Jmh.run(rest.toArray(String[]::new), out, err);
        }
        default -> throw new UsageException("unknown command '" + command + "': the commands are " + String.join(", ", COMMANDS));
      }
      return 0;
    } catch (UsageException e) {
      return usageError(err, e.getMessage());
    } catch (CommPlanException e) {
      MeshSpec.SplitRefused refused = refusal(e);
      if (refused != null) { // the backend's words, once, not under a cluster's "rank 0 of 1 failed: ..."
        err.println("error: " + refused.getMessage());
        return 1;
      }
      err.println("error: " + e.getMessage());
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        err.println("  caused by: " + c);
      }
      return 1;
    } catch (UncheckedIOException e) {
      err.println("error: " + e.getMessage() + ": " + OutputCheck.reason(e.getCause()));
      return 1;
    }
  }

  /** The backend's refusal to split, where that is what failed. */
  static MeshSpec.SplitRefused refusal(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof MeshSpec.SplitRefused refused) {
        return refused;
      }
    }
    return null;
  }

  /** One line, exit status 2. */
  private static int usageError(PrintStream err, String message) {
    err.println("error: " + message + " (--help lists the commands and options)");
    return 2;
  }

  /** --ranks, at least 1, and at most {@link #MAX_LOCAL_RANKS} on the local backend. */
  private static int ranks(Args a, String backend) {
    return ranks(a, backend, null);
  }

  /** --ranks; with a mesh, the product of its sizes, which --ranks (when given) must equal. */
  static int ranks(Args a, String backend, MeshSpec mesh) {
    int ranks = a.integer("ranks", mesh == null ? defaultRanks(backend) : mesh.ranks(), 1);
    if (mesh != null && ranks != mesh.ranks()) {
      throw new UsageException("--ranks " + ranks + " is not the ranks of --mesh " + mesh.option() + " ("
          + String.join(" x ", mesh.sizes().stream().map(String::valueOf).toList()) + " = " + mesh.ranks()
          + "); give --ranks " + mesh.ranks() + " or leave it out");
    }
    checkLocalRanks(backend, ranks);
    return ranks;
  }

  private static void checkLocalRanks(String backend, int ranks) {
    if (backend.equals("local") && ranks > MAX_LOCAL_RANKS) {
      throw new UsageException("--ranks " + ranks + " is more than the local backend runs: at most " + MAX_LOCAL_RANKS
          + ", since each local rank is a thread of this JVM with its own buffers and the collectives' work grows with"
          + " the square of the ranks; for more, use --backend nccl");
    }
  }

  /** Opens --csv before any work, so that an unwritable path is a one-line usage error, not a failure at the end. */
  static Csv openCsv(String path) {
    if (path == null) {
      return null;
    }
    String why = OutputCheck.whyNotWritable(Path.of(path));
    if (why != null) {
      throw new UsageException("cannot write --csv " + path + ": " + why);
    }
    return new Csv(Path.of(path));
  }

  private static int defaultRanks(String backend) {
    return backend.equals("nccl") ? 1 : 2;
  }

  private static void sweep(Args a, PrintStream out, PrintStream err) {
    String backend = a.backend();
    MeshSpec mesh = a.mesh();
    String over = mesh == null ? null : mesh.over(a.required("over", "sweep --mesh needs --over AXIS: the axis whose"
        + " groups the collectives run over"), true).get(0);
    int ranks = ranks(a, backend, mesh);
    int groupRanks = mesh == null ? ranks : mesh.size(over);
    List<Coll> colls = Coll.parseList(a.string("coll", "all"));
    DataType type = a.dataType("float");
    ReduceOp op = a.op("sum");
    int root = a.integer("root", 0, 0);
    long min = a.size("min", "8");
    long max = a.size("max", "1G");
    int factor = a.integer("factor", 2, 2);
    int iters = a.integer("iters", 20, 1);
    int batches = a.integer("batches", 20, 1);
    SteadyState.Rule warmup = a.warmUp();
    double nextMin = a.decimal("warmup-min-next", 0.1, 0);
    double measureMax = a.decimal("measure-max", 10, 0);
    int check = a.integer("check", 1, 0);
    long checkMax = a.size("check-max", Long.toString(Long.MAX_VALUE));
    double timeLimit = a.decimal("time-limit", 0, 0);
    String csvPath = a.string("csv", null);
    boolean quiet = a.flag("quiet");
    a.finish();
    if (min > max) {
      throw new UsageException("--min (" + min + ") is larger than --max (" + max + ")");
    }
    if (root >= groupRanks) {
      throw new UsageException("--root " + root + " is not a rank of " + groupRanks
          + (mesh == null ? "" : " (the ranks of a group along " + over + ")"));
    }
    try (Csv csv = openCsv(csvPath)) {
      if (!warmup.isFixed() && nextMin * 1e9 > warmup.maxNanos()) {
        throw new UsageException("--warmup-min-next " + nextMin + " is more than --warmup-max");
      }
      Sweep.run(new Sweep.Config(backend, ranks, colls, type, op, root, min, max, factor, iters, batches, warmup,
          nextMin, measureMax, check, checkMax, timeLimit, quiet, mesh, over), out, err, csv);
    }
  }

  private static void many(Args a, PrintStream out, PrintStream err) {
    String backend = a.backend();
    MeshSpec mesh = a.mesh();
    List<String> over = mesh == null ? List.of() : mesh.over(a.string("over", String.join(",", mesh.names())), false);
    int ranks = ranks(a, backend, mesh);
    String model = a.string("model", null);
    int buffers = a.integer("buffers", PlanSources.K, 1);
    long count = a.size("count", "256");
    ManyBuffers.Case theCase;
    if (model == null) {
      theCase = ManyBuffers.Case.uniform(buffers, count);
    } else if (model.equals("gpt2")) {
      theCase = ManyBuffers.Case.gpt2();
    } else {
      throw new UsageException("--model is gpt2, not '" + model + "'");
    }
    DataType type = a.dataType("float");
    ReduceOp op = a.op("sum");
    boolean inPlace = a.flag("in-place");
    int iters = a.integer("iters", 50, 1);
    SteadyState.Rule warmup = a.warmUp();
    double measureMax = a.decimal("measure-max", 10, 0);
    double timeLimit = a.decimal("time-limit", 0, 0);
    ManyBuffers.PlanSource source = switch (a.string("plan", "auto")) {
      case "auto" -> ManyBuffers.PlanSource.AUTO;
      case "generated" -> ManyBuffers.PlanSource.GENERATED;
      case "builder" -> ManyBuffers.PlanSource.BUILDER;
      default -> throw new UsageException("--plan is auto, generated or builder");
    };
    boolean axisBlocks = a.flag("axis-blocks");
    List<String> modes = modes(a.string("modes", "all"));
    String csvPath = a.string("csv", null);
    boolean quiet = a.flag("quiet");
    a.finish();
    if (axisBlocks && mesh == null) {
      throw new UsageException("--axis-blocks goes with --mesh: it says how the buffers are shared among the axes");
    }
    if (mesh != null && source == ManyBuffers.PlanSource.GENERATED) {
      throw new UsageException("--plan generated: the generated plans run over the whole world; over --mesh the plan"
          + " is built with PlanBuilder (--plan auto or builder)");
    }
    try (Csv csv = openCsv(csvPath)) {
      ManyBuffers.run(new ManyBuffers.Config(backend, ranks, theCase, type, op, inPlace, iters, warmup, measureMax,
          timeLimit, source, quiet, mesh, over, axisBlocks, modes), out, err, csv);
    }
  }

  /** --modes: all, or some of {@link ManyBuffers#MODES}, run in that order. */
  static List<String> modes(String spec) {
    if (spec.equals("all")) {
      return ManyBuffers.MODES;
    }
    List<String> asked = Arrays.stream(spec.split(",")).map(String::trim).toList();
    for (String m : asked) {
      if (!ManyBuffers.MODES.contains(m)) {
        throw new UsageException("--modes is all or a comma-separated list of " + String.join(", ", ManyBuffers.MODES)
            + ", not '" + m + "'");
      }
    }
    return ManyBuffers.MODES.stream().filter(asked::contains).toList();
  }

  private static void localTarget(Args a, PrintStream out, PrintStream err) {
    long size = a.size("size", "64M");
    List<Integer> ranks = a.integers("ranks", "2,4", 2);
    String colls = a.string("coll", "all");
    int rounds = a.integer("rounds", 5, 1);
    int calls = a.integer("calls", 10, 1);
    SteadyState.Rule warmup = a.warmUp();
    DataType type = a.dataType("float");
    boolean quiet = a.flag("quiet");
    a.finish();
    for (int r : ranks) {
      checkLocalRanks("local", r);
    }
    List<Coll> chosen = colls.equals("all") ? LocalTarget.COLLS : Coll.parseList(colls);
    for (Coll c : chosen) {
      if (!LocalTarget.COLLS.contains(c)) {
        throw new UsageException("local-target measures " + LocalTarget.COLLS + ", not " + c);
      }
    }
    LocalTarget.run(new LocalTarget.Config(size, ranks, chosen, type, rounds, calls, warmup), out,
        quiet ? null : err);
  }

  private static void finiteCost(Args a, PrintStream out) {
    String backend = a.backend();
    int ranks = a.integer("ranks", 1, 1);
    checkLocalRanks(backend, ranks);
    long size = a.size("size", "64M");
    DataType type = a.dataType("float");
    boolean inPlace = a.flag("in-place");
    int rounds = a.integer("rounds", 5, 1);
    int calls = a.integer("calls", 10, 1);
    SteadyState.Rule warmup = a.warmUp();
    a.finish();
    if (!type.isFloatingPoint()) {
      throw new UsageException("--type " + Names.of(type) + ": the finite check searches floating-point data only");
    }
    if (size < type.byteSize()) {
      throw new UsageException("--size " + size + " holds no element of " + Names.of(type));
    }
    FiniteCost.run(new FiniteCost.Config(backend, ranks, size, type, inPlace, rounds, calls, warmup), out);
  }

  private static void plot(Args a, PrintStream out) {
    String sweep = a.string("sweep", null);
    String many = a.string("many", null);
    Path dir = Path.of(a.string("out", "."));
    String metric = a.string("metric", "busbw");
    String placement = a.string("placement", "both");
    String name = a.string("name", null);
    a.finish();
    if (sweep == null && many == null) {
      throw new UsageException("plot needs --sweep FILES, --many FILES or both");
    }
    if (!metric.equals("busbw") && !metric.equals("algbw")) {
      throw new UsageException("--metric is busbw or algbw, not '" + metric + "'");
    }
    Set<String> placements = switch (placement) {
      case "both" -> Set.of("out", "in");
      case "out", "in" -> Set.of(placement);
      default -> throw new UsageException("--placement is out, in or both, not '" + placement + "'");
    };
    List<Path> sweeps = sweep == null ? List.of() : paths("--sweep", sweep);
    List<Path> manys = many == null ? List.of() : paths("--many", many);
    Path sweepFile = dir.resolve(name != null ? name : metric + ".svg");
    Path manyFile = dir.resolve("many-buffers.svg");
    for (Path file : sweep != null ? List.of(sweepFile) : List.<Path>of()) {
      String why = OutputCheck.whyNotWritable(file);
      if (why != null) {
        throw new UsageException("cannot write " + file + ": " + why);
      }
    }
    if (many != null) {
      String why = OutputCheck.whyNotWritable(manyFile);
      if (why != null) {
        throw new UsageException("cannot write " + manyFile + ": " + why);
      }
    }
    try {
      if (sweep != null) {
        SvgPlot.bandwidth(sweeps, sweepFile, metric, placements);
        out.println("wrote " + sweepFile);
      }
      if (many != null) {
        SvgPlot.manyBuffers(manys, manyFile);
        out.println("wrote " + manyFile);
      }
    } catch (IllegalArgumentException | IndexOutOfBoundsException e) {
      // A CSV that is not one of ours, or has nothing to plot: say which, in one line.
      throw new CommPlanException("cannot plot: " + e.getMessage());
    }
  }

  /** Comma-separated files, each of which must exist and be readable. */
  static List<Path> paths(String option, String list) {
    List<Path> paths = new java.util.ArrayList<>();
    for (String part : list.split(",")) {
      if (part.isBlank()) {
        continue;
      }
      Path p;
      try {
        p = Path.of(part.trim());
      } catch (java.nio.file.InvalidPathException e) {
        throw new UsageException(option + ": '" + part.trim() + "' is not a file name here");
      }
      if (!java.nio.file.Files.isRegularFile(p) || !java.nio.file.Files.isReadable(p)) {
        throw new UsageException(option + ": cannot read " + p
            + (java.nio.file.Files.exists(p) ? " (not a readable file)" : " (no such file)"));
      }
      paths.add(p);
    }
    if (paths.isEmpty()) {
      throw new UsageException(option + " names no file");
    }
    return paths;
  }
}
