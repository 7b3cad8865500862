package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.lang.management.ManagementFactory;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/**
 * 0 B per execute on the local backend with issue 17's operations in the plan: Reduce, Gather, Scatter,
 * AllToAll and a step of sends and receives (their work items are made at compile; execute only enqueues
 * them). Measured on each rank's own thread, with its stream's worker held so that enqueue never waits.
 */
class LocalNewCollectivesAllocationTest {
  @Test
  void executeAllocatesNothing() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.defaults().withAgreementCheck(false))) { // the plan's path alone: the agreement check's all-gathers (every 256 units) allocate what direct calls do here
      cluster.run(comm -> {
        int n = comm.size();
        PlanBuilder b = new PlanBuilder("alloc.New", comm, 0);
        int r = b.buffer("r", DataType.F32, 64, "{\"64\"}", null);
        int part = b.buffer("part", DataType.I32, 4, "{\"4\"}", null);
        int all = b.buffer("all", DataType.I32, 4L * n, "{\"ranks\", \"4\"}", null);
        int whole = b.buffer("whole", DataType.U8, 8L * n, "{\"ranks\", \"8\"}", null);
        int x = b.buffer("x", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
        int y = b.buffer("y", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
        int ring = b.buffer("ring", DataType.F32, 16, "{\"16\"}", null);
        int got = b.buffer("got", DataType.F32, 16, "{\"16\"}", null);
        b.collective(0, Collective.REDUCE, r, r, ReduceOp.SUM, 1);
        b.collective(0, Collective.GATHER, part, all, null, 0);
        b.collective(0, Collective.SCATTER, whole, whole, null, 0);
        b.collective(0, Collective.ALL_TO_ALL, x, y, null, -1);
        b.send(1, ring, "(rank + 1) % ranks");
        b.recv(1, got, "(rank - 1) % ranks");
        com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        LocalStream stream = (LocalStream) comm.stream();
        try (Plan plan = b.build()) {
          long allocated = 0;
          for (int round = 0; round < 3; round++) { // the first rounds grow the queue and warm up the JIT
            CountDownLatch hold = new CountDownLatch(1);
            stream.enqueueHostTask(hold::await);
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 1000; i++) {
              plan.execute(stream);
            }
            allocated = threads.getThreadAllocatedBytes(id) - before;
            hold.countDown();
            stream.synchronize();
          }
          long bytes = allocated;
          assertTrue(bytes < 1000, () -> "1,000 executes allocated " + bytes + " bytes");
        }
      });
    }
  }
}
