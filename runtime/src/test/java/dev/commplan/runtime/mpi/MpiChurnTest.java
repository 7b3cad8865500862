package dev.commplan.runtime.mpi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.runtime.Churn;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Issue 34, item 5, on the MPI backend: 10,000 cycles of {@link Churn#cycle} (a mesh [dp=2, tp=2], a
 * plan over tp, a split with a direct call, each built and closed) on 4 processes under mpirun, each with a 64 MB
 * heap ({@link MpiChurnMain}): on every rank the heap after GC, the live threads and the open file descriptors of
 * the late cycles are those of the early ones (resident memory is printed too: it stays within a megabyte, so
 * the MPI communicators are freed). 10,000 cycles, as on the local backend: about 80 s on the 2 shared cores here
 * (4 processes; each cycle three MPI_Comm_split and a dozen collectives).
 */
class MpiChurnTest {
  private static final int CYCLES = 10_000;

  @Test
  void meshSplitAndPlanCyclesKeepEveryRanksHeapThreadsAndFilesFlat() throws Exception {
    String reason = MpiLauncher.unavailableReason();
    assumeTrue(reason == null, reason);
    MpiLauncher.Result run = MpiLauncher.run(4, Duration.ofMinutes(6), MpiLauncher.classPath(), List.of("-Xmx64m"),
        MpiChurnMain.class.getName(), Integer.toString(CYCLES), Integer.toString(CYCLES / 40));
    assertFalse(run.killed(), run.toString());
    assertFalse(run.output().contains("OutOfMemoryError"), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    for (int r = 0; r < 4; r++) {
      assertTrue(run.output().contains("mpi churn rank " + r + ": flat (" + CYCLES + " cycles in "), run.toString());
    }
    run.output().lines().filter(l -> l.startsWith("mpi churn rank 0:")).forEach(System.out::println);
  }
}
