package dev.commplan.runtime.local;

import static dev.commplan.runtime.OppositeOrders.sumPlan;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.OppositeOrders;
import dev.commplan.runtime.plan.Plan;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Issue 20, case 1: plans A and B, each an F32 all-reduce of 256, executed A then B on one rank and B then
 * A on another. Before the check every rank got the other plan's sums and no error; the local backend
 * hands the calls to the agreement check where the ranks meet anyway, so every rank fails naming both plans.
 */
class LocalExecuteOrderTest {
  @Test
  void plansExecutedInDifferentOrdersFailEveryRankNamingBothPlans() {
    try (LocalCluster cluster = new LocalCluster(3)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        try (Plan a = sumPlan(comm, "t.A"); Plan b = sumPlan(comm, "t.B")) {
          OppositeOrders.execute(comm, a, 1f, b, 10f, 2);
        }
      }));
      DisagreementException order = findOrder(e); // the first rank to fail: which one is a race
      assertEquals(Set.of("plan t.A, execute", "plan t.B, execute"), Set.of(order.thisRank(), order.otherRank()));
      assertTrue(order.getMessage().contains("call 1 was, on rank 0, plan t.A, execute; on rank 2, plan t.B, execute"
          + " (differing: call (another call at this place))"), order.getMessage());
    }
  }

  /**
   * Issue 25's table: a plan step and a direct call of the same shape, issued in opposite orders (before,
   * both ranks got the mixed sum and no error): every rank fails naming the plan step and the direct call.
   */
  @Test
  void aPlanStepAndADirectCallInOppositeOrdersFailEveryRank() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        try (Plan a = sumPlan(comm, "t.A"); F32Buffer direct = F32Buffer.allocate(comm, 256)) {
          OppositeOrders.executeAgainstDirectCall(comm, a, direct, 1);
        }
      }));
      DisagreementException order = findOrder(e); // the first rank to fail: which one is a race
      assertEquals(Set.of("plan t.A, execute", "direct call: all-reduce F32 SUM, count 256"),
          Set.of(order.thisRank(), order.otherRank()));
      assertEquals(List.of(order.thisRank().startsWith("plan") ? 1 : 0), order.differingRanks());
    }
  }

  @Test
  void theSameOrderOnEveryRankRunsAndSums() {
    try (LocalCluster cluster = new LocalCluster(3)) {
      cluster.run(comm -> {
        try (Plan a = sumPlan(comm, "t.A"); Plan b = sumPlan(comm, "t.B")) {
          ((F32Buffer) a.buffer(0)).fill(1f);
          ((F32Buffer) b.buffer(0)).fill(10f);
          a.execute(comm.stream());
          b.execute(comm.stream());
          comm.stream().synchronize();
          float[] three = new float[256];
          Arrays.fill(three, 3f);
          float[] thirty = new float[256];
          Arrays.fill(thirty, 30f);
          assertArrayEquals(three, ((F32Buffer) a.buffer(0)).toArray());
          assertArrayEquals(thirty, ((F32Buffer) b.buffer(0)).toArray());
        }
      });
    }
  }

  private static DisagreementException findOrder(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof DisagreementException p) {
        return p;
      }
    }
    throw new AssertionError("no DisagreementException in " + t, t);
  }
}
