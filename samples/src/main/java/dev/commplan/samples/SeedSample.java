package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.mpi.MpiBackend;
import dev.commplan.runtime.mpi.MpiCommunicator;
import java.io.OutputStream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * Runs the {@link Seed} plan on N ranks and prints, per collective, what each rank contributed, what the
 * collective should produce, what every rank got ({@code <collective> rank <r>: <values>  ok}), and a check
 * line; the command exits 1 where any result differs from the expected one.
 */
final class SeedSample {
  /** What the root broadcasts; the other ranks start with -1 so that a missed broadcast shows. */
  static final float[] ROOT_PARAMS = {3f, 1f, 4f, 1f, 5f};

  static final float OTHER_PARAMS = -1f;

  private SeedSample() {}

  /** What one rank saw after the plan ran. */
  record RankResult(float[] allReduce, float[] allGather, float[] reduceScatter, float[] broadcast) {}

  /** Runs the plan and prints the report; returns whether every result is the expected one. */
  static boolean run(String backend, int ranks, PrintStream out) {
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(SeedSample::runRank);
    }
    return printAll(results, backend, out);
  }

  /**
   * The seed sample as one rank of {@code MPI_COMM_WORLD} (this process, started by mpirun): every rank
   * runs the plan, the ranks' results are gathered with the backend's own all-gather, and rank 0 prints
   * them exactly as the other backends do; the other ranks print nothing. MPI is finalized at the end.
   *
   * @param ranks the rank count the user asked for with --ranks, or 0; it must match mpirun's
   * @return whether every rank's results are the expected ones (every rank knows: they all gather all)
   */
  static boolean runMpi(int ranks, PrintStream out) {
    try {
      List<RankResult> results;
      int rank;
      try (MpiCommunicator comm = MpiBackend.world()) {
        rank = comm.rank();
        if (ranks != 0 && ranks != comm.size()) {
          throw new CommPlanException("--ranks " + ranks + " but mpirun started " + comm.size()
              + " processes: with --backend mpi the rank count is mpirun's -np; drop --ranks or match it");
        }
        results = gather(comm, runRank(comm));
      }
      return printAll(results, "mpi", rank == 0 ? out : new PrintStream(OutputStream.nullOutputStream()));
    } finally {
      MpiBackend.finalizeMpi();
    }
  }

  /** Every rank's result, on every rank: one all-gather of the results packed as floats. */
  private static List<RankResult> gather(Communicator comm, RankResult mine) {
    int n = comm.size();
    int per = 1 + n + 1 + ROOT_PARAMS.length;
    float[] packed = new float[per];
    packed[0] = mine.allReduce()[0];
    System.arraycopy(mine.allGather(), 0, packed, 1, n);
    packed[1 + n] = mine.reduceScatter()[0];
    System.arraycopy(mine.broadcast(), 0, packed, 2 + n, ROOT_PARAMS.length);
    float[] all;
    try (F32Buffer send = F32Buffer.allocate(comm, per); F32Buffer recv = F32Buffer.allocate(comm, (long) n * per)) {
      send.copyFrom(packed);
      comm.allGather(send, recv, comm.stream());
      comm.stream().synchronize();
      all = recv.toArray();
    }
    List<RankResult> results = new ArrayList<>();
    for (int r = 0; r < n; r++) {
      int at = r * per;
      results.add(new RankResult(Arrays.copyOfRange(all, at, at + 1), Arrays.copyOfRange(all, at + 1, at + 1 + n),
          Arrays.copyOfRange(all, at + 1 + n, at + 2 + n), Arrays.copyOfRange(all, at + 2 + n, at + per)));
    }
    return results;
  }

  private static RankResult runRank(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    try (SeedPlan plan = SeedPlan.builder().build(comm)) {
      plan.total().set(0, totalInput(r));
      plan.mine().set(0, mineInput(r));
      plan.contributions().copyFrom(contributions(n));
      if (r == 0) {
        plan.params().copyFrom(ROOT_PARAMS);
      } else {
        plan.params().fill(OTHER_PARAMS);
      }

      plan.execute(comm.stream());
      // execute only enqueues, as NCCL does: the results are not there until the stream is synchronized.
      comm.stream().synchronize();

      return new RankResult(
          plan.total().toArray(), plan.gathered().toArray(), plan.slice().toArray(), plan.params().toArray());
    }
  }

  /**
   * Prints, per collective, what each rank contributed, what the collective should produce (computed here
   * from the inputs, without any communication), what every rank got, and a check line; returns whether
   * every result is as expected.
   */
  static boolean printAll(List<RankResult> results, String backend, PrintStream out) {
    int n = results.size();
    out.printf(Locale.ROOT, "seed: the Seed plan on %s, %s backend: four collectives in step 0, issued as one NCCL group%n",
        LossTable.ranks(n), backend);
    Check check = new Check();

    float sum = 0;
    for (int r = 0; r < n; r++) {
      sum += totalInput(r);
    }
    out.println("all-reduce SUM of 'total' (in place): rank r contributes r + 1: " + inputs(n, SeedSample::totalInput));
    out.println("  expected on every rank: " + values(new float[] {sum}) + ", the sum of the contributions");
    for (int r = 0; r < n; r++) {
      check.line(out, "all-reduce", r, new float[] {sum}, results.get(r).allReduce());
    }

    float[] gathered = new float[n];
    for (int r = 0; r < n; r++) {
      gathered[r] = mineInput(r);
    }
    out.println("all-gather of 'mine' into 'gathered': rank r contributes 10 * (r + 1): " + inputs(n, SeedSample::mineInput));
    out.println("  expected on every rank: " + values(gathered) + ", the contributions in rank order");
    for (int r = 0; r < n; r++) {
      check.line(out, "all-gather", r, gathered, results.get(r).allGather());
    }

    out.println("reduce-scatter SUM of 'contributions' into 'slice': every rank contributes " + values(contributions(n)));
    out.println("  expected on rank r: the sum over " + LossTable.ranks(n) + " of element r, " + n + " * (r + 1)");
    for (int r = 0; r < n; r++) {
      check.line(out, "reduce-scatter", r, new float[] {(float) n * contributions(n)[r]}, results.get(r).reduceScatter());
    }

    float[] others = new float[ROOT_PARAMS.length];
    Arrays.fill(others, OTHER_PARAMS);
    out.println("broadcast from rank 0 of 'params' (in place): rank 0 has " + values(ROOT_PARAMS)
        + (n > 1 ? ", the others " + values(others) : ""));
    out.println("  expected on every rank: " + values(ROOT_PARAMS) + ", rank 0's");
    for (int r = 0; r < n; r++) {
      check.line(out, "broadcast", r, ROOT_PARAMS, results.get(r).broadcast());
    }

    int total = 4 * n;
    if (check.wrong == 0) {
      out.printf(Locale.ROOT, "check: %d of %d results as expected (4 collectives x %s), max |diff| %.1e%n",
          total, total, LossTable.ranks(n), check.maxDiff);
    } else {
      out.printf(Locale.ROOT, "check: FAILED, %d of %d results differ from the expected values, max |diff| %.1e%n",
          check.wrong, total, check.maxDiff);
    }
    return check.wrong == 0;
  }

  /** Counts results that differ from the expected values; prints one line per rank and collective. */
  private static final class Check {
    int wrong;
    double maxDiff;

    void line(PrintStream out, String collective, int rank, float[] expected, float[] got) {
      double diff = 0;
      boolean ok = expected.length == got.length;
      for (int i = 0; ok && i < expected.length; i++) {
        diff = Math.max(diff, Math.abs((double) got[i] - expected[i]));
      }
      ok = ok && diff == 0;
      if (expected.length != got.length) {
        diff = Double.POSITIVE_INFINITY;
      }
      maxDiff = Math.max(maxDiff, diff);
      if (!ok) {
        wrong++;
      }
      out.println("  " + collective + " rank " + rank + ": " + values(got) + (ok ? "  ok" : "  WRONG, expected " + values(expected)));
    }
  }

  static float totalInput(int rank) {
    return rank + 1;
  }

  static float mineInput(int rank) {
    return 10f * (rank + 1);
  }

  /** What every rank reduce-scatters: 1, 2, ..., n. */
  static float[] contributions(int n) {
    float[] c = new float[n];
    for (int i = 0; i < n; i++) {
      c[i] = i + 1;
    }
    return c;
  }

  private static String inputs(int n, java.util.function.IntFunction<Float> input) {
    float[] v = new float[n];
    for (int r = 0; r < n; r++) {
      v[r] = input.apply(r);
    }
    return values(v);
  }

  /** {@code [1.0, 2.0, 3.0]}; past 12 values the middle is left out: {@code [1.0, 2.0, 3.0, 4.0, ..., 256.0] (256 values)}. */
  static String values(float[] v) {
    if (v.length <= 12) {
      return Arrays.toString(v);
    }
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < 4; i++) {
      b.append(v[i]).append(", ");
    }
    return b.append("..., ").append(v[v.length - 1]).append("] (").append(v.length).append(" values)").toString();
  }
}
