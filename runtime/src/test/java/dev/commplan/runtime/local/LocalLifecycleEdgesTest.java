package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.OppositeOrders;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Issue 40, item 4, on the local backend: what a closed communicator and a failed host task do to their users. */
class LocalLifecycleEdgesTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);

  @Test
  void theStreamOfAClosedCommunicatorIsRefusedAsNewStreamIs() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      Communicator comm = cluster.communicator(0);
      comm.close();
      IllegalStateException own = assertThrows(IllegalStateException.class, comm::stream);
      IllegalStateException made = assertThrows(IllegalStateException.class, comm::newStream);
      assertTrue(own.getMessage().contains("LocalCommunicator[rank 0 of 1, closed] is closed"), own.getMessage());
      assertTrue(made.getMessage().contains("local communicator of rank 0 is closed"), made.getMessage());
    }
  }

  /** docs/reliability.md: use after close is an IllegalStateException naming the object, for a build too. */
  @Test
  void buildingOnAClosedCommunicatorIsAnIllegalStateException() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      Communicator comm = cluster.communicator(0);
      comm.close();
      IllegalStateException e = assertThrows(IllegalStateException.class, () -> OppositeOrders.sumPlan(comm, "t.Late"));
      assertTrue(e.getMessage().contains("plan t.Late: its communicator (local rank 0)"), e.getMessage());
    }
  }

  /**
   * A host task that throws fails its stream (sticky: its synchronize throws, as a CUDA error would), but
   * involves no other rank: the rank that caught it goes on with its other streams, and the run completes.
   */
  @Test
  void aFailedHostTaskCaughtAtSynchronizeDoesNotAbortTheRun() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<Float> sums = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        try (LocalStream side = (LocalStream) comm.newStream(); F32Buffer x = F32Buffer.allocate(comm, 4)) {
          if (comm.rank() == 0) {
            side.enqueueHostTask(() -> {
              throw new ArithmeticException("a kernel of rank 0 failed");
            });
            CommPlanException e = assertThrows(CommPlanException.class, side::synchronize);
            assertTrue(e.getMessage().contains("a kernel of rank 0 failed"), e.getMessage());
            assertThrows(CommPlanException.class, side::synchronize, "the failure is sticky");
          }
          x.fill(comm.rank() + 1);
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          comm.stream().synchronize();
          return x.get(3);
        }
      }));
      assertEquals(List.of(3f, 3f), sums);
      assertTrue(!cluster.isAborted(), "the run was not aborted");
    }
  }
}
