package dev.commplan.runtime.plan;

import static dev.commplan.runtime.OppositeOrders.sumPlan;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.OppositeOrders;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.local.LocalCommunicator;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.api.Test;

/**
 * The execute-order check ({@link PlanBuilder#orderCheck}) is the agreement check compared right after each
 * execute of the plan: it adds no call to the plan, works where the communicator's check is off, and, with
 * plans named by their name and instance, catches two instances of one plan class executed in opposite orders
 * (issue 34, item 3), which the local backend's rendezvous, comparing names, cannot tell apart.
 */
class OrderCheckTest {
  /** The agreement check's own calls this rank's flight recorder holds (two all-gathers per comparison). */
  private static long checkCalls(Communicator comm) {
    return ((LocalCommunicator) comm).flightRecorder().snapshot().stream()
        .filter(e -> e.label().isAgreementCheck()).count();
  }

  @Test
  void theOrderCheckAddsNoCallAndComparesAfterEveryExecuteEvenWithTheCheckOff() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.defaults().withAgreementCheck(false))) {
      cluster.run(comm -> {
        try (Plan a = sumPlan(comm, "t.A", true); Plan b = sumPlan(comm, "t.B", false)) {
          assertTrue(a.orderCheck());
          assertFalse(b.orderCheck());
          assertEquals(1, a.schedule().steps().getFirst().calls().size(), a.describe());
          assertFalse(a.describe().contains("$order"), a.describe());
          ((F32Buffer) a.buffer(0)).fill(1f);
          long before = checkCalls(comm);
          for (int i = 0; i < 3; i++) {
            a.execute(comm.stream());
            comm.stream().synchronize();
          }
          assertEquals(before + 3 * 2, checkCalls(comm), "one comparison (two all-gathers) after each execute");
          b.execute(comm.stream());
          comm.stream().synchronize();
          assertEquals(before + 3 * 2, checkCalls(comm), "the check is off: a plan without the order check adds none");
          float[] eight = new float[256];
          Arrays.fill(eight, 8f); // 1 -> 2 -> 4 -> 8 over two ranks
          assertArrayEquals(eight, ((F32Buffer) a.buffer(0)).toArray());
        }
      });
    }
  }

  /**
   * Issue 34, item 3: instances p and q of one plan class (the same name and shape), executed p then q on
   * every rank but one, q then p there. Before, the sums mixed without an error (p and q both 101 where 3 and
   * 300 were due), the order check included; now every rank fails naming both instances, with the order check
   * and without it (the agreement check alone, on by default), and with the order check where the
   * communicator's agreement check is off.
   */
  @ParameterizedTest(name = "order check {0}, agreement check {1}")
  @CsvSource({"false, true", "true, true", "true, false"})
  void twoInstancesOfOnePlanClassInOppositeOrdersFailEveryRankNamingBoth(boolean orderCheck, boolean agreement) {
    try (LocalCluster cluster = new LocalCluster(3, CommOptions.defaults().withAgreementCheck(agreement))) {
      List<Object> results = cluster.call(comm -> {
        try (Plan p = sumPlan(comm, "t.Sum", orderCheck); Plan q = sumPlan(comm, "t.Sum", orderCheck)) {
          OppositeOrders.execute(comm, p, 1f, q, 100f, 1);
          return (Object) OppositeOrders.sums(p, q);
        } catch (DisagreementException e) {
          return e;
        }
      });
      for (int r = 0; r < 3; r++) {
        DisagreementException e = assertInstanceOf(DisagreementException.class, results.get(r), "rank " + r);
        String mine = r == 1 ? "plan t.Sum #2, execute" : "plan t.Sum #1, execute";
        String theirs = r == 1 ? "plan t.Sum #1, execute" : "plan t.Sum #2, execute";
        assertEquals(mine, e.thisRank(), e.getMessage());
        assertEquals(theirs, e.otherRank(), e.getMessage());
        assertEquals(r == 1 ? List.of(0, 2) : List.of(1), e.differingRanks(), e.getMessage());
        assertTrue(e.getMessage().contains("call 1 was, on rank 0, plan t.Sum #1, execute; on rank 1, plan t.Sum #2,"
            + " execute"), e.getMessage()); // the same message on every rank
        assertTrue(e.getMessage().contains("(differing: plan instance (another plan of the same name))"),
            e.getMessage());
      }
    }
  }

  /** The setting decides where the ranks compare, so it is part of the fingerprint: ranks that differ fail at build. */
  @Test
  void ranksThatDisagreeAboutTheOrderCheckFailAtBuild() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<Object> results = cluster.call(comm -> {
        try (Plan a = sumPlan(comm, "t.A", comm.rank() == 0)) {
          return (Object) a.describe();
        } catch (PlanMismatchException e) {
          return e;
        }
      });
      for (Object r : results) {
        PlanMismatchException e = assertInstanceOf(PlanMismatchException.class, r);
        assertTrue(e.getMessage().contains("order check"), e.getMessage());
      }
    }
  }
}
