package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Captured plans on the local backend, which has no CUDA graphs: {@code capture} returns a captured plan
 * whose {@code launch()} executes the plan. The conformance kit's {@code CapturedPlanSuite} runs in
 * LocalConformanceTest; here is what only a CPU run can check cheaply: no allocation per launch, and a rank
 * that never launches makes the others time out in {@code synchronize()}, naming the plan.
 */
class LocalCapturedPlanTest {
  private static Plan twoSteps(Communicator comm) {
    PlanBuilder b = new PlanBuilder("captured.TwoSteps", comm, 0);
    int x = b.buffer("x", DataType.F32, 64, "{\"64\"}", null);
    int y = b.buffer("y", DataType.F32, 64, "{\"64\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.broadcast(1, x, y, 0);
    return b.build();
  }

  /** Less than a byte per launch over 2,000 launches (any object per launch would be 32 KB at least). */
  @Test
  void launchAllocatesNothing() {
    try (LocalCluster cluster = new LocalCluster(1, CommOptions.defaults().withAgreementCheck(false))) { // the launch's path alone: the agreement check's all-gathers (every 256 units) allocate what direct calls do here
      cluster.run(comm -> {
        LocalStream stream = (LocalStream) comm.stream();
        com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        try (Plan plan = twoSteps(comm); CapturedPlan captured = plan.capture(stream)) {
          long allocated = 0;
          for (int round = 0; round < 3; round++) { // the first rounds grow the queue and warm up the JIT
            CountDownLatch hold = new CountDownLatch(1);
            stream.enqueueHostTask(hold::await); // the worker waits: launch never contends for the lock
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 2000; i++) {
              captured.launch();
            }
            allocated = threads.getThreadAllocatedBytes(id) - before;
            hold.countDown();
            stream.synchronize();
          }
          long bytes = allocated;
          assertTrue(bytes < 2000, () -> "2,000 launches allocated " + bytes + " bytes");
        }
      });
    }
  }

  /**
   * The timeout keeps working across launches: both ranks capture, both launch once, then rank 1 stops;
   * rank 0's next launch waits for it, and its {@code synchronize()} times out naming the plan and step.
   */
  @Test
  void aRankThatStopsLaunchingTimesOutTheOthers() {
    AtomicReference<CommTimeoutException> timeout = new AtomicReference<>();
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofMillis(500)))) {
      CommPlanException failure = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(
          CommPlanException.class, () -> cluster.run(comm -> {
            try (Plan plan = twoSteps(comm); CapturedPlan captured = plan.capture(comm.stream())) {
              captured.launch();
              comm.stream().synchronize();
              if (comm.rank() == 1) {
                return; // stops: never launches again
              }
              captured.launch();
              try {
                comm.stream().synchronize();
              } catch (CommTimeoutException e) {
                timeout.set(e);
                throw e;
              }
            }
          })));
      CommTimeoutException t = timeout.get();
      assertNotNull(t, () -> "rank 0 should time out, got " + describe(failure));
      assertEquals(0, t.rank());
      assertEquals("captured.TwoSteps", t.planName());
      assertEquals(0, t.step());
      assertEquals(List.of(1), t.missingRanks());
    }
  }

  private static String describe(Throwable t) {
    StringBuilder out = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause()) {
      out.append(c).append('\n');
      for (Throwable s : c.getSuppressed()) {
        out.append("  suppressed: ").append(s).append('\n');
      }
    }
    return out.toString();
  }
}
