package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.timing.SteadyState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class OverlapSampleTest {
  private static List<OverlapSample.Trained> train(int ranks, TrainStep.Mode mode) {
    try (Cluster cluster = Backends.local(ranks)) {
      return cluster.call(comm -> OverlapSample.train(comm, OverlapSample.CHECK_SIZE, OverlapSample.CHECK_STEPS, mode,
          OverlapSample.CHECK_BUCKET_BYTES, ReadyOrder.AS_PRODUCED));
    }
  }

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 4})
  void theCommandChecksEachWayAgainstOneHost(int ranks) {
    SampleRun run = SampleRun.main("overlap", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().startsWith("overlap: 16 linear layers 64x64 (66,560 parameters, 260.0 KiB of gradients),"
        + " batch 16 per rank, " + LossTable.ranks(ranks) + ", local backend; 10 SGD steps each way, checked against"
        + " one host\ngradients: OverlapGradsPlan in 8 buckets of at most 48.0 KiB, last layer first: b15..b13"
        + " (32.8 KiB), w13..b11 (32.5 KiB), w11..b9 (32.5 KiB), "), run.out());
    for (TrainStep.Mode mode : OverlapSample.CHECKED) {
      assertTrue(run.out().matches("(?s).*\n  " + java.util.regex.Pattern.quote(mode.description())
          + " +\\d\\.\\de[-+]\\d\\d  \\d\\.\\de[-+]\\d\\d     ok.*"), mode + "\n" + run.out());
    }
    assertTrue(run.out().contains("\ncheck: PASS, each way "), run.out());
    assertEquals("", run.err());
  }

  @Test
  void theCheckPlanGoesOutInSeveralBucketsOfSeveralFields() {
    List<List<String>> buckets;
    try (Cluster cluster = Backends.local(1)) {
      buckets = cluster.call(comm -> {
        try (GradPlan grads = GradPlan.build(comm, OverlapSample.CHECK_SIZE.width(),
            OverlapSample.CHECK_BUCKET_BYTES)) {
          return grads.buckets().stream().map(dev.commplan.runtime.plan.Schedule.Bucket::fields).toList();
        }
      }).get(0);
    }
    assertEquals(8, buckets.size(), buckets.toString());
    assertEquals(List.of("b15", "w15", "b14", "w14", "b13"), buckets.get(0), buckets.toString());
    assertEquals(List.of("w1", "b0", "w0", "loss"), buckets.get(7), buckets.toString());
  }

  @Test
  void everyRankEndsWithTheSameParameters() {
    List<OverlapSample.Trained> trained = train(3, TrainStep.Mode.OVERLAPPED);
    for (int r = 1; r < 3; r++) {
      assertEquals(0, trained.get(0).params().maxDiff(trained.get(r).params()), "rank " + r);
      assertArrayEquals(trained.get(0).losses(), trained.get(r).losses(), "rank " + r);
    }
  }

  /** Without the plan each rank trains on its own share: the check's tolerance tells that from the real thing. */
  @Test
  void withoutTheAllReduceTheRanksMissTheOneHostModelAndTrainTheirShareAlone() {
    OverlapModel.Trained reference = OverlapModel.reference(OverlapSample.CHECK_SIZE, 4, OverlapSample.CHECK_STEPS);
    double overlapped = train(4, TrainStep.Mode.OVERLAPPED).get(1).params().maxDiff(reference.params());
    List<OverlapSample.Trained> alone = train(4, TrainStep.Mode.COMPUTE);
    assertTrue(overlapped <= ParallelMlp.TOLERANCE, "overlapped " + overlapped);
    assertTrue(alone.get(1).params().maxDiff(reference.params()) > 100 * ParallelMlp.TOLERANCE, "compute alone");
    OverlapModel.Trained share = OverlapModel.referenceAlone(OverlapSample.CHECK_SIZE, 4, 1, OverlapSample.CHECK_STEPS);
    assertTrue(alone.get(1).params().maxDiff(share.params()) <= ParallelMlp.TOLERANCE, "rank 1 alone");
    assertTrue(alone.get(2).params().maxDiff(share.params()) > 100 * ParallelMlp.TOLERANCE, "rank 2 is not rank 1");
  }

  /**
   * Each rank marks the gradients ready in an order of its own (after each layer some of those produced so
   * far, at random, the rest at the end): the plan still sends the buckets in one order on every rank, so
   * every rank trains the one-host model.
   */
  @ParameterizedTest
  @ValueSource(ints = {2, 4})
  void ranksThatMarkTheFieldsInDifferentOrdersStillTrainTheOneHostModel(int ranks) {
    record Marked(OverlapSample.Trained trained, List<List<OverlapGradsPlan.Field>> orders) {}
    OverlapModel.Size size = OverlapSample.CHECK_SIZE;
    int steps = OverlapSample.CHECK_STEPS;
    List<Marked> marked;
    try (Cluster cluster = Backends.local(ranks)) {
      marked = cluster.call(comm -> {
        try (StepCompute compute = OverlapSample.compute(comm, size);
            GradPlan grads = GradPlan.build(comm, size.width(), OverlapSample.CHECK_BUCKET_BYTES)) {
          TrainStep step = new TrainStep(compute, grads, ReadyOrder.shuffled(1000 + comm.rank()));
          float[] losses = new float[steps];
          List<List<OverlapGradsPlan.Field>> orders = new ArrayList<>();
          for (int s = 0; s < steps; s++) {
            step.run(s, TrainStep.Mode.OVERLAPPED, StepTrace.OFF);
            compute.stream().synchronize();
            losses[s] = grads.loss().get(0);
            orders.add(step.lastMarked());
          }
          return new Marked(new OverlapSample.Trained(losses, compute.params()), orders);
        }
      });
    }
    OverlapModel.Trained reference = OverlapModel.reference(size, ranks, steps);
    for (int r = 0; r < ranks; r++) {
      OverlapSample.Trained t = marked.get(r).trained();
      assertTrue(t.params().maxDiff(reference.params()) <= ParallelMlp.TOLERANCE, "rank " + r);
      assertTrue(LossTable.maxDiff(t.losses(), reference.losses()) <= ParallelMlp.TOLERANCE, "rank " + r);
      for (List<OverlapGradsPlan.Field> order : marked.get(r).orders()) {
        assertEquals(EnumSet.allOf(OverlapGradsPlan.Field.class), EnumSet.copyOf(order), "each field once");
      }
    }
    assertNotEquals(marked.get(0).orders().get(0), marked.get(1).orders().get(0), "the ranks' orders differ");
  }

  /**
   * The sums themselves: every rank fills each gradient with values of its own, marks the fields ready in a
   * shuffled order of its own, and every rank reads the exact averages after finish.
   */
  @ParameterizedTest
  @ValueSource(ints = {2, 4})
  void fieldsMarkedInAnyOrderAreAveragedExactly(int ranks) {
    List<List<String>> wrong;
    try (Cluster cluster = Backends.local(ranks)) {
      wrong = cluster.call(comm -> {
        List<String> mistakes = new ArrayList<>();
        try (GradPlan grads = GradPlan.build(comm, 8, 300)) {
          List<OverlapGradsPlan.Field> fields = new ArrayList<>(List.of(OverlapGradsPlan.Field.values()));
          SplittableRandom random = new SplittableRandom(comm.rank());
          for (int round = 0; round < 3; round++) {
            for (OverlapGradsPlan.Field f : fields) {
              F32Buffer b = buffer(grads, f);
              for (int j = 0; j < b.length(); j++) {
                b.set(j, comm.rank() + (f.ordinal() + j + round) % 7);
              }
            }
            for (int i = fields.size() - 1; i > 0; i--) { // Fisher-Yates, the rank's own order each round
              int k = random.nextInt(i + 1);
              fields.set(i, fields.set(k, fields.get(i)));
            }
            for (OverlapGradsPlan.Field f : fields) {
              grads.ready(f, comm.stream());
            }
            grads.finish(comm.stream());
            comm.stream().synchronize();
            for (OverlapGradsPlan.Field f : OverlapGradsPlan.Field.values()) {
              F32Buffer b = buffer(grads, f);
              for (int j = 0; j < b.length(); j++) {
                float expected = (ranks - 1) / 2f + (f.ordinal() + j + round) % 7;
                if (b.get(j) != expected) {
                  mistakes.add("rank " + comm.rank() + " round " + round + " " + f + "[" + j + "] = " + b.get(j)
                      + ", expected " + expected);
                }
              }
            }
          }
          assertTrue(grads.buckets().size() > 4, OverlapMeasure.describe(grads.buckets()));
        }
        return mistakes;
      });
    }
    assertEquals(List.of(), wrong.stream().flatMap(List::stream).toList());
  }

  private static F32Buffer buffer(GradPlan grads, OverlapGradsPlan.Field field) {
    if (field == grads.lossField()) {
      return grads.loss();
    }
    int layer = Integer.parseInt(field.name().substring(1));
    return field.name().startsWith("w") ? grads.weight(layer) : grads.bias(layer);
  }

  @Test
  void theMeasurementTimesEachWayAndTracesTwoStepsInStreamOrder(@TempDir Path dir) throws Exception {
    OverlapOptions options = new OverlapOptions(true, true, true, new OverlapModel.Size(32, 4), 8192);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Path svg = dir.resolve("t.svg");
    boolean pass = OverlapSample.run("local", 2, options, svg, new PrintStream(bytes, true, StandardCharsets.UTF_8),
        SteadyState.Rule.fixed(3), 4);
    String out = bytes.toString(StandardCharsets.UTF_8).replace(System.lineSeparator(), "\n");
    assertTrue(pass, out);
    assertTrue(out.contains("\nmeasure: 16 linear layers 32x32 (16,896 parameters, 66.0 KiB of gradients), batch 4"
        + " per rank, 2 ranks, local backend, host compute on each rank's stream worker\n"), out);
    assertTrue(out.contains("\noverlapped: 16 buckets of at most 8.0 KiB (the builder's bucketBytes), last layer"
        + " first: b15..b14 (4.3 KiB), w14..b13 (4.1 KiB), "), out);
    assertTrue(out.contains("\nstep time, the median of the timed steps, a step of each way in turn after every way's"
        + " warm-up; warm-up: 3 steps (fixed; no steady-state rule), in units of one step and a synchronize\n"), out);
    for (TrainStep.Mode mode : OverlapMeasure.MEASURED) {
      assertTrue(out.matches("(?s).*\n  " + java.util.regex.Pattern.quote(mode.description())
          + " +\\d+\\.\\d{3} ms   \\(4 steps timed; warm-up 3 steps, [\\d.]+ ms, fixed\\)\n.*"), mode + "\n" + out);
    }
    assertTrue(out.contains("\ncommunication hidden by the overlap: "), out);
    assertTrue(out.contains("\ntarget: overlapped <= 1.1 x max(compute "), out);
    List<Long> sizes = BucketSweep.sizes(options.size());
    assertTrue(out.contains("\n   bucketBytes  buckets     step (ms)  hidden  warm-up\n"), out);
    for (long size : sizes) {
      assertTrue(out.matches("(?s).*\n +" + java.util.regex.Pattern.quote(OverlapModel.bytes(size))
          + " +\\d+ +\\d+\\.\\d{3} +-?\\d+% +3 steps, [\\d.]+ ms, fixed\n.*"), size + "\n" + out);
    }
    assertTrue(out.endsWith("timeline of a serial step, then an overlapped one: " + svg.toAbsolutePath() + "\n"), out);
    String text = Files.readString(svg, StandardCharsets.UTF_8);
    assertTrue(text.contains(">overlap: a serial training step, then an overlapped one, 2 ranks, local backend</text>"),
        text);
  }

  /**
   * The traced serial step is the layers last first, the whole plan, then the update, on one stream; the
   * overlapped step the same layers, every bucket once on the communication stream, each starting after the
   * layers it waits for were computed, and the update after the last bucket (finish).
   */
  @Test
  void theTracedStepsShowTheBucketsAfterTheirLayersAndTheUpdateAfterTheLastBucket() {
    OverlapOptions options = new OverlapOptions(true, false, true, new OverlapModel.Size(16, 2), 2048);
    List<OverlapMeasure.Measured> measured;
    try (Cluster cluster = Backends.local(2)) {
      measured = cluster.call(comm -> OverlapMeasure.measure(comm, options, SteadyState.Rule.fixed(1), 1));
    }
    int serialSpans = 1 + 16 + 15 + 1 + 1;
    for (OverlapMeasure.Measured m : measured) {
      List<StepTrace.Span> serial = m.spans().subList(0, serialSpans);
      assertEquals("forward", serial.get(0).label());
      assertEquals(List.of("L15", "", "L14"), serial.subList(1, 4).stream().map(StepTrace.Span::label).toList());
      assertEquals(StepTrace.Kind.COMMUNICATION, serial.get(serial.size() - 2).kind());
      assertEquals(StepTrace.Kind.UPDATE, serial.get(serial.size() - 1).kind());
      for (int i = 1; i < serial.size(); i++) { // one stream: each span starts where the one before ended
        assertEquals(serial.get(i - 1).endMillis(), serial.get(i).startMillis(), serial.toString());
      }
      List<StepTrace.Span> overlapped = m.spans().subList(serialSpans, m.spans().size());
      Map<StepTrace.Kind, List<StepTrace.Span>> kinds = overlapped.stream().collect(Collectors.groupingBy(
          StepTrace.Span::kind));
      assertEquals(16, kinds.get(StepTrace.Kind.GRADIENTS).size());
      List<StepTrace.Span> buckets = kinds.get(StepTrace.Kind.COMMUNICATION);
      List<String> labels = new ArrayList<>();
      for (int b = 0; b < m.buckets().size(); b++) {
        labels.add("bucket " + b);
      }
      assertEquals(labels, buckets.stream().map(StepTrace.Span::label).toList(), "each ready completes one bucket");
      Map<String, StepTrace.Span> layers = kinds.get(StepTrace.Kind.GRADIENTS).stream().collect(Collectors.toMap(
          StepTrace.Span::label, Function.identity()));
      for (int b = 0; b < buckets.size(); b++) {
        int lowest = m.buckets().get(b).fields().stream().filter(f -> !f.equals("loss"))
            .mapToInt(f -> Integer.parseInt(f.substring(1))).min().orElseThrow();
        assertTrue(buckets.get(b).startMillis() >= layers.get("L" + lowest).endMillis(), "bucket " + b);
        if (b > 0) {
          assertTrue(buckets.get(b).startMillis() >= buckets.get(b - 1).endMillis(), "in order on one stream");
        }
      }
      StepTrace.Span update = kinds.get(StepTrace.Kind.UPDATE).get(0);
      assertTrue(update.startMillis() >= buckets.get(buckets.size() - 1).endMillis(), "finish: " + overlapped);
      assertEquals(OverlapMeasure.MEASURED, m.timed().stream().map(OverlapTiming.Timed::mode).toList());
    }
  }

  @Test
  void optionsAreCheckedBeforeAnyWork(@TempDir Path dir) {
    Function<String[], String> error = args -> {
      SampleRun run = SampleRun.main(args);
      assertEquals(2, run.status(), run.out() + run.err());
      return run.err();
    };
    assertTrue(error.apply(new String[] {"overlap", "--width", "8"}).contains("--width sizes the measured model or"
        + " plan; add --measure or --sweep"));
    assertTrue(error.apply(new String[] {"overlap", "--bucket-bytes", "8M"}).contains("--bucket-bytes sizes the"
        + " measured model or plan"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--batch", "0"}).contains("--batch must be at least 1"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--width", "x"}).contains("--width takes a whole"
        + " number, not 'x'"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--bucket-bytes", "8X"}).contains("--bucket-bytes"
        + " takes bytes, a whole number with K, M or G for KiB, MiB or GiB if you like (8M), not '8X'"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--bucket-bytes", "0"}).contains("--bucket-bytes must"
        + " be at least 1 byte"));
    assertTrue(error.apply(new String[] {"overlap", "--measure", "--measure"}).contains("--measure given twice"));
    assertTrue(error.apply(new String[] {"overlap", "--sweep", "--sweep"}).contains("--sweep given twice"));
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
    OverlapOptions given = OverlapOptions.parse(List.of("--measure", "--batch", "3", "--width", "40", "--bucket-bytes",
        "256K"), "mpi");
    assertEquals(new OverlapModel.Size(40, 3), given.size());
    assertEquals(256L << 10, given.bucketBytes());
    assertTrue(given.measure() && !given.timeline() && !given.sweep(), "no timeline on mpi");
    OverlapOptions sweep = OverlapOptions.parse(List.of("--sweep"), "local");
    assertTrue(sweep.measure() && sweep.sweep() && sweep.timeline(), "--sweep measures");
    assertEquals(1L << 20, sweep.bucketBytes(), "the host's default");
    assertEquals(0, OverlapOptions.parse(List.of("--sweep"), "nccl").bucketBytes(), "the annotation's");
    assertEquals(3L << 30, OverlapOptions.bytes("--bucket-bytes", "3g"));
    assertEquals(1000, OverlapOptions.bytes("--bucket-bytes", "1000"));
  }
}
