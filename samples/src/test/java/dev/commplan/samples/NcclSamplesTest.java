package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.nccl.NcclBackend;
import java.nio.file.Path;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/** The samples but seed on the NCCL backend, on as many GPUs as there are (up to 4); skipped without a GPU. */
@Tag("gpu")
@ExtendWith(NeedsGpu.class)
class NcclSamplesTest {
  private int ranks;

  @BeforeEach
  void useUpToFourGpus() {
    ranks = Math.min(4, NcclBackend.deviceCount());
  }

  private static double maxDiff(String out) {
    Matcher m = Pattern.compile("max \\|diff\\| over \\d+ steps: (\\S+)\n").matcher(out);
    assertTrue(m.find(), out);
    return Double.parseDouble(m.group(1));
  }

  @Test
  void ddp(@TempDir Path dir) {
    SampleRun run = SampleRun.main("ddp", "--backend", "nccl", "--ranks", Integer.toString(ranks), "--out",
        dir.resolve("ddp.svg").toString());
    assertEquals(0, run.status(), run.err());
    assertTrue(run.out().contains(", nccl backend\n"), run.out());
    assertTrue(maxDiff(run.out()) < DdpSampleTest.TOLERANCE, run.out());
  }

  @Test
  void zero() {
    SampleRun run = SampleRun.main("zero", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.err());
    assertTrue(maxDiff(run.out()) < DdpSampleTest.TOLERANCE, run.out());
  }

  @Test
  void syncbn() {
    SampleRun run = SampleRun.main("syncbn", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.err());
    Matcher m = Pattern.compile("max \\|diff\\|: mean (\\S+), var (\\S+)\n").matcher(run.out());
    assertTrue(m.find(), run.out());
    assertTrue(Double.parseDouble(m.group(1)) < 1e-5 && Double.parseDouble(m.group(2)) < 1e-4, run.out());
  }

  /** Send and receive between neighbouring GPUs; on one GPU the one stage sends and receives nothing. */
  @Test
  void pipeline() {
    SampleRun run = SampleRun.main("pipeline", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend; "), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }

  @Test
  void moe() {
    SampleRun run = SampleRun.main("moe", "--backend", "nccl", "--ranks", Integer.toString(ranks));
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend; "), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }
}
