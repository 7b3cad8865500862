package dev.commplan.samples;

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

class PipelineSampleTest {

  private static List<PipelineSample.RankResult> train(int ranks) {
    try (Cluster cluster = Backends.cluster("local", ranks)) {
      return cluster.call(PipelineSample::trainStage);
    }
  }

  private static double mean(float[] values, int from, int to) {
    double sum = 0;
    for (int i = from; i < to; i++) {
      sum += values[i];
    }
    return sum / (to - from);
  }

  @ParameterizedTest(name = "{0} stages")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void everyStageEndsWhereTheOneHostModelEnds(int ranks) {
    List<PipelineSample.RankResult> results = train(ranks);
    PipelineSample.Reference reference = PipelineSample.reference(ranks);
    float[] losses = results.get(ranks - 1).losses();
    assertTrue(LossTable.maxDiff(losses, reference.losses()) < PipelineSample.TOLERANCE,
        "pipeline " + Arrays.toString(losses) + "\none host " + Arrays.toString(reference.losses()));
    for (int s = 0; s < ranks; s++) {
      float[] params = results.get(s).params();
      assertEquals(PipelineSample.PARAMS, params.length);
      assertTrue(LossTable.maxDiff(params, reference.params()[s]) < PipelineSample.TOLERANCE, "stage " + s);
      // Training moved every stage, the first one included: the gradients came back through every hop.
      assertTrue(LossTable.maxDiff(params, PipelineSample.init(s)) > 100 * PipelineSample.TOLERANCE, "stage " + s);
    }
    for (int s = 0; s < ranks - 1; s++) {
      assertTrue(Arrays.equals(new float[PipelineSample.STEPS], results.get(s).losses()), "only the last stage has the loss");
    }
    assertTrue(mean(losses, 25, 30) < 0.95 * mean(losses, 0, 5), Arrays.toString(losses));
  }

  /** Had the activations not arrived, the last stage would have computed from zeros: a loss the check tells apart. */
  @ParameterizedTest(name = "{0} stages")
  @ValueSource(ints = {2, 4})
  void theFirstLossNeedsTheActivationsOfEveryStage(int ranks) {
    float[] losses = train(ranks).get(ranks - 1).losses();
    float[] fromZeros = new float[PipelineSample.MICRO_BATCH * PipelineSample.WIDTH];
    float[] out = PipelineSample.forward(PipelineSample.init(ranks - 1), fromZeros, true);
    double loss = 0;
    for (int m = 0; m < PipelineSample.MICRO_BATCHES; m++) {
      float[] y = PipelineSample.targets(0, m);
      for (int i = 0; i < out.length; i++) {
        loss += (out[i] - y[i]) * (out[i] - y[i]);
      }
    }
    loss /= PipelineSample.BATCH * PipelineSample.WIDTH;
    assertTrue(Math.abs(losses[0] - loss) > 100 * PipelineSample.TOLERANCE, losses[0] + " vs " + loss);
  }

  @Test
  void aStageThatDiffersFailsTheCheck() {
    List<PipelineSample.RankResult> results = new ArrayList<>(train(3));
    float[] params = results.get(1).params().clone();
    params[5] += 1e-3f;
    results.set(1, new PipelineSample.RankResult(results.get(1).losses(), params));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    boolean ok = PipelineSample.printAll(results, "local", new PrintStream(bytes, true, StandardCharsets.UTF_8));
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertFalse(ok, out);
    assertTrue(out.contains("stage 0 (rank 0): 20 parameters after 30 steps, max |diff| vs one host "), out);
    assertTrue(out.lines().anyMatch(l -> l.startsWith("stage 1 (rank 1): ") && l.endsWith("  WRONG")), out);
    assertTrue(out.contains("check: FAILED, 1 of 4 results differ from the one-host model by more than 1e-05"), out);
  }

  @Test
  void thePackedResultRoundTrips() {
    PipelineSample.RankResult result = train(2).get(1);
    PipelineSample.RankResult back = PipelineSample.RankResult.unpack(result.pack());
    assertTrue(Arrays.equals(result.losses(), back.losses()) && Arrays.equals(result.params(), back.params()));
  }

  @Test
  void theCommandPrintsTheScheduleTheCurveAndPass() {
    SampleRun run = SampleRun.main("pipeline");
    assertEquals(0, run.status(), run.err());
    String out = run.out();
    assertTrue(out.startsWith("pipeline: 4 stages on 4 ranks (stage s on rank s), local backend; each stage one 4x4 layer"), out);
    assertTrue(out.contains("GPipe schedule per step: batch 16 = 4 micro-batches x 4 samples; forward 7 ticks with 6 hops"
        + " of step 0 (activations to rank + 1), backward 7 ticks with 6 hops of step 1 (gradients to rank - 1)\n"), out);
    assertTrue(out.contains("step  loss (pipeline)  loss (one host)  |diff|\n"), out);
    for (int s = 0; s < 4; s++) {
      assertTrue(out.contains("stage " + s + " (rank " + s + "): 20 parameters after 30 steps, max |diff| vs one host "), out);
    }
    assertTrue(out.contains("\ncheck: PASS, the loss curve and all 4 stages' parameters match the one-host model"), out);
    assertEquals(1, SampleRun.main("pipeline", "--ranks", "1").out().lines()
        .filter(l -> l.startsWith("check: PASS, the loss curve and the stage's parameters")).count());
  }
}
