package dev.commplan.model;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.Random;
import org.junit.jupiter.api.Test;

class LatenessRuleTest {
  private static long[] alone(long... waited) {
    long[] late = new long[waited.length];
    LatenessRule.alone(waited, waited.length, late);
    return late;
  }

  /** Arrivals at 0, 6 and 10 (waits 10, 4, 0 plus what all share): the last kept the others waiting 4 alone. */
  @Test
  void theLastArrivalIsLateByTheGapToTheOneBeforeIt() {
    for (long shared : new long[] {0, 3, 1_000}) {
      assertArrayEquals(new long[] {0, 0, 4}, alone(10 + shared, 4 + shared, shared));
    }
  }

  @Test
  void twoLateRanksTogetherAreNotLateAlone() {
    assertArrayEquals(new long[] {0, 0, 0}, alone(10, 0, 0));
  }

  @Test
  void oneRankIsNeverLateAndTwoAreTheirDifference() {
    assertArrayEquals(new long[] {0}, alone(7));
    assertArrayEquals(new long[] {0, 5}, alone(5, 0));
  }

  /** The two-pass form is the rule as written: the smallest difference to every other rank. */
  @Test
  void agreesWithTheRuleAsWrittenOnRandomWaits() {
    Random random = new Random(43);
    for (int trial = 0; trial < 2_000; trial++) {
      int n = 1 + random.nextInt(9);
      long[] waited = new long[n];
      for (int r = 0; r < n; r++) {
        waited[r] = random.nextInt(4) == 0 ? 17 : random.nextInt(100);
      }
      long[] late = alone(waited);
      for (int r = 0; r < n; r++) {
        long min = n == 1 ? 0 : Long.MAX_VALUE;
        for (int p = 0; p < n; p++) {
          if (p != r) {
            min = Math.min(min, waited[p] - waited[r]);
          }
        }
        assertEquals(Math.max(0, min), late[r], "rank " + r);
      }
    }
  }

  @Test
  void medianOfOddAndEvenCounts() {
    assertEquals(5, LatenessRule.median(new long[] {1, 5, 30}, 3));
    assertEquals(3, LatenessRule.median(new long[] {0, 1, 5, 30}, 4));
    assertEquals(1, LatenessRule.median(new long[] {1, 99}, 1), "only the first n count");
    assertThrows(IllegalArgumentException.class, () -> LatenessRule.median(new long[0], 0));
  }
}
