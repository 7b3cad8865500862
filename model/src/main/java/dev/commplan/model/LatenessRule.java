package dev.commplan.model;

/**
 * How long a group waited for each of its ranks, from each rank's own wait: the one rule the doctor applies
 * to a run's flight records and the runtime applies online ({@code Communicator.lateness()}), so that both
 * name the same rank late (docs/doctor.md, "Lateness").
 *
 * <p>At a collective every rank waits until the last one arrives, so a rank's wait is the last arrival less
 * its own arrival, plus whatever all ranks share (moving the data). The difference of two ranks' waits is
 * the difference of their arrivals, in which the shared part cancels; so
 *
 * <pre>  late(r) = max(0, min over the other ranks p of (waited(p) - waited(r)))</pre>
 *
 * <p>is how long the group waited for rank r alone: the gap between r's arrival and the one before it when r
 * came last, 0 when it did not. No clock is compared across ranks: each wait is a duration on its own rank's
 * clock. Two ranks late together are both 0 (neither kept the group waiting alone); the ranks that waited
 * for them show the cost.
 *
 * <p>Both methods allocate nothing, so that the runtime can apply them on its hot paths.
 */
public final class LatenessRule {
  private LatenessRule() {}

  /**
   * Each rank's lateness at one collective: {@code late[r] = max(0, min over p != r of (waited[p] -
   * waited[r]))} for {@code r} in {@code [0, n)}. With one rank, 0.
   *
   * @param waited each rank's wait, in any one unit (nanoseconds), at one collective; the first {@code n}
   *     are read
   * @param n the number of ranks
   * @param late where each rank's lateness goes, in the same unit; the first {@code n} are written
   */
  public static void alone(long[] waited, int n, long[] late) {
    if (n == 1) {
      late[0] = 0;
      return;
    }
    // min over p != r of waited[p]: the smallest wait, or the second smallest for the rank that has it
    int smallestAt = 0;
    for (int r = 1; r < n; r++) {
      if (waited[r] < waited[smallestAt]) {
        smallestAt = r;
      }
    }
    long second = Long.MAX_VALUE;
    for (int r = 0; r < n; r++) {
      if (r != smallestAt && waited[r] < second) {
        second = waited[r];
      }
    }
    for (int r = 0; r < n; r++) {
      long othersSmallest = r == smallestAt ? second : waited[smallestAt];
      late[r] = Math.max(0, othersSmallest - waited[r]);
    }
  }

  /**
   * The median of the first {@code n} of {@code sorted} values (ascending): the middle one, or the mean of
   * the middle two for an even {@code n}, rounded down.
   *
   * @param sorted values in ascending order
   * @param n how many of them count, at least 1
   * @return their median
   */
  public static long median(long[] sorted, int n) {
    if (n < 1) {
      throw new IllegalArgumentException("the median of no values");
    }
    return n % 2 == 1 ? sorted[n / 2] : Math.floorDiv(sorted[n / 2 - 1] + sorted[n / 2], 2);
  }
}
