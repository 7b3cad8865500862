package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.timing.SteadyState;
import java.util.Arrays;
import java.util.List;

/**
 * Not a test: the build-time cost of the fingerprint check on the local backend. For 1 and 4 ranks and a
 * small plan (4 collectives) and the 200-buffer plan (200 in-place F32[256] all-reduces), the median of
 * {@code rounds} builds, with and without the check, interleaved, after {@link SteadyState}'s warm-up
 * ({@code auto}, the default; or a number of rounds) of the same pairs of builds. A build is timed on each
 * rank; a round's time is the slowest rank's.
 *
 * <pre>java -cp runtime/target/classes:runtime/target/test-classes:ANNOTATIONS_JAR \
 *     dev.commplan.runtime.plan.FingerprintCostProbe 300 auto</pre>
 */
public final class FingerprintCostProbe {
  private FingerprintCostProbe() {}

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 300;
    SteadyState.Rule warmup = args.length > 1 && !args[1].equals("auto")
        ? SteadyState.Rule.fixed(Long.parseLong(args[1])) : SteadyState.Rule.DEFAULT;
    System.out.println("# " + warmup.describe("pair of rounds, without and with the check", "pair"));
    System.out.printf("%-6s %-10s %14s %14s %12s  %s%n", "ranks", "plan", "without (us)", "with (us)", "cost (us)",
        "warm-up");
    for (int ranks : new int[] {1, 4}) {
      try (LocalCluster cluster = new LocalCluster(ranks)) {
        for (String plan : List.of("small", "200x256")) {
          long[] without = new long[rounds];
          long[] with = new long[rounds];
          SteadyState.WarmUp warm = new SteadyState(SteadyState.Consensus.ALONE).warmUp(warmup, 1, () -> {
            round(cluster, plan, false);
            round(cluster, plan, true);
          });
          for (int i = 0; i < rounds; i++) {
            without[i] = round(cluster, plan, false);
            with[i] = round(cluster, plan, true);
          }
          double w0 = median(without) / 1e3;
          double w1 = median(with) / 1e3;
          System.out.printf("%-6d %-10s %14.1f %14.1f %12.1f  %s%n", ranks, plan, w0, w1, w1 - w0,
              warm.summary("pairs"));
        }
      }
    }
  }

  private static long round(LocalCluster cluster, String plan, boolean check) {
    return cluster.call(comm -> {
      long t0 = System.nanoTime();
      PlanBuilder b = new PlanBuilder("probe." + plan, comm, 0).fingerprintCheck(check);
      declare(b, plan, comm);
      b.build().close();
      return System.nanoTime() - t0;
    }).stream().mapToLong(Long::longValue).max().orElseThrow();
  }

  private static void declare(PlanBuilder b, String plan, Communicator comm) {
    if (plan.equals("small")) {
      int w = b.buffer("w", DataType.F32, 4096, "{\"4\", \"hidden\"}", null);
      int part = b.buffer("part", DataType.F32, 1024, "{\"hidden\"}", null);
      int all = b.buffer("all", DataType.F32, 1024L * comm.size(), "{\"ranks\", \"hidden\"}", null);
      int seed = b.buffer("seed", DataType.I64, 8, "{\"8\"}", null);
      b.allReduce(0, w, w, ReduceOp.AVG);
      b.broadcast(0, seed, seed, 0);
      b.allGather(1, part, all);
      b.reduceScatter(2, all, part, ReduceOp.SUM);
    } else {
      for (int i = 0; i < 200; i++) {
        int h = b.buffer("g" + i, DataType.F32, 256, "{\"256\"}", null);
        b.allReduce(0, h, h, ReduceOp.SUM);
      }
    }
  }

  private static double median(long[] values) {
    long[] v = values.clone();
    Arrays.sort(v);
    return v.length % 2 == 1 ? v[v.length / 2] : (v[v.length / 2 - 1] + v[v.length / 2]) / 2.0;
  }
}
