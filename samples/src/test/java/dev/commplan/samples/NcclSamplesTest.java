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

/**
 * The samples but seed on the NCCL backend, on as many GPUs as there are (up to 4; tp and 3d on the largest
 * mesh of their axes that fits, 1x1 and 1x1x1 on one GPU); skipped without a GPU.
 */
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

  /** tp on 1x1 with one GPU (its splits are of one rank), 1x2 with 2 or 3, 2x2 with 4. */
  @Test
  void tp() {
    String mesh = ranks >= 4 ? "dp=2,tp=2" : ranks >= 2 ? "dp=1,tp=2" : "dp=1,tp=1";
    SampleRun run = SampleRun.main("tp", "--backend", "nccl", "--mesh", mesh);
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend\n"), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }

  /** 3d on 1x1x1 with one GPU, 2x1x1 with 2 or 3, 2x1x2 with 4. */
  @Test
  void threeD() {
    String mesh = ranks >= 4 ? "pp=2,dp=1,tp=2" : ranks >= 2 ? "pp=2,dp=1,tp=1" : "pp=1,dp=1,tp=1";
    SampleRun run = SampleRun.main("3d", "--backend", "nccl", "--mesh", mesh);
    assertEquals(0, run.status(), run.out() + run.err());
    assertTrue(run.out().contains(", nccl backend\n"), run.out());
    assertTrue(run.out().contains("\ncheck: PASS, "), run.out());
  }
}
