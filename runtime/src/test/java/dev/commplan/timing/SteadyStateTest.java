package dev.commplan.timing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.timing.SteadyState.Consensus;
import dev.commplan.timing.SteadyState.Ending;
import dev.commplan.timing.SteadyState.Rule;
import dev.commplan.timing.SteadyState.Samples;
import dev.commplan.timing.SteadyState.WarmUp;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.TimeUnit;
import java.util.function.LongUnaryOperator;
import org.junit.jupiter.api.Test;

/** The warm-up rule on a fake clock: a call whose cost the test chooses, a JIT whose compile time it chooses. */
class SteadyStateTest {
  /**
   * A fake machine: each call advances the clock by {@code costOfCall(callsSoFar)} ns; the JIT's compile time
   * is {@code jit(callsSoFar)} ms.
   */
  static final class Fake {
    long now = 1_000_000_000L;
    long calls;
    final LongUnaryOperator costOfCall;
    final LongUnaryOperator jit;

    Fake(LongUnaryOperator costOfCall, LongUnaryOperator jit) {
      this.costOfCall = costOfCall;
      this.jit = jit;
    }

    SteadyState steadyState(Consensus consensus) {
      return new SteadyState(() -> now, () -> jit.applyAsLong(calls), consensus);
    }

    SteadyState.Unit unitOf(int n) {
      return () -> {
        for (int i = 0; i < n; i++) {
          now += costOfCall.applyAsLong(calls++);
        }
      };
    }
  }

  /** 100 µs a call for 1,000 calls, then faster and faster down to 1 µs at call 5,000, then 1 µs. */
  static long jitWarmsUp(long call) {
    if (call < 1000) {
      return 100_000;
    }
    if (call < 5000) {
      return 100_000 - (call - 1000) * 99_000 / 4000;
    }
    return 1000;
  }

  @Test
  void aCallThatGetsFasterThenStaysEndsStableOnceTwoWindowsAgree() {
    // the JIT compiles (1 ms per 100 calls) until call 3,000, as the time per call still falls
    Fake fake = new Fake(SteadyStateTest::jitWarmsUp, c -> Math.min(c, 3000) / 100);
    SteadyState s = fake.steadyState(Consensus.ALONE);
    long start = fake.now;
    WarmUp w = s.warmUp(Rule.steady(10, 0.05, 0.001, 60), 20, fake.unitOf(20));

    assertEquals(Ending.STABLE, w.ending());
    // stable only once the last window is past call 5,000 and most of the one before it too
    assertTrue(w.calls() >= 5000 + 10 * 20, "calls " + w.calls());
    assertTrue(w.calls() <= 5000 + 2 * 10 * 20 + 20, "calls " + w.calls());
    assertEquals(w.units() * 20, w.calls());
    assertEquals(1000, w.perCallNanos(), 1e-9);
    assertEquals((fake.now - start) / 1e6, w.millis(), 1e-9);

    Samples m = s.measure(20, 30, Long.MAX_VALUE, fake.unitOf(20));
    assertEquals(30, m.count());
    assertEquals(1000, m.median(), 1e-9);
    assertEquals(1000, m.min(), 1e-9);
    assertEquals(1000, m.p90(), 1e-9);
  }

  @Test
  void aCallThatNeverSettlesHitsTheCap() {
    // 3 % slower every unit of 20 calls, forever: two windows of 10 always differ by 34 %
    Fake fake = new Fake(c -> (long) (1000 * Math.pow(1.03, c / 20)), c -> 0);
    SteadyState s = fake.steadyState(Consensus.ALONE);
    WarmUp w = s.warmUp(Rule.steady(10, 0.05, 0, 2.0), 20, fake.unitOf(20));

    assertEquals(Ending.CAP, w.ending());
    assertTrue(w.millis() >= 2000, "stopped at the cap, not before: " + w.millis() + " ms");
    // and after the unit that crossed it: never more than one unit past
    double lastUnitMs = 20 * 1000 * Math.pow(1.03, w.units() - 1) / 1e6;
    assertTrue(w.units() > 200, "many units, not one: " + w.units());
    assertTrue(w.millis() < 2000 + lastUnitMs + 1e-6, w.millis() + " ms, last unit " + lastUnitMs + " ms");
  }

  @Test
  void aStableTimeWaitsForTheJitToBeQuiet() {
    // constant 2 µs a call, but the JIT compiles 1 ms every 100 calls up to call 4,000, then never again
    Fake fake = new Fake(c -> 2000, c -> Math.min(c, 4000) / 100);
    WarmUp w = fake.steadyState(Consensus.ALONE).warmUp(Rule.steady(10, 0.05, 0, 60), 20, fake.unitOf(20));
    assertEquals(Ending.STABLE, w.ending());
    assertTrue(w.calls() >= 4000 + 10 * 20, "quiet for a whole window after the last compile: " + w.calls());
    assertTrue(w.calls() <= 4000 + 10 * 20 + 20, "and then at once: " + w.calls());

    // a JIT that never stops compiling: the cap
    Fake busy = new Fake(c -> 2000, c -> c / 100);
    WarmUp capped = busy.steadyState(Consensus.ALONE).warmUp(Rule.steady(10, 0.05, 0, 0.5), 20, busy.unitOf(20));
    assertEquals(Ending.CAP, capped.ending());
  }

