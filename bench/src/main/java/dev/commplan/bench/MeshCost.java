package dev.commplan.bench;

import dev.commplan.bench.Args.UsageException;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Mesh;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * What building a mesh costs: {@code Mesh.builder(world)...build()} (the agreement check, one all-gather over
 * the world, then one {@code split} per axis) and its {@code close()}, per mesh, in the steady state. The
 * timed unit is one build and its close; units run until the time per unit is steady ({@link SteadyState}:
 * the warm-up, reported), then {@code reps} are timed (each averaged over ranks) and their median is the
 * total; build and close are each rank's median of its timed units, averaged over ranks. {@code first} is
 * the first build on that world, cold: what a job pays once.
 *
 * <p>On {@code local} and {@code nccl} each mesh gets a cluster of its ranks (threads of this JVM); on
 * {@code mpi} the world is this process's {@code MPI_COMM_WORLD} under mpirun, and every mesh has its size.
 */
final class MeshCost {
  /** The meshes of the local backend by default: 2, 4 and 8 ranks, two and three axes. */
  static final String LOCAL_MESHES = "1x2,1x1x2,2x2,1x2x2,2x4,2x2x2";

  static final String CSV_HEADER = "backend,ranks,mesh,axes,first_build_us,build_us,close_us,total_us,min_us,units,"
      + "warmup_builds,warmup_ms,warmup_end";

  /** One mesh's figures (µs), agreed over ranks; {@code refused} is the backend's refusal, else null. */
  record Row(String backend, MeshSpec mesh, double firstBuildUs, double buildUs, double closeUs, double totalUs,
      double minUs, int units, SteadyState.WarmUp warmup, String refused) {}

  record Config(String backend, List<MeshSpec> meshes, int reps, SteadyState.Rule warmup, double measureMaxS,
      double timeLimitS, boolean quiet) {}

  private MeshCost() {}

  /** {@code mesh-cost [options]}: parses (every mistake a {@link UsageException}, before any work), then runs. */
  static List<Row> command(Args a, PrintStream out, PrintStream err) {
    String backend = a.string("backend", "local").toLowerCase(Locale.ROOT);
    if (!List.of("local", "nccl", "mpi").contains(backend)) {
      throw new UsageException("--backend is local, nccl or mpi, not '" + backend + "'");
    }
    String named = a.string("mesh", null);
    String shapes = a.string("meshes", null);
    String ranksText = a.string("ranks", null);
    int reps = a.integer("reps", 50, 1);
    SteadyState.Rule warmup = a.warmUp();
    double measureMax = a.decimal("measure-max", 10, 0);
    double timeLimit = a.decimal("time-limit", 0, 0);
    String csvPath = a.string("csv", null);
    boolean quiet = a.flag("quiet");
    a.finish();
    if (named != null && shapes != null) {
      throw new UsageException("give --mesh (one mesh with named axes) or --meshes (a list of shapes), not both");
    }
    List<MeshSpec> meshes = new ArrayList<>();
    if (named != null) {
      meshes.add(MeshSpec.parse("--mesh", named));
    } else if (shapes != null) {
      for (String shape : shapes.split(",")) {
        meshes.add(MeshSpec.parseShape("--meshes", shape));
      }
    }
    if (backend.equals("mpi")) {
      if (ranksText != null) {
        throw new UsageException("--ranks: with --backend mpi the ranks are mpirun's -np; leave --ranks out");
      }
    } else if (meshes.isEmpty()) {
      int ranks = ranksText == null ? (backend.equals("nccl") ? 1 : 0) : positive(ranksText);
      meshes = ranks == 0 ? shapes(LOCAL_MESHES) : defaults(ranks);
    } else if (ranksText != null) {
      throw new UsageException("--ranks goes without --mesh/--meshes: each mesh's ranks are the product of its sizes");
    }
    for (MeshSpec m : meshes) {
      if (backend.equals("local") && m.ranks() > BenchMain.MAX_LOCAL_RANKS) {
        throw new UsageException("mesh " + m.describe() + " has " + m.ranks() + " ranks; the local backend runs at most "
            + BenchMain.MAX_LOCAL_RANKS);
      }
    }
    Config config = new Config(backend, meshes, reps, warmup, measureMax, timeLimit, quiet);
    try (Csv csv = BenchMain.openCsv(csvPath)) {
      return run(config, out, err, csv);
    }
  }

  private static int positive(String text) {
    try {
      int n = Integer.parseInt(text);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // below
    }
    throw new UsageException("--ranks takes a whole number of at least 1, not '" + text + "'");
  }

  private static List<MeshSpec> shapes(String list) {
    return Arrays.stream(list.split(",")).map(s -> MeshSpec.parseShape("--meshes", s)).toList();
  }

  /** A 2-D and a 3-D mesh of {@code ranks}, as square as its divisors allow (8: 2x4, 2x2x2; 1: 1x1, 1x1x1). */
  static List<MeshSpec> defaults(int ranks) {
    int a = largestDivisorAtMost(ranks, (int) Math.floor(Math.sqrt(ranks)));
    int p = largestDivisorAtMost(ranks, (int) Math.floor(Math.cbrt(ranks) + 1e-9));
    int rest = ranks / p;
    int d = largestDivisorAtMost(rest, (int) Math.floor(Math.sqrt(rest)));
    return List.of(MeshSpec.parseShape("--ranks", a + "x" + ranks / a),
        MeshSpec.parseShape("--ranks", p + "x" + d + "x" + rest / d));
  }

