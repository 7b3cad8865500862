package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.runtime.Churn;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import org.junit.jupiter.api.Test;

/**
 * Issue 34, item 5, on NCCL: cycles of {@link Churn#cycle} (a mesh, a plan over its tp axis, a split with a
 * direct call, each built and closed: three {@code ncclCommSplit} and their {@code ncclCommDestroy} a cycle) on
 * one cluster of this machine's GPUs (two when there are two, else one), in this JVM: the heap after GC, the live
 * threads (NCCL's proxy threads among them) and the open file descriptors of the late cycles are those of the
 * early ones. NCCL makes a communicator in 30 to 500 ms, so {@value #DEFAULT_CYCLES} cycles (about a minute at
 * 100 ms a split; {@code -Dcommplan.churn.ncclCycles=N} to change it), not the local backend's 10,000. The GPU's
 * used memory is printed beside each sample, not compared (other processes share it).
 */
@NcclGpuTest
class NcclChurnGpuTest {
  private static final int DEFAULT_CYCLES = 160;

  @Test
  void meshSplitAndPlanCyclesKeepHeapThreadsAndFilesFlat() {
    int cycles = Integer.getInteger("commplan.churn.ncclCycles", DEFAULT_CYCLES);
    int perSample = Math.max(1, cycles / 40);
    int ranks = NcclBackend.unavailableReason(2) == null ? 2 : 1;
    List<Churn.Sample> samples;
    long start = System.nanoTime();
    try (Cluster cluster = NcclBackend.cluster(ranks, CommOptions.timeout(Duration.ofSeconds(120)))) {
      cluster.run(world -> Churn.cycle(world, -1)); // NCCL's and the JIT's first-time work, before the first sample
      samples = Churn.onCluster(cluster, cycles, perSample, sample -> {
        long[] gpu = CheckedCuda.cudaMemGetInfo();
        System.out.printf(Locale.ROOT, "[commplan] nccl churn %s, GPU memory used %s%n", sample,
            gpu == null ? "unknown" : String.format(Locale.ROOT, "%.1f MB", (gpu[1] - gpu[0]) / 1e6));
      });
    }
    String grew = Churn.growth(samples, 2, samples.size() / 4);
    System.out.printf(Locale.ROOT, "[commplan] nccl churn on %d rank(s): %s (%d cycles in %.1f s)%n", ranks,
        grew.isEmpty() ? "flat" : "GREW " + grew, cycles, (System.nanoTime() - start) / 1e9);
    assertEquals("", grew, () -> "samples:\n" + String.join("\n", samples.stream().map(Object::toString).toList()));
  }
}
