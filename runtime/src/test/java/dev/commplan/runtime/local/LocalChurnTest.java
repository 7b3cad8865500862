package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.ChildJvm;
import dev.commplan.runtime.Churn;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Issue 34, item 5, on the local backend: 10,000 cycles of {@link Churn#cycle} (a mesh [dp=2, tp=2], a plan over
 * tp, a split with a direct call, each built and closed) on one cluster of 4 ranks, in a JVM of its own with a
 * 64 MB heap ({@link LocalChurnMain}), with the agreement check on (the default; 2,500 cycles with it off, which
 * changes only what each call records): the heap after GC, the live threads
 * and the open file descriptors of the late cycles are those of the early ones ({@link Churn#growth}). Before
 * the fix a closed split stayed in its cluster until the cluster closed (about 1.25 MB each): the child ran out
 * of memory before 100 cycles.
 */
class LocalChurnTest {
  @ParameterizedTest(name = "agreement check {0}")
  @ValueSource(strings = {"on", "off"})
  void tenThousandMeshSplitAndPlanCyclesKeepHeapThreadsAndFilesFlat(String check) throws Exception {
    int cycles = check.equals("on") ? 10_000 : 2_500;
    ChildJvm.Result run = ChildJvm.run(List.of("-XX:+UseSerialGC", "-Xmx64m", "-XX:TieredStopAtLevel=1"),
        Duration.ofMinutes(8), LocalChurnMain.class.getName(), Integer.toString(cycles), Integer.toString(cycles / 40),
        check);
    assertFalse(run.killed(), run.toString());
    assertFalse(run.output().contains("OutOfMemoryError"), run.toString());
    assertEquals(0, run.exitCode(), run.toString());
    assertTrue(run.output().contains("churn: flat (" + cycles + " cycles in "), run.toString());
    System.out.println(run.output().lines().filter(l -> l.startsWith("churn")).reduce((a, b) -> b).orElse(""));
  }
}
