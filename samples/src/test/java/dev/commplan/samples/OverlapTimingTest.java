package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.timing.SteadyState;
import java.util.List;
import org.junit.jupiter.api.Test;

class OverlapTimingTest {
  /**
   * Each way is warmed up until its time per step settles, then timed: here the compute alone takes 9 ms a
   * step for its first 40 steps (the JIT still at work) and 4 ms after, the communication 1 ms from the
   * start, on a clock that the units themselves advance.
   */
  @Test
  void eachWayIsWarmedUpUntilItsTimeSettlesThenTimed() {
    long[] now = {0};
    int[] computeSteps = {0};
    SteadyState steady = new SteadyState(() -> now[0], () -> 0, SteadyState.Consensus.ALONE);
    List<OverlapTiming.Timed> timed = OverlapTiming.time(List.of(TrainStep.Mode.COMPUTE, TrainStep.Mode.COMMUNICATION),
        mode -> mode == TrainStep.Mode.COMPUTE
            ? () -> now[0] += computeSteps[0]++ < 40 ? 9_000_000 : 4_000_000
            : () -> now[0] += 1_000_000,
        steady, SteadyState.Rule.steady(10, 0.05, 0.5, 5), 7, Long.MAX_VALUE);
    OverlapTiming.Timed compute = timed.get(0);
    assertEquals(TrainStep.Mode.COMPUTE, compute.mode());
    assertEquals(SteadyState.Ending.STABLE, compute.warmUp().ending());
    // Not before two windows of 10 steps at 4 ms (the first 40 steps' 9 ms are a plateau, which the 0.5 s
    // minimum sees past), nor much after.
    assertTrue(compute.warmUp().units() >= 60 && compute.warmUp().units() <= 80, compute.warmUp().toString());
    assertEquals(7, compute.samples().count());
    assertEquals(4.0, compute.medianMillis());
    assertEquals(1.0, timed.get(1).medianMillis());
    assertEquals(1.0, OverlapTiming.medianMillis(timed, TrainStep.Mode.COMMUNICATION));
    assertTrue(Double.isNaN(OverlapTiming.medianMillis(timed, TrainStep.Mode.SERIAL)), "not timed");
    List<String> lines = OverlapTiming.lines(SteadyState.Rule.steady(10, 0.05, 0.5, 5), timed);
    assertEquals(3, lines.size());
    assertTrue(lines.get(0).startsWith("step time, the median of the timed steps, a step of each way in turn after"
        + " every way's warm-up; warm-up: units (one step and a"
        + " synchronize) until the median time per step of the last 10"), lines.get(0));
    assertTrue(lines.get(1).matches("  compute alone +4\\.000 ms   \\(7 steps timed; warm-up \\d+ steps, [\\d.]+ ms,"
        + " stable\\)"), lines.get(1));
  }

  /**
   * The ways are timed a unit of each in turn, so that a load that comes and goes (here every unit takes 10 ms
   * more from the 7th unit on) weighs on each alike; all ways get the same number of units, and the rounds
   * stop after the one in which the time per way passed the cap.
   */
  @Test
  void theWaysAreTimedInTurnAndStopTogether() {
    long[] now = {0};
    StringBuilder order = new StringBuilder();
    int[] units = {0};
    SteadyState steady = new SteadyState(() -> now[0], () -> 0, SteadyState.Consensus.ALONE);
    List<SteadyState.Unit> ways = List.of(
        () -> { order.append('a'); now[0] += 1_000_000 + (units[0]++ >= 6 ? 10_000_000 : 0); },
        () -> { order.append('b'); now[0] += 3_000_000 + (units[0]++ >= 6 ? 10_000_000 : 0); });
    List<SteadyState.Samples> samples = OverlapTiming.interleaved(ways, steady, 9, Long.MAX_VALUE);
    assertEquals("ababababababababab", order.toString());
    assertEquals(9, samples.get(0).count());
    assertEquals(9, samples.get(1).count());
    assertEquals(2.0, (samples.get(1).median() - samples.get(0).median()) / 1e6, 1e-9, "the load cancels");
    order.setLength(0);
    List<SteadyState.Samples> capped = OverlapTiming.interleaved(ways, steady, 100, 40_000_000L);
    assertEquals(4, capped.get(0).count(), "4 rounds of 11 + 13 ms pass 2 x 40 ms: " + order);
    assertEquals(4, capped.get(1).count());
  }

  @Test
  void theFiguresSayHowMuchWasHiddenAndWhetherTheTargetWasMet() {
    OverlapTiming.Figures f = new OverlapTiming.Figures(10, 4, 15, 11, 0.5);
    assertEquals(5, f.exposedWhenSerial());
    assertEquals(0.8, f.hidden(), 1e-12);
    assertEquals(11.5, f.target(), 1e-12);
    assertEquals(List.of("communication in the serial step (serial - compute alone): 5.000 ms; alone: 4.000 ms",
        "communication hidden by the overlap: 80 % ((serial - overlapped) / (serial - compute alone) = (15.000 -"
            + " 11.000) / 5.000); 100 % of the communication alone",
        "target: overlapped <= 1.1 x max(compute 10.000, communication 4.000) + last bucket 0.500 = 11.500 ms;"
            + " overlapped 11.000 ms: met"), f.lines());
    assertTrue(new OverlapTiming.Figures(10, 4, 15, 12, 0.5).lines().get(2).endsWith(": missed"));
    // Without an overlapped step (not measured), only the serial step's communication.
    assertEquals(1, new OverlapTiming.Figures(10, 4, 15, Double.NaN, Double.NaN).lines().size());
  }

  @Test
  void theSweepTriesPowersOfTwoFromASixteenthOfALayerToTheWholePlan() {
    List<Long> sizes = BucketSweep.sizes(new OverlapModel.Size(1024, 8));
    assertEquals(256L << 10, sizes.get(0));
    assertEquals(128L << 20, sizes.get(sizes.size() - 1)); // the first at or above 64 MiB + 64 KiB + 4 B
    assertEquals(10, sizes.size());
    // A tiny model: from the smallest bucket tried to the whole plan (4,612 bytes).
    assertEquals(List.of(4096L, 8192L), BucketSweep.sizes(new OverlapModel.Size(8, 2)));
    SteadyState.WarmUp warmUp = new SteadyState.WarmUp(40, 40, 812.5, SteadyState.Ending.STABLE, 12.5e6);
    assertEquals(List.of("bucket size against the overlapped step (medians of 50 steps each, every size, the compute"
        + " alone (10.000 ms) and the serial step (15.000 ms) timed in turn):",
        "   bucketBytes  buckets     step (ms)  hidden  warm-up",
        "       4.0 MiB       33        12.500     50%  40 steps, 812.5 ms, stable"),
        new BucketSweep.Sweep(10, 15, 50, List.of(new BucketSweep.Row(4 << 20, 33, 12.5, warmUp))).lines());
  }
}
