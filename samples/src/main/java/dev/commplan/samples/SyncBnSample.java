package dev.commplan.samples;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import java.io.PrintStream;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Random;

/**
 * Synchronized batch norm's statistics: each rank has a batch of a different size, drawn around a
 * different mean; {@link SyncBnStats} gathers every rank's (count, mean, variance), and each rank
 * combines them into the mean and variance of the whole batch, the same as computing them on all the
 * samples at once.
 */
final class SyncBnSample {
  static final int CHANNELS = 3;
  static final long SEED = 7L;

  private SyncBnSample() {}

  /** One rank's statistics: its own batch's, and the whole batch's as combined after the gather. */
  record RankResult(int count, float[] localMean, float[] localVar, float[] mean, float[] var) {}

  /** Mean and (biased, as batch norm uses) variance per channel. */
  record Moments(float[] mean, float[] var) {}

  static void run(String backend, int ranks, PrintStream out) {
    out.printf(Locale.ROOT, "syncbn: %s, %d channels, %s backend; rank r has 4 + 3r samples around mean r - c/2%n",
        LossTable.ranks(ranks), CHANNELS, backend);
    List<RankResult> results;
    try (Cluster cluster = Backends.cluster(backend, ranks)) {
      results = cluster.call(SyncBnSample::runRank);
    }
    for (int r = 0; r < ranks; r++) {
      RankResult result = results.get(r);
      out.printf(Locale.ROOT, "rank %d: %2d samples, local mean %s, local var %s%n",
          r, result.count(), format(result.localMean()), format(result.localVar()));
    }
    float[][] all = new float[0][];
    for (int r = 0; r < ranks; r++) {
      float[][] batch = batch(r);
      all = Arrays.copyOf(all, all.length + batch.length);
      System.arraycopy(batch, 0, all, all.length - batch.length, batch.length);
    }
    Moments single = moments(all);
    RankResult synced = results.get(0);
    out.printf(Locale.ROOT, "syncbn (every rank):  mean %s, var %s%n", format(synced.mean()), format(synced.var()));
    out.printf(Locale.ROOT, "one batch of all %2d:  mean %s, var %s%n", all.length, format(single.mean()), format(single.var()));
    out.printf(Locale.ROOT, "max |diff|: mean %.1e, var %.1e%n",
        LossTable.maxDiff(synced.mean(), single.mean()), LossTable.maxDiff(synced.var(), single.var()));
  }

  /** Rank {@code r}'s batch: 4 + 3r samples of CHANNELS values; channel c is drawn around r - c/2. */
  static float[][] batch(int r) {
    Random random = new Random(SEED + r);
    float[][] x = new float[4 + 3 * r][CHANNELS];
    for (float[] sample : x) {
      for (int c = 0; c < CHANNELS; c++) {
        sample[c] = (float) (r - 0.5 * c + (1 + 0.5 * r) * random.nextGaussian());
      }
    }
    return x;
  }

  /** One rank: its local moments, the gather, and the combination. */
  static RankResult runRank(Communicator comm) {
    float[][] x = batch(comm.rank());
    Moments local = moments(x);
    try (SyncBnStatsPlan plan = SyncBnStatsPlan.builder().channels(CHANNELS).build(comm)) {
      plan.count().set(0, x.length);
      float[] moments = Arrays.copyOf(local.mean(), 2 * CHANNELS);
      System.arraycopy(local.var(), 0, moments, CHANNELS, CHANNELS);
      plan.moments().copyFrom(moments);
      plan.execute(comm.stream());
      comm.stream().synchronize();
      Moments global = combine(plan.counts().toArray(), plan.allMoments().toArray());
      return new RankResult(x.length, local.mean(), local.var(), global.mean(), global.var());
    }
  }

  /** Per-channel mean and biased variance of {@code x}, computed in double. */
  static Moments moments(float[][] x) {
    float[] mean = new float[CHANNELS];
    float[] var = new float[CHANNELS];
    for (int c = 0; c < CHANNELS; c++) {
      double sum = 0;
      for (float[] sample : x) {
        sum += sample[c];
      }
      double m = sum / x.length;
      double squares = 0;
      for (float[] sample : x) {
        squares += (sample[c] - m) * (sample[c] - m);
      }
      mean[c] = (float) m;
      var[c] = (float) (squares / x.length);
    }
    return new Moments(mean, var);
  }

  /**
   * The whole batch's moments from each rank's count n_r, mean m_r and variance v_r, laid out as the
   * gather left them ({@code allMoments[r] = m_r ++ v_r}): mean = sum n_r m_r / n, variance = sum n_r
   * (v_r + (m_r - mean)^2) / n.
   */
  static Moments combine(float[] counts, float[] allMoments) {
    float[] mean = new float[CHANNELS];
    float[] var = new float[CHANNELS];
    for (int c = 0; c < CHANNELS; c++) {
      double n = 0;
      double sum = 0;
      for (int r = 0; r < counts.length; r++) {
        n += counts[r];
        sum += counts[r] * (double) allMoments[r * 2 * CHANNELS + c];
      }
      double m = sum / n;
      double spread = 0;
      for (int r = 0; r < counts.length; r++) {
        double dm = allMoments[r * 2 * CHANNELS + c] - m;
        spread += counts[r] * (allMoments[r * 2 * CHANNELS + CHANNELS + c] + dm * dm);
      }
      mean[c] = (float) m;
      var[c] = (float) (spread / n);
    }
    return new Moments(mean, var);
  }

  private static String format(float[] values) {
    StringBuilder b = new StringBuilder("[");
    for (int i = 0; i < values.length; i++) {
      b.append(i == 0 ? "" : ", ").append(String.format(Locale.ROOT, "%7.4f", values[i]));
    }
    return b.append(']').toString();
  }
}