  @Test
  void theMinimumTimeHoldsEvenWhenStableAtOnce() {
    Fake fake = new Fake(c -> 1000, c -> 0);
    WarmUp w = fake.steadyState(Consensus.ALONE).warmUp(Rule.steady(10, 0.05, 0.25, 60), 50, fake.unitOf(50));
    assertEquals(Ending.STABLE, w.ending());
    assertTrue(w.millis() >= 250, w.millis() + " ms");
    assertTrue(w.millis() < 250 + 0.05 + 1e-9, "ends at the first unit past the minimum: " + w.millis() + " ms");
    assertEquals(Math.ceil(250e6 / 50_000), w.units(), 1);

    // without a minimum: after two windows
    Fake quick = new Fake(c -> 1000, c -> 0);
    WarmUp q = quick.steadyState(Consensus.ALONE).warmUp(Rule.steady(10, 0.05, 0, 60), 50, quick.unitOf(50));
    assertEquals(20, q.units());
  }

  @Test
  void aFixedWarmUpRunsWholeUnitsUpToTheCount() {
    Fake fake = new Fake(c -> 1000, c -> c);
    WarmUp w = fake.steadyState(Consensus.ALONE).warmUp(Rule.fixed(50), 20, fake.unitOf(20));
    assertEquals(Ending.FIXED, w.ending());
    assertEquals(3, w.units());
    assertEquals(60, w.calls());
    assertEquals(0.06, w.millis(), 1e-9);
    WarmUp none = fake.steadyState(Consensus.ALONE).warmUp(Rule.fixed(0), 20, fake.unitOf(20));
    assertEquals(0, none.calls());
  }

  @Test
  void measuringStopsAtItsTimeLimitAfterAtLeastOneUnit() {
    Fake fake = new Fake(c -> 1_000_000, c -> 0); // 1 ms a call
    SteadyState s = fake.steadyState(Consensus.ALONE);
    Samples m = s.measure(10, 1000, 95_000_000L, fake.unitOf(10)); // units of 10 ms; 95 ms
    assertEquals(10, m.count());
    assertEquals(100, m.millis(), 1e-9);
    Samples one = s.measure(10, 1000, 1, fake.unitOf(10));
    assertEquals(1, one.count());
  }

  @Test
  void ranksThatSeeDifferentTimesStopAfterTheSameUnit() throws Exception {
    // rank 0 is steady at once; rank 1 starts slow and settles 20 % a unit: alone, they would stop apart
    int ranks = 2;
    CyclicBarrier barrier = new CyclicBarrier(ranks);
    double[][] slots = new double[ranks][];
    List<WarmUp> results = new ArrayList<>(List.of(new WarmUp(0, 0, 0, Ending.FIXED, 0),
        new WarmUp(0, 0, 0, Ending.FIXED, 0)));
    List<Thread> threads = new ArrayList<>();
    for (int r = 0; r < ranks; r++) {
      int rank = r;
      Consensus threadsAgree = values -> {
        try {
          slots[rank] = values.clone();
          barrier.await(10, TimeUnit.SECONDS);
          double[] avg = new double[values.length];
          for (double[] s : slots) {
            for (int i = 0; i < avg.length; i++) {
              avg[i] += s[i] / ranks;
            }
          }
          barrier.await(10, TimeUnit.SECONDS);
          return avg;
        } catch (Exception e) {
          throw new IllegalStateException(e);
        }
      };
      Fake fake = rank == 0 ? new Fake(c -> 1000, c -> 0) : new Fake(c -> 10_000 + (long) (1e6 * Math.pow(0.8, c / 10)), c -> 0);
      threads.add(Thread.ofPlatform().start(() -> results.set(rank,
          fake.steadyState(threadsAgree).warmUp(Rule.steady(5, 0.05, 0, 60), 10, fake.unitOf(10)))));
    }
    for (Thread t : threads) {
      t.join(20_000);
    }
    assertEquals(Ending.STABLE, results.get(0).ending());
    assertEquals(results.get(0).units(), results.get(1).units());
    assertTrue(results.get(0).units() >= 30, "rank 1's slow start held both: " + results.get(0).units());
    assertEquals(results.get(0).millis(), results.get(1).millis(), 0, "the same agreed time on both");
  }

  @Test
  void describeSaysTheRuleAndABadRuleIsRefused() {
    assertEquals("warm-up: units (one batch of 20 calls and one synchronize) until the median time per call of the"
            + " last 10 is within 5% of the 10 before and the JIT compiled nothing during the last 10; at least 1 s,"
            + " at most 10 s", Rule.DEFAULT.describe("batch of 20 calls and one synchronize", "call"));
    assertEquals("warm-up: 5 steps (fixed; no steady-state rule), in units of one step",
        Rule.fixed(5).describe("step", "step"));
    assertThrows(IllegalArgumentException.class, () -> Rule.steady(10, 0.05, 2, 1));
    assertThrows(IllegalArgumentException.class, () -> Rule.steady(0, 0.05, 0, 1));
    assertThrows(IllegalArgumentException.class, () -> Rule.fixed(-1));
  }
}
