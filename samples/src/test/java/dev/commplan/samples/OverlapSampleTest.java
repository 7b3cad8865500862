package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.timing.SteadyState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OverlapSampleTest {
  private static List<OverlapSample.Trained> train(int ranks, TrainStep.Mode mode) {
    try (Cluster cluster = Backends.local(ranks)) {
      return cluster.call(comm -> OverlapSample.train(comm, OverlapSample.CHECK_SIZE, OverlapSample.CHECK_STEPS, mode));
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 3, 4})
  void theCommandChecksTheRanksAgainstOneHost(int ranks) {
    SampleRun run = SampleRun.main("overlap", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().startsWith("overlap: 16 linear layers 64x64 (66,560 parameters, 260.0 KiB of gradients),"
        + " batch 16 per rank, " + LossTable.ranks(ranks) + ", local backend; 10 SGD steps, gradients averaged by"
        + " OverlapGradsPlan after the backward pass, checked against one host\n"), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
    assertEquals("", run.err());
  }

  @Test
  void everyRankEndsWithTheSameParameters() {
    List<OverlapSample.Trained> trained = train(3, TrainStep.Mode.SERIAL);
    for (int r = 1; r < 3; r++) {
      assertEquals(0, trained.get(0).params().maxDiff(trained.get(r).params()), "rank " + r);
      assertArrayEquals(trained.get(0).losses(), trained.get(r).losses(), "rank " + r);
    }
  }

  /** Without the plan each rank trains on its own share: the check's tolerance tells that from the real thing. */
  @Test
  void withoutTheAllReduceTheRanksMissTheOneHostModel() {
    OverlapModel.Trained reference = OverlapModel.reference(OverlapSample.CHECK_SIZE, 4, OverlapSample.CHECK_STEPS);
    double serial = train(4, TrainStep.Mode.SERIAL).get(1).params().maxDiff(reference.params());
    double alone = train(4, TrainStep.Mode.COMPUTE).get(1).params().maxDiff(reference.params());
    assertTrue(serial <= ParallelMlp.TOLERANCE, "serial " + serial);
    assertTrue(alone > 100 * ParallelMlp.TOLERANCE, "compute alone " + alone);
  }

  @Test
  void theMeasurementTimesEachWayAndTracesOneStepInStreamOrder(@TempDir Path dir) throws Exception {
    OverlapOptions options = new OverlapOptions(true, true, new OverlapModel.Size(32, 4));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Path svg = dir.resolve("t.svg");
    boolean pass = OverlapSample.run("local", 2, options, svg, new PrintStream(bytes, true, StandardCharsets.UTF_8),
        SteadyState.Rule.fixed(3), 4);
    String out = bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    assertTrue(pass, out);
    assertTrue(out.contains("\nmeasure: 16 linear layers 32x32 (16,896 parameters, 66.0 KiB of gradients), batch 4"
        + " per rank, 2 ranks, local backend, host compute on each rank's stream worker\n"), out);
    assertTrue(out.contains("\nstep time, the median of the timed steps; warm-up: 3 steps (fixed; no steady-state"
        + " rule), in units of one step and a synchronize\n"), out);
    for (String way : List.of("compute alone", "communication alone", "serial (backward, then execute)")) {
      assertTrue(out.matches("(?s).*\n  " + java.util.regex.Pattern.quote(way)
          + " +\\d+\\.\\d{3} ms   \\(4 steps timed; warm-up 3 steps, [\\d.]+ ms, fixed\\)\n.*"), way + "\n" + out);
    }
    assertTrue(out.contains("\ncommunication in the serial step (serial - compute alone): "), out);
    assertTrue(out.endsWith("timeline of one serial step: " + svg.toAbsolutePath() + "\n"), out);
    String text = Files.readString(svg, StandardCharsets.UTF_8);
    assertTrue(text.contains(">overlap: one serial training step, 2 ranks, local backend</text>"), text);
  }

  @Test
  void aTracedSerialStepIsTheLayersLastFirstThenTheAllReduceThenTheUpdate() {
    List<OverlapSample.Measured> measured;
    try (Cluster cluster = Backends.local(2)) {
      measured = cluster.call(comm -> OverlapSample.measure(comm, new OverlapModel.Size(16, 2),
          SteadyState.Rule.fixed(1), 1, true));
    }
    for (OverlapSample.Measured m : measured) {
      List<StepTrace.Span> spans = m.spans();
      assertEquals(1 + 16 + 15 + 1 + 1, spans.size(), spans.toString());
      assertEquals("forward", spans.get(0).label());
      assertEquals(List.of("L15", "", "L14"), spans.subList(1, 4).stream().map(StepTrace.Span::label).toList());
      assertEquals(StepTrace.Kind.COMMUNICATION, spans.get(spans.size() - 2).kind());
      assertEquals(StepTrace.Kind.UPDATE, spans.get(spans.size() - 1).kind());
      for (int i = 1; i < spans.size(); i++) { // one stream: each span starts where the one before ended
        assertEquals(spans.get(i - 1).endMillis(), spans.get(i).startMillis(), spans.toString());
      }
      Map<StepTrace.Kind, Long> kinds = spans.stream().collect(Collectors.groupingBy(StepTrace.Span::kind,
          Collectors.counting()));
      assertEquals(16L, kinds.get(StepTrace.Kind.GRADIENTS));
      assertEquals(3, m.timed().size());
      assertTrue(m.timed().stream().map(OverlapTiming.Timed::mode).toList().equals(OverlapSample.MEASURED));
    }
  }

  @Test
  void optionsAreCheckedBeforeAnyWork(@TempDir Path dir) {
    Function<String[], String> error = args -> {
      SampleRun run = SampleRun.main(args);
      assertEquals(2, run.status(), run.out() + run.err());
      return run.err();
    };
    assertTrue(error.apply(new String[] {"overlap", "--width", "8"}).contains("--width sizes the measured model;"
        + " add --measure"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--batch", "0"}).contains("--batch must be at least 1"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--width", "x"}).contains("--width takes a whole"
        + " number, not 'x'"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--measure"}).contains("--measure given twice"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--width", "60000"}).contains("more than 2147483647"));
    assertTrue(error.apply(new String[] {"seed", "--measure"}).contains("--measure is an option of overlap, not of"
        + " seed"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--out", dir.toString()}).contains("error: overlap"
        + " cannot write its timeline to " + dir + ": it is a folder"));
  }

  @Test
  void theMeasuredModelDependsOnTheBackend() {
    assertEquals(new OverlapModel.Size(1024, 1024), OverlapOptions.parse(List.of("--measure"), "nccl").size());
    assertEquals(new OverlapModel.Size(256, 4), OverlapOptions.parse(List.of("--measure"), "local").size());
    OverlapOptions given = OverlapOptions.parse(List.of("--measure", "--batch", "3", "--width", "40"), "mpi");
    assertEquals(new OverlapModel.Size(40, 3), given.size());
    assertTrue(given.measure() && !given.timeline(), "no timeline on mpi");
  }
}
