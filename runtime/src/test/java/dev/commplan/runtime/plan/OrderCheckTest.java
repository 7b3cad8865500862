package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.PlanOrderException;
import dev.commplan.runtime.local.LocalCluster;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The execute-order check every backend can run ({@link PlanBuilder#orderCheck}), seen through its own
 * call: a rank that executes another plan's step at the same place fails at the synchronize that covers
 * it, on every rank. On the local backend the rendezvous also compares the plans; here a stand-in plan of
 * a different name but the same collective shape shows that the tags, not only the rendezvous, catch it.
 */
class OrderCheckTest {
  private static Plan plan(Communicator comm, String name, boolean check) {
    PlanBuilder b = new PlanBuilder(name, comm, 0).orderCheck(check);
    int x = b.buffer("x", DataType.F32, 256, "{\"256\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    return b.build();
  }

  @Test
  void theOrderCheckAddsOneAllGatherPerStepAndPassesInOrder() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      cluster.run(comm -> {
        try (Plan a = plan(comm, "t.A", true)) {
          assertTrue(a.orderCheck());
          assertEquals(2, a.schedule().steps().getFirst().calls().size(), a.describe());
          assertTrue(a.describe().contains("$order@0 -> $order@0.all"), a.describe());
          ((F32Buffer) a.buffer(0)).fill(1f);
          for (int i = 0; i < 3; i++) {
            a.execute(comm.stream());
            comm.stream().synchronize();
          }
          float[] eight = new float[256];
          Arrays.fill(eight, 8f); // 1 -> 2 -> 4 -> 8 over two ranks
          assertArrayEquals(eight, ((F32Buffer) a.buffer(0)).toArray());
        }
        try (Plan b = plan(comm, "t.B", false)) {
          assertFalse(b.orderCheck());
          assertEquals(1, b.schedule().steps().getFirst().calls().size());
        }
      });
    }
  }

  @Test
  void anotherPlansStepAtTheSamePlaceFailsTheSynchronizeOnEveryRank() {
    // The rendezvous would catch this first (it compares plan names); verify() is tested on its own below.
    try (LocalCluster cluster = new LocalCluster(3)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        try (Plan a = plan(comm, "t.A", true); Plan b = plan(comm, "t.B", true)) {
          if (comm.rank() == 1) {
            b.execute(comm.stream());
            a.execute(comm.stream());
          } else {
            a.execute(comm.stream());
            b.execute(comm.stream());
          }
          comm.stream().synchronize();
        }
      }));
      assertTrue(hasOrder(e), e.toString());
    }
  }

  /** The tags themselves: a gathered slot that is another plan's names that plan and the rank. */
  @Test
  void verifyNamesTheOtherPlanAndTheRanks() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (dev.commplan.runtime.U8Buffer send = dev.commplan.runtime.U8Buffer.allocate(comm, 64);
            dev.commplan.runtime.U8Buffer gathered = dev.commplan.runtime.U8Buffer.allocate(comm, 3 * 64);
            dev.commplan.runtime.U8Buffer other = dev.commplan.runtime.U8Buffer.allocate(comm, 64)) {
          OrderCheck mine = OrderCheck.of("t.A", 0, send, gathered, 0, 3);
          OrderCheck.of("t.Other", 2, other, gathered, 2, 3); // writes t.Other's tag into `other`
          byte[] a = send.toArray();
          byte[] o = other.toArray();
          gathered.copyFrom(0, a, 0, 64);
          gathered.copyFrom(64, a, 0, 64);
          gathered.copyFrom(128, o, 0, 64); // rank 2 ran t.Other's step 2 here
          PlanOrderException e = assertThrows(PlanOrderException.class, mine::verify);
          assertEquals("plan t.A, step 0", e.expected());
          assertEquals("plan t.Other, step 2", e.found());
          assertEquals(List.of(2), e.differingRanks());
          gathered.copyFrom(128, a, 0, 64);
          mine.verify(); // all three agree now
        }
      });
    }
  }

  private static boolean hasOrder(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof PlanOrderException) {
        return true;
      }
    }
    return false;
  }
}
