package dev.commplan.runtime.agreement;

import dev.commplan.model.LatenessRule;
import dev.commplan.runtime.Lateness;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

/**
 * Which ranks a communicator waits for, while the job runs (docs/reliability.md, "Lateness online"): the
 * doctor's lateness rule ({@link LatenessRule}) applied to the agreement check's windows. Each window check
 * carries, beside its header, this rank's count of timed collectives and the sum of its waits in them, both
 * since the communicator was made ({@link WindowCheck}); every rank reads every rank's. Per window, each rank's
 * mean wait per collective since the last window counted is compared with the others' by the rule, and each
 * rank's figure kept, for the last {@value #KEPT} windows. Every rank reads the same gathered figures, so every
 * rank keeps the same.
 *
 * <p>Means rather than sums: each rank reads its own waits when it enqueues the check, and a rank whose last
 * collectives have not finished yet has timed fewer of them; its mean is over those it has. A window in which a
 * rank timed none (its waits not yet known, or a backend that cannot time them) is not counted: its collectives
 * count in the next one.
 *
 * <p>{@link #window} allocates nothing (it runs in the synchronize that reads a check); {@link #snapshot}
 * allocates, for the caller of {@code Communicator.lateness()}. Thread-safe.
 */
final class LatenessWindows {
  /** How many windows are kept per rank. */
  static final int KEPT = 64;

  private final int ranks;
  private final long[] lastCount;
  private final long[] lastSum;
  private final long[] mean;
  private final long[] late;
  private final long[][] kept;
  private int windows;

  LatenessWindows(int ranks) {
    this.ranks = ranks;
    lastCount = new long[ranks];
    lastSum = new long[ranks];
    mean = new long[ranks];
    late = new long[ranks];
    kept = new long[ranks][KEPT];
  }

  /**
   * One window: {@code gathered} holds every rank's header, {@code stride} longs each, whose longs {@code at} and
   * {@code at + 1} are that rank's count of timed collectives and the sum of its waits, since the communicator
   * was made.
   */
  synchronized void window(long[] gathered, int stride, int at) {
    for (int r = 0; r < ranks; r++) {
      long count = gathered[r * stride + at] - lastCount[r];
      long sum = gathered[r * stride + at + 1] - lastSum[r];
      if (count <= 0 || sum < 0) {
        return; // a rank timed none since the last window counted: they count in the next
      }
      mean[r] = sum / count;
    }
    for (int r = 0; r < ranks; r++) {
      lastCount[r] = gathered[r * stride + at];
      lastSum[r] = gathered[r * stride + at + 1];
    }
    LatenessRule.alone(mean, ranks, late);
    int slot = windows % KEPT;
    for (int r = 0; r < ranks; r++) {
      kept[r][slot] = late[r];
    }
    windows++;
  }

  /** Every rank's figures, slowest first (median, then worst, then rank); empty before the first window. */
  synchronized List<Lateness> snapshot() {
    int n = Math.min(windows, KEPT);
    if (n == 0 || ranks < 2) {
      return List.of();
    }
    List<Lateness> out = new ArrayList<>(ranks);
    long[] values = new long[n];
    for (int r = 0; r < ranks; r++) {
      System.arraycopy(kept[r], 0, values, 0, n);
      Arrays.sort(values);
      out.add(new Lateness(r, n, LatenessRule.median(values, n), values[n - 1]));
    }
    out.sort(Comparator.comparingLong(Lateness::medianNanos).reversed()
        .thenComparing(Comparator.comparingLong(Lateness::worstNanos).reversed())
        .thenComparingInt(Lateness::rank));
    return List.copyOf(out);
  }
}