  private static int largestDivisorAtMost(int n, int limit) {
    for (int d = Math.max(1, limit); d > 1; d--) {
      if (n % d == 0) {
        return d;
      }
    }
    return 1;
  }

  /** Runs every mesh, printing each row when it is done; rethrows the first refusal after the last mesh. */
  static List<Row> run(Config config, PrintStream out, PrintStream progress, Csv csv) {
    if (csv != null) {
      csv.header(CSV_HEADER);
    }
    MeshCostOutput output = new MeshCostOutput(config, out);
    List<Row> rows;
    if (config.backend().equals("mpi")) {
      rows = runProcesses(config, output, csv);
    } else {
      rows = new ArrayList<>();
      long started = System.nanoTime();
      output.header();
      for (MeshSpec mesh : config.meshes()) {
        if (config.timeLimitS() > 0 && !rows.isEmpty() && (System.nanoTime() - started) / 1e9 > config.timeLimitS()) {
          output.stopped(mesh, rows.size());
          break;
        }
        RankSync sync = new RankSync(mesh.ranks());
        List<Row> perRank;
        try (Cluster cluster = Backends.cluster(config.backend(), mesh.ranks())) {
          perRank = cluster.call(world -> {
            try {
              return measure(config, mesh, world, sync.consensus(world.rank()));
            } catch (Throwable t) {
              sync.fail();
              throw t;
            }
          });
        }
        Row row = perRank.get(0);
        rows.add(row);
        output.row(row, csv);
        if (!config.quiet() && progress != null && (System.nanoTime() - started) / 1e9 > 2) {
          progress.printf(Locale.ROOT, "# progress: %s done (%d/%d), %.1f s%n", mesh.describe(), rows.size(),
              config.meshes().size(), (System.nanoTime() - started) / 1e9);
        }
      }
    }
    for (Row r : rows) {
      if (r.refused() != null) {
        throw new MeshSpec.SplitRefused(r.refused());
      }
    }
    return rows;
  }

  /** One rank per process (mpirun): every mesh on this process's world; rank 0 prints. */
  private static List<Row> runProcesses(Config config, MeshCostOutput output, Csv csv) {
    List<Row> rows = new ArrayList<>();
    try (Communicator world = Backends.processCommunicator(config.backend())) {
      List<MeshSpec> meshes = config.meshes().isEmpty() ? defaults(world.size()) : config.meshes();
      for (MeshSpec mesh : meshes) {
        if (mesh.ranks() != world.size()) {
          throw new UsageException("mesh " + mesh.describe() + " has " + mesh.ranks() + " ranks but mpirun started "
              + world.size() + " processes: give meshes of " + world.size() + " ranks, or leave --meshes out");
        }
      }
      boolean printing = world.rank() == 0;
      if (printing) {
        output.header();
      }
      SteadyState.Consensus consensus = CollectiveConsensus.of(world);
      long started = System.nanoTime();
      for (MeshSpec mesh : meshes) {
        double elapsed = consensus.average(new double[] {(System.nanoTime() - started) / 1e9})[0];
        if (config.timeLimitS() > 0 && !rows.isEmpty() && elapsed > config.timeLimitS()) {
          if (printing) {
            output.stopped(mesh, rows.size());
          }
          break;
        }
        Row row = measure(config, mesh, world, consensus);
        rows.add(row);
        if (printing) {
          output.row(row, csv);
        }
      }
    }
    return rows;
  }

  /** One mesh on this rank's {@code world}: the warm-up, the timed builds, the agreed figures. */
  static Row measure(Config config, MeshSpec spec, Communicator world, SteadyState.Consensus consensus) {
    long[] build = new long[config.reps()];
    long[] close = new long[config.reps()];
    int[] recorded = {0};
    boolean[] recording = {false};
    long[] first = {-1};
    SteadyState.Unit unit = () -> {
      long t0 = System.nanoTime();
      Mesh mesh = spec.build(world);
      long t1 = System.nanoTime();
      mesh.close();
      long t2 = System.nanoTime();
      if (first[0] < 0) {
        first[0] = t1 - t0;
      }
      if (recording[0] && recorded[0] < build.length) {
        build[recorded[0]] = t1 - t0;
        close[recorded[0]] = t2 - t1;
        recorded[0]++;
      }
    };
    SteadyState steady = new SteadyState(consensus);
    SteadyState.WarmUp warm;
    try {
      warm = steady.warmUp(config.warmup(), 1, unit);
    } catch (MeshSpec.SplitRefused refused) {
      return new Row(world.backendName(), spec, Double.NaN, Double.NaN, Double.NaN, Double.NaN, Double.NaN, 0, null,
          refused.getMessage());
    }
    recording[0] = true;
    SteadyState.Samples timed = steady.measure(1, config.reps(), (long) (config.measureMaxS() * 1e9), unit);
    int n = recorded[0];
    double[] agreed = consensus.average(new double[] {median(build, n), median(close, n), first[0]});
    return new Row(world.backendName(), spec, agreed[2] / 1e3, agreed[0] / 1e3, agreed[1] / 1e3, timed.median() / 1e3,
        timed.min() / 1e3, timed.count(), warm, null);
  }

  private static double median(long[] values, int n) {
    long[] sorted = Arrays.copyOf(values, n);
    Arrays.sort(sorted);
    return n == 0 ? Double.NaN : n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
  }
}
