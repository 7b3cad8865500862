package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.bench.Args.UsageException;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DataType;
import java.io.PrintStream;
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
                       out of place and in place (same formulas as NVIDIA/nccl-tests doc/PERFORMANCE.md)
          --backend local|nccl   (default local)
          --ranks N              (default: 2 on local, 1 on nccl)
          --coll LIST            all (default) or all-reduce,all-gather,reduce-scatter,broadcast
          --min SIZE --max SIZE  first and last size in bytes, e.g. 8, 64K, 64M, 1G (default 8 .. 1G)
          --factor F             size step factor (default 2)
          --iters N --warmup N   timed and warm-up iterations (default 20, 5: nccl-tests' defaults)
          --check N              checked runs per size, 0 for none (default 1)
          --type T --op OP       float (default), half, bfloat16, double, int8, ...; sum (default), prod, max, min, avg
          --root R               Broadcast's root (default 0)
          --csv FILE             also write the rows as CSV
          --quiet                no progress lines on stderr
        many           the many-buffers case: K buffers as K separate calls, one group of K calls, one plan,
                       and one flat call over the same bytes (time per step, median of iterations)
          --buffers K --count S  K buffers of S elements (default 200 x 256)
          --model gpt2           instead: GPT-2 small's 148 gradient tensors (124,439,808 parameters)
          --in-place             all-reduce in place (default: out of place)
          --plan auto|generated|builder   where the plan comes from (default auto: the generated class
                                 where the case has one, else PlanBuilder)
          --backend, --ranks, --type, --op, --iters (default 50), --warmup (default 5), --csv as above
        local-target   AllReduce busbw at 64 MiB on 2 and 4 local ranks against a memcpy of the same size
          --size SIZE --ranks LIST (default 64M, 2,4) --iters N --warmup N --type T
        plot           SVG plots from CSV files written by sweep and many
          --sweep FILES          comma-separated sweep CSVs: bandwidth against size, one line per series
          --metric busbw|algbw   which bandwidth (default busbw; one rank's busbw is 0, use algbw)
          --placement out|in|both  which columns (default both)
          --name FILE            the sweep plot's file name (default METRIC.svg)
          --many FILES           comma-separated many CSVs: the ratios separate/plan, group/plan, plan/flat
          --out DIR              where to write the plots, many-buffers.svg for --many (default .)
        jmh [JMH options]        the JMH benchmarks of execute()'s host cost (e.g. -prof gc); the NCCL one
                                 is skipped, with the reason, where NCCL cannot run
      """;

  private BenchMain() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command line; returns the exit status (0 ok, 1 failure, 2 usage). */
  static int run(String[] argv, PrintStream out, PrintStream err) {
    if (argv.length == 0 || argv[0].equals("-h") || argv[0].equals("--help") || argv[0].equals("help")) {
      (argv.length == 0 ? err : out).print(USAGE);
      return argv.length == 0 ? 2 : 0;
    }
    String command = argv[0];
    List<String> rest = Arrays.asList(argv).subList(1, argv.length);
    try {
      switch (command) {
        case "sweep" -> sweep(Args.parse(rest, Set.of("quiet")), out, err);
        case "many" -> many(Args.parse(rest, Set.of("in-place")), out);
        case "local-target" -> localTarget(Args.parse(rest, Set.of()), out, err);
        case "plot" -> plot(Args.parse(rest, Set.of()), out);
        case "jmh" -> {
          return Jmh.run(rest.toArray(String[]::new), out, err);
        }
        default -> throw new UsageException("unknown command '" + command + "'");
      }
      return 0;
    } catch (UsageException e) {
      err.println("error: " + e.getMessage());
      err.print(USAGE);
      return 2;
    } catch (CommPlanException e) {
      err.println("error: " + e.getMessage());
      for (Throwable c = e.getCause(); c != null; c = c.getCause()) {
        err.println("  caused by: " + c);
      }
      return 1;
    }
  }

  private static int defaultRanks(String backend) {
    return backend.equals("nccl") ? 1 : 2;
  }

  private static void sweep(Args a, PrintStream out, PrintStream err) {
    String backend = a.backend();
    int ranks = a.integer("ranks", defaultRanks(backend), 1);
    List<Coll> colls = Coll.parseList(a.string("coll", "all"));
    DataType type = a.dataType("float");
    ReduceOp op = a.op("sum");
    int root = a.integer("root", 0, 0);
    long min = a.size("min", "8");
    long max = a.size("max", "1G");
    int factor = a.integer("factor", 2, 2);
    int iters = a.integer("iters", 20, 1);
    int warmup = a.integer("warmup", 5, 0);
    int check = a.integer("check", 1, 0);
    String csvPath = a.string("csv", null);
    boolean quiet = a.flag("quiet");
    a.finish();
    if (min > max) {
      throw new UsageException("--min (" + min + ") is larger than --max (" + max + ")");
    }
    if (root >= ranks) {
      throw new UsageException("--root " + root + " is not a rank of " + ranks);
    }
    try (Csv csv = Csv.openOrNull(csvPath)) {
      Sweep.run(new Sweep.Config(backend, ranks, colls, type, op, root, min, max, factor, iters, warmup, check, quiet),
          out, err, csv);
    }
  }

  private static void many(Args a, PrintStream out) {
    String backend = a.backend();
    int ranks = a.integer("ranks", defaultRanks(backend), 1);
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
    int warmup = a.integer("warmup", 5, 0);
    ManyBuffers.PlanSource source = switch (a.string("plan", "auto")) {
      case "auto" -> ManyBuffers.PlanSource.AUTO;
      case "generated" -> ManyBuffers.PlanSource.GENERATED;
      case "builder" -> ManyBuffers.PlanSource.BUILDER;
      default -> throw new UsageException("--plan is auto, generated or builder");
    };
    String csvPath = a.string("csv", null);
    a.finish();
    try (Csv csv = Csv.openOrNull(csvPath)) {
      ManyBuffers.run(new ManyBuffers.Config(backend, ranks, theCase, type, op, inPlace, iters, warmup, source), out, csv);
    }
  }

  private static void localTarget(Args a, PrintStream out, PrintStream err) {
    long size = a.size("size", "64M");
    List<Integer> ranks = a.integers("ranks", "2,4", 2);
    int iters = a.integer("iters", 20, 1);
    int warmup = a.integer("warmup", 5, 0);
    DataType type = a.dataType("float");
    a.finish();
    LocalTarget.run(size, ranks, type, iters, warmup, out, err);
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
    if (sweep != null) {
      Set<String> placements = switch (placement) {
        case "both" -> Set.of("out", "in");
        case "out", "in" -> Set.of(placement);
        default -> throw new UsageException("--placement must be out, in or both, not " + placement);
      };
      Path file = dir.resolve(name != null ? name : metric + ".svg");
      SvgPlot.bandwidth(paths(sweep), file, metric, placements);
      out.println("wrote " + file);
    }
    if (many != null) {
      Path file = dir.resolve("many-buffers.svg");
      SvgPlot.manyBuffers(paths(many), file);
      out.println("wrote " + file);
    }
  }

  private static List<Path> paths(String list) {
    return Arrays.stream(list.split(",")).map(String::trim).map(Path::of).toList();
  }
}
