package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * A mixture-of-experts layer with expert parallelism: N experts, expert e on rank e. Each rank has
 * {@link #TOKENS} tokens; a router (the same on every rank) sends each token to one expert (top-1) with
 * a gate weight. {@link MoeExchange} step 0 dispatches the tokens to their experts with an all-to-all,
 * each rank's expert transforms the tokens it received, and step 1 sends the results back with a second
 * all-to-all; each rank combines them into its tokens' outputs, {@code y = x + gate * expert(x)}.
 *
 * <p>All-to-all slices are equal, so each rank sends at most {@code capacity} tokens to one expert
 * ({@link #capacity}): a token routed to an expert that already has {@code capacity} of this rank's tokens
 * is dropped, as in Switch Transformer, and its output is its input. The sample computes every rank's
 * outputs on one host (routing, capacity and experts, without any communication) and checks them.
 */
final class MoeSample {
  static final int TOKENS = 8;
  static final int HIDDEN = 4;
  /** capacity = ceil(CAPACITY_FACTOR * TOKENS / experts). */
  static final double CAPACITY_FACTOR = 1.25;
  static final long TOKEN_SEED = 100L;
  static final long ROUTER_SEED = 200L;
  static final long EXPERT_SEED = 300L;
  /** Outputs must agree this closely with the one-host computation. */
  static final double TOLERANCE = 1e-6;

  private MoeSample() {}

  /**
   * What one rank ends with: how many of its tokens each expert took, how many it dropped, how many tokens
   * its expert got from each rank, and its tokens' outputs ({@link #TOKENS} rows of {@link #HIDDEN}).
   */
  record RankResult(int[] sent, int dropped, int[] received, float[] outputs) {
    float[] pack() {
      int n = sent.length;
      float[] packed = new float[2 * n + 1 + outputs.length];
      System.arraycopy(MpiWorld.floats(sent), 0, packed, 0, n);
      packed[n] = dropped;
      System.arraycopy(MpiWorld.floats(received), 0, packed, n + 1, n);
      System.arraycopy(outputs, 0, packed, 2 * n + 1, outputs.length);
      return packed;
    }

    static RankResult unpack(float[] packed, int n) {
      return new RankResult(MpiWorld.ints(packed, 0, n), Math.round(packed[n]), MpiWorld.ints(packed, n + 1, 2 * n + 1),
          Arrays.copyOfRange(packed, 2 * n + 1, packed.length));
    }
  }

  /** Tokens each rank may send to one expert: the all-to-all slice's rows. */
  static int capacity(int experts) {
    return (int) Math.ceil(CAPACITY_FACTOR * TOKENS / experts);
  }

  static boolean run(String backend, int ranks, PrintStream out) {
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(MoeSample::runRank);
    }
    return printAll(results, backend, out);
  }

  /** The sample as one rank of {@code MPI_COMM_WORLD}: rank 0 prints the report. */
  static boolean runMpi(int ranks, PrintStream out) {
    MpiWorld.Gathered world = MpiWorld.run(ranks, comm -> runRank(comm).pack(), out);
    int n = world.results().size();
    List<RankResult> results = new ArrayList<>();
    for (float[] packed : world.results()) {
      results.add(RankResult.unpack(packed, n));
    }
    return printAll(results, "mpi", world.out());
  }

  /** Where a rank's tokens go: expert and gate per token, and the row in the expert's slice (-1: dropped). */
  record Routing(int[] expert, float[] gate, int[] row, int[] sent, int dropped) {}

  /** Routes {@code x} (TOKENS rows) to {@code experts} experts, filling each expert's slice in token order. */
  static Routing route(float[] x, int experts) {
    int capacity = capacity(experts);
    float[] router = router(experts);
    int[] expert = new int[TOKENS];
    float[] gate = new float[TOKENS];
    int[] row = new int[TOKENS];
    int[] sent = new int[experts];
    int dropped = 0;
    for (int t = 0; t < TOKENS; t++) {
      double[] p = gates(router, x, t, experts);
      int best = 0;
      for (int e = 1; e < experts; e++) {
        if (p[e] > p[best]) {
          best = e;
        }
      }
      expert[t] = best;
      gate[t] = (float) p[best];
      if (sent[best] < capacity) {
        row[t] = sent[best]++;
      } else {
        row[t] = -1;
        dropped++;
      }
    }
    return new Routing(expert, gate, row, sent, dropped);
  }

  /** One rank: route, dispatch (step 0), run this rank's expert, combine (step 1). */
  static RankResult runRank(Communicator comm) {
    int rank = comm.rank();
    int experts = comm.size();
    int capacity = capacity(experts);
    int slice = capacity * HIDDEN;
    Stream stream = comm.stream();
    float[] x = tokens(rank);
    Routing routing = route(x, experts);
    try (MoeExchangePlan moe = MoeExchangePlan.builder().capacity(capacity).hidden(HIDDEN).build(comm)) {
      // Dispatch: token t to row routing.row[t] of slice routing.expert[t]; unused rows stay 0 (padding).
      moe.dispatch().fill(0f);
      for (int t = 0; t < TOKENS; t++) {
        if (routing.row()[t] >= 0) {
          moe.dispatch().copyFrom((long) routing.expert()[t] * slice + (long) routing.row()[t] * HIDDEN, x, t * HIDDEN, HIDDEN);
        }
      }
      moe.dispatchCounts().copyFrom(routing.sent());
      moe.executeStep(0, stream);
      stream.synchronize();

      // This rank's expert, on the tokens each rank sent it (the first expertCounts[i] rows of slice i).
      int[] received = moe.expertCounts().toArray();
      float[] in = moe.expertIn().toArray();
      float[] expertOut = new float[in.length];
      for (int i = 0; i < experts; i++) {
        for (int k = 0; k < received[i]; k++) {
          int at = i * slice + k * HIDDEN;
          System.arraycopy(expert(rank, Arrays.copyOfRange(in, at, at + HIDDEN)), 0, expertOut, at, HIDDEN);
        }
      }
      moe.expertOut().copyFrom(expertOut);
      moe.executeStep(1, stream);
      stream.synchronize();

      // Combine: y = x + gate * expert(x) where the token went out, y = x where it was dropped.
      float[] combined = moe.combined().toArray();
      float[] y = x.clone();
      for (int t = 0; t < TOKENS; t++) {
        if (routing.row()[t] >= 0) {
          int at = routing.expert()[t] * slice + routing.row()[t] * HIDDEN;
          for (int h = 0; h < HIDDEN; h++) {
            y[t * HIDDEN + h] += routing.gate()[t] * combined[at + h];
          }
        }
      }
      return new RankResult(routing.sent(), routing.dropped(), received, y);
    }
  }

  /** Rank {@code rank}'s tokens: TOKENS rows of HIDDEN, Gaussian. */
  static float[] tokens(int rank) {
    Random random = new Random(TOKEN_SEED + rank);
    float[] x = new float[TOKENS * HIDDEN];
    for (int i = 0; i < x.length; i++) {
      x[i] = (float) random.nextGaussian();
    }
    return x;
  }

  /** The router's weights, {@code experts} rows of HIDDEN, the same on every rank. */
  static float[] router(int experts) {
    Random random = new Random(ROUTER_SEED);
    float[] g = new float[experts * HIDDEN];
    for (int i = 0; i < g.length; i++) {
      g[i] = (float) random.nextGaussian();
    }
    return g;
  }

  /** Softmax over the experts of the router's logits for token {@code t} of {@code x}. */
  static double[] gates(float[] router, float[] x, int t, int experts) {
    double[] logits = new double[experts];
    double max = Double.NEGATIVE_INFINITY;
    for (int e = 0; e < experts; e++) {
      for (int h = 0; h < HIDDEN; h++) {
        logits[e] += router[e * HIDDEN + h] * x[t * HIDDEN + h];
      }
      max = Math.max(max, logits[e]);
    }
    double sum = 0;
    for (int e = 0; e < experts; e++) {
      logits[e] = Math.exp(logits[e] - max);
      sum += logits[e];
    }
    for (int e = 0; e < experts; e++) {
      logits[e] /= sum;
    }
    return logits;
  }

  /** Expert {@code e}: one feed-forward layer, {@code tanh(W_e v + b_e)}, its weights drawn from its own seed. */
  static float[] expert(int e, float[] v) {
    Random random = new Random(EXPERT_SEED + e);
    float[] out = new float[HIDDEN];
    float[] w = new float[HIDDEN * HIDDEN];
    for (int i = 0; i < w.length; i++) {
      w[i] = (float) (random.nextGaussian() / Math.sqrt(HIDDEN));
    }
    for (int j = 0; j < HIDDEN; j++) {
      double z = 0.1 * (e + 1); // b_e
      for (int i = 0; i < HIDDEN; i++) {
        z += w[j * HIDDEN + i] * v[i];
      }
      out[j] = (float) Math.tanh(z);
    }
    return out;
  }

  /**
   * The reference: every rank's outputs computed on one host, token by token, with no slices and no
   * communication: each token's expert and gate from the router, kept if fewer than {@code capacity} of
   * the same rank's earlier tokens chose that expert, and then {@code x + gate * expert(x)}; else {@code x}.
   * Also how many tokens each rank sends each expert ({@code sent[rank][expert]}).
   */
  record Reference(float[][] outputs, int[][] sent, int dropped) {}

  static Reference reference(int ranks) {
    int capacity = capacity(ranks);
    float[] router = router(ranks);
    float[][] outputs = new float[ranks][];
    int[][] sent = new int[ranks][ranks];
    int dropped = 0;
    for (int r = 0; r < ranks; r++) {
      float[] x = tokens(r);
      float[] y = x.clone();
      for (int t = 0; t < TOKENS; t++) {
        double[] p = gates(router, x, t, ranks);
        int e = 0;
        for (int j = 1; j < ranks; j++) {
          e = p[j] > p[e] ? j : e;
        }
        if (sent[r][e] == capacity) {
          dropped++;
          continue;
        }
        sent[r][e]++;
        float[] f = expert(e, Arrays.copyOfRange(x, t * HIDDEN, (t + 1) * HIDDEN));
        for (int h = 0; h < HIDDEN; h++) {
          y[t * HIDDEN + h] += (float) p[e] * f[h];
        }
      }
      outputs[r] = y;
    }
    return new Reference(outputs, sent, dropped);
  }

  /**
   * Prints the routing, what each expert received, each rank's outputs against the one-host computation
   * and a check line; returns whether every count is exact and every output within {@link #TOLERANCE}.
   */
  static boolean printAll(List<RankResult> results, String backend, PrintStream out) {
    int n = results.size();
    int capacity = capacity(n);
    out.printf(Locale.ROOT, "moe: %d %s on %s (expert e on rank e), %s backend; %d tokens of width %d per rank,"
        + " top-1 routing%n", n, n == 1 ? "expert" : "experts", LossTable.ranks(n), backend, TOKENS, HIDDEN);
    out.printf(Locale.ROOT, "capacity: %d tokens per expert from each rank = ceil(%s x %d tokens / %d %s): all-to-all"
            + " slices are equal, so a token past its expert's capacity is dropped (its output is its input)%n",
        capacity, CAPACITY_FACTOR, TOKENS, n, n == 1 ? "expert" : "experts");
    Reference reference = reference(n);
    int wrong = 0;
    double worst = 0;
    int dropped = 0;
    for (int r = 0; r < n; r++) {
      RankResult result = results.get(r);
      dropped += result.dropped();
      boolean ok = Arrays.equals(result.sent(), reference.sent()[r]);
      wrong += ok ? 0 : 1;
      out.printf(Locale.ROOT, "rank %d: tokens to experts %s, %d dropped%s%n", r, Arrays.toString(result.sent()),
          result.dropped(), ok ? "" : "  WRONG, expected " + Arrays.toString(reference.sent()[r]));
    }
    for (int e = 0; e < n; e++) {
      int[] expected = new int[n];
      for (int r = 0; r < n; r++) {
        expected[r] = reference.sent()[r][e];
      }
      int[] got = results.get(e).received();
      boolean ok = Arrays.equals(expected, got);
      wrong += ok ? 0 : 1;
      out.printf(Locale.ROOT, "expert %d (rank %d): %2d tokens, from ranks %s%s%n", e, e, Arrays.stream(got).sum(),
          Arrays.toString(got), ok ? "" : "  WRONG, expected " + Arrays.toString(expected));
    }
    for (int r = 0; r < n; r++) {
      float[] got = results.get(r).outputs();
      double diff = got.length == reference.outputs()[r].length
          ? LossTable.maxDiff(got, reference.outputs()[r]) : Double.POSITIVE_INFINITY;
      boolean ok = diff <= TOLERANCE;
      wrong += ok ? 0 : 1;
      worst = Math.max(worst, diff);
      out.printf(Locale.ROOT, "rank %d: %d outputs combined, max |diff| vs one host %.1e  %s%n",
          r, TOKENS, diff, ok ? "ok" : "WRONG");
    }
    int checks = 3 * n;
    if (wrong == 0) {
      out.printf(Locale.ROOT, "check: PASS, all %d tokens as the one-host computation gives them (%d dropped),"
          + " %d of %d routing, load and output checks ok, max |diff| %.1e%n", n * TOKENS, dropped, checks, checks, worst);
    } else {
      out.printf(Locale.ROOT, "check: FAILED, %d of %d routing, load and output checks differ from the one-host"
          + " computation, max |diff| %.1e%n", wrong, checks, worst);
    }
    return wrong == 0;
  }
}
