package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;

/**
 * Runs the {@link Seed} plan on N ranks and prints, per collective and rank, exactly
 * {@code <collective> rank <r>: <values>}.
 */
final class SeedSample {
  /** What the root broadcasts; the other ranks start with -1 so that a missed broadcast shows. */
  static final float[] ROOT_PARAMS = {3f, 1f, 4f, 1f, 5f};

  private SeedSample() {}

  /** What one rank saw after the plan ran. */
  record RankResult(float[] allReduce, float[] allGather, float[] reduceScatter, float[] broadcast) {}

  static void run(String backend, int ranks, PrintStream out) {
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(SeedSample::runRank);
    }
    printAll(results, out);
  }

  private static RankResult runRank(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    try (SeedPlan plan = SeedPlan.builder().build(comm)) {
      plan.total().set(0, r + 1);
      plan.mine().set(0, 10f * (r + 1));
      float[] contributions = new float[n];
      for (int i = 0; i < n; i++) {
        contributions[i] = i + 1;
      }
      plan.contributions().copyFrom(contributions);
      if (r == 0) {
        plan.params().copyFrom(ROOT_PARAMS);
      } else {
        plan.params().fill(-1f);
      }

      plan.execute(comm.stream());
      // execute only enqueues, as NCCL does: the results are not there until the stream is synchronized.
      comm.stream().synchronize();

      return new RankResult(
          plan.total().toArray(), plan.gathered().toArray(), plan.slice().toArray(), plan.params().toArray());
    }
  }

  private static void printAll(List<RankResult> results, PrintStream out) {
    for (int r = 0; r < results.size(); r++) {
      out.println("all-reduce rank " + r + ": " + Arrays.toString(results.get(r).allReduce()));
    }
    for (int r = 0; r < results.size(); r++) {
      out.println("all-gather rank " + r + ": " + Arrays.toString(results.get(r).allGather()));
    }
    for (int r = 0; r < results.size(); r++) {
      out.println("reduce-scatter rank " + r + ": " + Arrays.toString(results.get(r).reduceScatter()));
    }
    for (int r = 0; r < results.size(); r++) {
      out.println("broadcast rank " + r + ": " + Arrays.toString(results.get(r).broadcast()));
    }
  }
}
