package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.nccl.NcclBackend;
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
  private static int ranks() {
    return Math.min(4, NcclBackend.deviceCount());
  }

  /** One rank, so that nothing but the compute differs from the one-host model: cuBLAS's sums against Java's. */
  @Test
  void cublasTrainsWhatTheHostTrains() {
    List<OverlapSample.Trained> trained;
    try (Cluster cluster = Backends.cluster("nccl", 1)) {
      trained = cluster.call(comm -> OverlapSample.train(comm, OverlapSample.CHECK_SIZE, OverlapSample.CHECK_STEPS,
          TrainStep.Mode.SERIAL));
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
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }

  @Test
  void theMeasurementTimesTheGpuAndDrawsItsTimeline(@TempDir Path dir) throws Exception {
    int ranks = ranks();
    OverlapOptions options = new OverlapOptions(true, true, new OverlapModel.Size(256, 64));
    ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    Path svg = dir.resolve("t.svg");
    boolean pass = OverlapSample.run("nccl", ranks, options, svg, new PrintStream(bytes, true, StandardCharsets.UTF_8),
        SteadyState.Rule.fixed(5), 5);
    String out = bytes.toString(StandardCharsets.UTF_8);
    assertTrue(pass, out);
    assertTrue(out.contains("nccl backend, cuBLAS on each rank's stream"), out);
    assertTrue(Files.readString(svg, StandardCharsets.UTF_8).contains("times: CUDA events with timing"), out);
    try (Cluster cluster = Backends.cluster("nccl", ranks)) {
      for (OverlapSample.Measured m : cluster.call(comm -> OverlapSample.measure(comm, new OverlapModel.Size(64, 16),
          SteadyState.Rule.fixed(2), 2, true))) {
        List<StepTrace.Span> spans = m.spans();
        assertEquals(1 + 16 + 15 + 1 + 1, spans.size(), spans.toString());
        for (int i = 1; i < spans.size(); i++) { // one stream: each span starts at the event that ended the last
          assertEquals(spans.get(i - 1).endMillis(), spans.get(i).startMillis(), spans.toString());
        }
        assertEquals(0, spans.get(0).startMillis());
      }
    }
  }
}
