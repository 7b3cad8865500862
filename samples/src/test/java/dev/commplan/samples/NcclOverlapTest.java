package dev.commplan.samples;

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
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The overlap sample on GPUs: its cuBLAS compute ({@link CublasStepCompute}) against the one-host model, the
 * sample on up to four GPUs, and its measurement and CUDA-event timeline; skipped without a GPU or cuBLAS.
 */
@Tag("gpu")
@ExtendWith({NeedsGpu.class, NeedsCublas.class})
class NcclOverlapTest {
  /** The largest world size of {@code -Dcommplan.gpu.ranks} (several ranks on one GPU with NCCL 2.30), else the GPUs, up to 4. */
  private static int ranks() {
    return NcclSamplesTest.ranks().stream().max(Integer::compare).orElse(1);
  }

  /**
   * One rank, so that nothing but the compute differs from the one-host model: cuBLAS's sums against Java's,
   * the gradients marked ready on the compute stream layer by layer and the buckets on a stream of their own.
   */
  @Test
  void cublasTrainsWhatTheHostTrains() {
    List<OverlapSample.Trained> trained;
    try (Cluster cluster = Backends.cluster("nccl", 1)) {
      trained = cluster.call(comm -> OverlapSample.train(comm, OverlapSample.CHECK_SIZE, OverlapSample.CHECK_STEPS,
          TrainStep.Mode.OVERLAPPED, OverlapSample.CHECK_BUCKET_BYTES, ReadyOrder.AS_PRODUCED));
    }
    OverlapModel.Trained reference = OverlapModel.reference(OverlapSample.CHECK_SIZE, 1, OverlapSample.CHECK_STEPS);
    double params = trained.get(0).params().maxDiff(reference.params());
    double losses = LossTable.maxDiff(trained.get(0).losses(), reference.losses());
    assertTrue(params <= ParallelMlp.TOLERANCE && losses <= ParallelMlp.TOLERANCE, "parameters " + params + ", losses "
        + losses);
  }

  @Test
  void theSampleMatchesOneHost() {
    SampleRun run = SampleRun.main("overlap", "--backend", "nccl", "--ranks", Integer.toString(ranks()));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend; "), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, each way "), run.out());
  }

  /** Every rank marks the gradients ready in an order of its own; the buckets still pair, and the sums are right. */
  @Test
  void ranksThatMarkInDifferentOrdersStillTrainTheOneHostModel() {
    int ranks = ranks();
    OverlapModel.Size size = OverlapSample.CHECK_SIZE;
    List<OverlapSample.Trained> trained;
    try (Cluster cluster = Backends.cluster("nccl", ranks)) {
      trained = cluster.call(comm -> {
        try (StepCompute compute = OverlapSample.compute(comm, size);
            GradPlan grads = GradPlan.build(comm, size.width(), OverlapSample.CHECK_BUCKET_BYTES)) {
          TrainStep step = new TrainStep(compute, grads, ReadyOrder.shuffled(1000 + comm.rank()));
          float[] losses = new float[OverlapSample.CHECK_STEPS];
          for (int s = 0; s < losses.length; s++) {
            step.run(s, TrainStep.Mode.OVERLAPPED, StepTrace.OFF);
            compute.stream().synchronize();
            losses[s] = grads.loss().get(0);
          }
          return new OverlapSample.Trained(losses, compute.params());
        }
      });
    }
    OverlapModel.Trained reference = OverlapModel.reference(size, ranks, OverlapSample.CHECK_STEPS);
    for (int r = 0; r < ranks; r++) {
      double params = trained.get(r).params().maxDiff(reference.params());
      assertTrue(params <= ParallelMlp.TOLERANCE, "rank " + r + ": parameters " + params);
    }
  }

  @Test
  void theMeasurementTimesTheGpuAndDrawsItsTimeline(@TempDir Path dir) throws Exception {
    int ranks = ranks();
    OverlapOptions options = new OverlapOptions(true, false, true, new OverlapModel.Size(256, 64), 512L << 10);
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Path svg = dir.resolve("t.svg");
    boolean pass = OverlapSample.run("nccl", ranks, options, svg, new PrintStream(bytes, true, StandardCharsets.UTF_8),
        SteadyState.Rule.fixed(5), 5);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(pass, out);
    assertTrue(out.contains("nccl backend, cuBLAS on each rank's stream"), out);
    assertTrue(Files.readString(svg, StandardCharsets.UTF_8).contains("times: CUDA events with timing"), out);
    try (Cluster cluster = Backends.cluster("nccl", ranks)) {
      OverlapOptions small = new OverlapOptions(true, false, true, new OverlapModel.Size(64, 16),
          OverlapSample.CHECK_BUCKET_BYTES);
      for (OverlapMeasure.Measured m : cluster.call(comm -> OverlapMeasure.measure(comm, small,
          SteadyState.Rule.fixed(2), 2))) {
        List<StepTrace.Span> serial = m.spans().subList(0, 1 + 16 + 15 + 1 + 1);
        for (int i = 1; i < serial.size(); i++) { // one stream: each span starts at the event that ended the last
          assertEquals(serial.get(i - 1).endMillis(), serial.get(i).startMillis(), serial.toString());
        }
        assertEquals(0, serial.get(0).startMillis());
        List<StepTrace.Span> overlapped = m.spans().subList(serial.size(), m.spans().size());
        List<StepTrace.Span> buckets = overlapped.stream().filter(s -> s.kind() == StepTrace.Kind.COMMUNICATION)
            .toList();
        assertEquals(m.buckets().size(), buckets.size(), overlapped.toString());
        StepTrace.Span update = overlapped.get(overlapped.size() - 1);
        assertEquals(StepTrace.Kind.UPDATE, update.kind());
        assertTrue(update.startMillis() >= buckets.get(buckets.size() - 1).endMillis(), "finish: " + overlapped);
      }
    }
  }
}
