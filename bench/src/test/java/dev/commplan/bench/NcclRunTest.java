package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.timing.SteadyState;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The bench's NCCL paths, checked rather than timed: a sweep of every collective and the many-buffers run, on as
 * many ranks as there are GPUs (up to 4), each placement's result compared with the reference (the bench's
 * {@code --check}). On a GPU, and in CI against gpu-model/ (bin/test), where the timings mean nothing and the
 * wrong-element counts everything. Skipped, saying why, where NCCL cannot run.
 */
@Tag("gpu")
class NcclRunTest {
  @TempDir Path dir;
  private int ranks;

  @BeforeEach
  void needsNccl() {
    String why;
    try {
      why = NcclBackend.unavailableReason(1);
    } catch (RuntimeException | LinkageError e) {
      why = "the NCCL backend could not be probed: " + e;
    }
    String reason = why;
    Assumptions.assumeTrue(reason == null, () -> "GPU test skipped: " + reason);
    ranks = Math.max(1, Math.min(4, NcclBackend.deviceCount()));
  }

  private static PrintStream sink(ByteArrayOutputStream bytes) {
    return new PrintStream(bytes, true, StandardCharsets.UTF_8);
  }

  @Test
  void sweepOfEveryCollectiveHasNoWrongElements() {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    List<Sweep.Row> rows;
    try (Csv csv = new Csv(dir.resolve("sweep.csv"))) {
      rows = Sweep.run(new Sweep.Config("nccl", ranks, Coll.values(), DataType.F32, ReduceOp.SUM, 0,
          64, 64 * 1024, 32, 2, 2, SteadyState.Rule.fixed(1), 0, 60, 1, Long.MAX_VALUE, 0, true), sink(text),
          sink(new ByteArrayOutputStream()), csv);
    }
    assertTrue(!rows.isEmpty(), text.toString(StandardCharsets.UTF_8));
    for (Sweep.Row r : rows) {
      assertEquals(0, r.outOfPlace().wrong(), r.toString());
      assertEquals(r.coll().hasInPlace() ? 0 : -1, r.inPlace().wrong(), r.toString());
    }
  }

  @Test
  void manyBuffersEveryWayIsRight() {
    ByteArrayOutputStream text = new ByteArrayOutputStream();
    List<ManyBuffers.Result> results;
    try (Csv csv = new Csv(dir.resolve("many.csv"))) {
      results = ManyBuffers.run(new ManyBuffers.Config("nccl", ranks, ManyBuffers.Case.uniform(200, 16), DataType.F32,
          ReduceOp.SUM, false, 2, SteadyState.Rule.fixed(1), ManyBuffers.PlanSource.AUTO), sink(text), csv);
    } catch (Exception e) {
      throw new AssertionError(e);
    }
    assertEquals(ManyBuffers.MODES, results.stream().map(ManyBuffers.Result::mode).toList());
    for (ManyBuffers.Result r : results) {
      assertEquals(0, r.wrong(), r.toString());
    }
  }
}
