package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.ConcurrentUseException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, case 2: one communicator, two threads. The rank's thread opens a group, which holds the
 * communicator's gate until groupEnd; another thread's execute or direct call meanwhile is refused with
 * ConcurrentUseException naming both threads. No timing is involved: the group is open for as long as
 * the other thread takes.
 */
class LocalConcurrentUseTest {
  private static Plan plan(Communicator comm) {
    PlanBuilder b = new PlanBuilder("t.Shared", comm, 0);
    int x = b.buffer("x", DataType.F32, 8, "{\"8\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    return b.build();
  }

  @Test
  void anotherThreadsExecuteOrCallDuringAnOpenGroupIsRefusedNamingBothThreads() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (Plan plan = plan(comm); F32Buffer a = F32Buffer.allocate(comm, 8)) {
          comm.groupStart();
          ConcurrentUseException refused = otherThread(() -> plan.execute(comm.stream()));
          ConcurrentUseException direct = otherThread(() -> comm.allReduce(a, a, ReduceOp.SUM, comm.stream()));
          String me = Thread.currentThread().getName();
          for (ConcurrentUseException e : new ConcurrentUseException[] {refused, direct}) {
            assertEquals(me, e.holder());
            assertEquals("other-thread", e.caller());
            assertTrue(e.getMessage().contains("thread '" + me + "' was in an open group")
                && e.getMessage().contains("thread 'other-thread' called"), e.getMessage());
          }
          assertTrue(refused.getMessage().contains("called execute() of plan t.Shared"), refused.getMessage());
          assertTrue(direct.getMessage().contains("called allReduce()"), direct.getMessage());
          plan.execute(comm.stream()); // the holder itself may execute inside its group
          comm.groupEnd();
          comm.stream().synchronize();
          // the gate is free again: the other thread's call now goes through
          a.fill(2f);
          otherThreadRuns(() -> comm.allReduce(a, a, ReduceOp.SUM, comm.stream()));
          comm.stream().synchronize();
          assertArrayEquals(new float[] {2, 2, 2, 2, 2, 2, 2, 2}, a.toArray());
        }
      });
    }
  }

  private static ConcurrentUseException otherThread(Runnable call) throws Exception {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread.ofPlatform().name("other-thread").start(() -> {
      try {
        call.run();
        thrown.complete(null);
      } catch (Throwable t) {
        thrown.complete(t);
      }
    });
    Throwable t = thrown.get(30, TimeUnit.SECONDS);
    if (t instanceof ConcurrentUseException e) {
      return e;
    }
    throw new AssertionError("expected ConcurrentUseException, got " + t, t);
  }

  private static void otherThreadRuns(Runnable call) throws Exception {
    CompletableFuture<Throwable> thrown = new CompletableFuture<>();
    Thread.ofPlatform().name("other-thread").start(() -> {
      try {
        call.run();
        thrown.complete(null);
      } catch (Throwable t) {
        thrown.complete(t);
      }
    });
    Throwable t = thrown.get(30, TimeUnit.SECONDS);
    if (t != null) {
      throw new AssertionError("the gate was free, yet: " + t, t);
    }
  }
}
