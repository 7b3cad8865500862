package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class MoeSampleTest {

  private static List<MoeSample.RankResult> run(int ranks) {
    try (Cluster cluster = Backends.cluster("local", ranks)) {
      return cluster.call(MoeSample::runRank);
    }
  }

  @ParameterizedTest(name = "{0} experts")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void everyTokenComesBackAsTheOneHostComputationGivesIt(int ranks) {
    List<MoeSample.RankResult> results = run(ranks);
    MoeSample.Reference reference = MoeSample.reference(ranks);
    int dropped = 0;
    for (int r = 0; r < ranks; r++) {
      MoeSample.RankResult result = results.get(r);
      assertArrayEquals(reference.sent()[r], result.sent(), "rank " + r + " sent");
      assertEquals(MoeSample.TOKENS, Arrays.stream(result.sent()).sum() + result.dropped(), "rank " + r);
      for (int e = 0; e < ranks; e++) {
        assertTrue(result.sent()[e] <= MoeSample.capacity(ranks), "rank " + r + " to expert " + e);
        assertEquals(reference.sent()[e][r], result.received()[e], "expert " + r + " from rank " + e);
      }
      assertTrue(LossTable.maxDiff(result.outputs(), reference.outputs()[r]) <= MoeSample.TOLERANCE, "rank " + r);
      dropped += result.dropped();
    }
    assertEquals(reference.dropped(), dropped);
  }

  /** The exchange matters: tokens cross ranks, and each kept token's output depends on the expert it reached. */
  @ParameterizedTest(name = "{0} experts")
  @ValueSource(ints = {2, 4, 8})
  void tokensCrossRanksAndDroppedOnesPassThrough(int ranks) {
    List<MoeSample.RankResult> results = run(ranks);
    int crossing = 0;
    for (int r = 0; r < ranks; r++) {
      float[] x = MoeSample.tokens(r);
      MoeSample.Routing routing = MoeSample.route(x, ranks);
      for (int t = 0; t < MoeSample.TOKENS; t++) {
        float[] in = Arrays.copyOfRange(x, t * MoeSample.HIDDEN, (t + 1) * MoeSample.HIDDEN);
        float[] out = Arrays.copyOfRange(results.get(r).outputs(), t * MoeSample.HIDDEN, (t + 1) * MoeSample.HIDDEN);
        if (routing.row()[t] < 0) {
          assertArrayEquals(in, out, "a dropped token's output is its input");
        } else {
          assertTrue(LossTable.maxDiff(in, out) > 1e-3, "rank " + r + " token " + t + " went through an expert");
          crossing += routing.expert()[t] != r ? 1 : 0;
        }
      }
    }
    assertTrue(crossing >= ranks, crossing + " tokens crossed ranks");
  }

  @Test
  void capacityIsTheFactorTimesAnEvenShare() {
    assertEquals(10, MoeSample.capacity(1));
    assertEquals(5, MoeSample.capacity(2));
    assertEquals(4, MoeSample.capacity(3));
    assertEquals(3, MoeSample.capacity(4));
    assertEquals(2, MoeSample.capacity(5));
    assertEquals(2, MoeSample.capacity(8));
    assertTrue(MoeSample.reference(8).dropped() > 0, "8 experts drop tokens: the sample shows capacity at work");
    assertEquals(0, MoeSample.reference(1).dropped());
  }

  @Test
  void aWrongOutputOrCountFailsTheCheck() {
    List<MoeSample.RankResult> results = new ArrayList<>(run(3));
    MoeSample.RankResult r1 = results.get(1);
    float[] outputs = r1.outputs().clone();
    outputs[3] += 0.5f;
    results.set(1, new MoeSample.RankResult(r1.sent(), r1.dropped(), r1.received(), outputs));
    MoeSample.RankResult r2 = results.get(2);
    int[] received = r2.received().clone();
    received[0]++;
    results.set(2, new MoeSample.RankResult(r2.sent(), r2.dropped(), received, r2.outputs()));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    boolean ok = MoeSample.printAll(results, "local", new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertFalse(ok, out);
    assertTrue(out.contains("rank 1: 8 outputs combined, max |diff| vs one host 5.0e-01  WRONG"), out);
    assertTrue(out.lines().anyMatch(l -> l.startsWith("expert 2 (rank 2): ") && l.contains("  WRONG, expected [")), out);
    assertTrue(out.contains("rank 0: 8 outputs combined, max |diff| vs one host 0.0e+00  ok"), out);
    assertTrue(out.contains("check: FAILED, 2 of 9 routing, load and output checks differ from the one-host computation"), out);
  }

  @Test
  void thePackedResultRoundTrips() {
    MoeSample.RankResult result = run(3).get(2);
    MoeSample.RankResult back = MoeSample.RankResult.unpack(result.pack(), 3);
    assertArrayEquals(result.sent(), back.sent());
    assertEquals(result.dropped(), back.dropped());
    assertArrayEquals(result.received(), back.received());
    assertArrayEquals(result.outputs(), back.outputs());
  }

  @Test
  void theCommandPrintsRoutingLoadsAndPass() {
    SampleRun run = SampleRun.main("moe");
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("moe: 4 experts on 4 ranks (expert e on rank e), local backend; 8 tokens of width 4 per rank,"
        + " top-1 routing\ncapacity: 3 tokens per expert from each rank = ceil(1.25 x 8 tokens / 4 experts)"), out);
    for (int r = 0; r < 4; r++) {
      assertTrue(out.contains("\nrank " + r + ": tokens to experts ["), out);
      assertTrue(out.contains("\nexpert " + r + " (rank " + r + "): "), out);
      assertTrue(out.contains("\nrank " + r + ": 8 outputs combined, max |diff| vs one host 0.0e+00  ok\n"), out);
    }
    assertTrue(out.contains("\ncheck: PASS, all 32 tokens as the one-host computation gives them ("), out);
    assertTrue(out.endsWith(" dropped), 12 of 12 routing, load and output checks ok, max |diff| 0.0e+00\n"), out);
  }
}
