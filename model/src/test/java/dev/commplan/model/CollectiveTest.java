package dev.commplan.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class CollectiveTest {
  @Test
  void namesFollowTheAnnotation() {
    assertEquals("all-reduce", Collective.ALL_REDUCE.label());
    assertEquals("reduce-scatter", Collective.REDUCE_SCATTER.label());
    assertEquals("allGather", Collective.ALL_GATHER.methodName());
    assertEquals("broadcast", Collective.BROADCAST.methodName());
    assertSame(Collective.ALL_GATHER, Collective.forAnnotation("dev.commplan.annotations.AllGather"));
    assertNull(Collective.forAnnotation("dev.commplan.annotations.Shape"));
    for (Collective c : Collective.values()) {
      assertEquals("nccl" + c.annotation(), c.ncclFunction());
    }
  }

  @Test
  void countRulesHoldExactlyAndNeverOverflow() {
    assertTrue(CountRule.SAME.holds(7, 7, 3));
    assertFalse(CountRule.SAME.holds(7, 8, 3));
    assertTrue(CountRule.RECV_IS_RANKS_TIMES_SEND.holds(5, 15, 3));
    assertFalse(CountRule.RECV_IS_RANKS_TIMES_SEND.holds(5, 16, 3));
    assertTrue(CountRule.SEND_IS_RANKS_TIMES_RECV.holds(15, 5, 3));
    assertFalse(CountRule.SEND_IS_RANKS_TIMES_RECV.holds(16, 5, 3));
    // ranks × send beyond a long: no wrap-around can make it hold
    long big = Long.MAX_VALUE / 2 + 1;
    assertFalse(CountRule.RECV_IS_RANKS_TIMES_SEND.holds(big, big * 2, 2)); // big * 2 wraps negative
    assertEquals(-1, CountRule.RECV_IS_RANKS_TIMES_SEND.requiredRecv(big, 2));
    assertEquals(-1, CountRule.SEND_IS_RANKS_TIMES_RECV.requiredRecv(10, 3));
    assertEquals(5, CountRule.SEND_IS_RANKS_TIMES_RECV.requiredRecv(15, 3));
    assertEquals(45, CountRule.RECV_IS_RANKS_TIMES_SEND.requiredRecv(15, 3));
    assertEquals(5, CountRule.SEND_IS_RANKS_TIMES_RECV.ncclCount(15, 5));
    assertEquals(15, CountRule.RECV_IS_RANKS_TIMES_SEND.ncclCount(15, 45));
  }

  @Test
  void everyCountRuleReportsUnderItsId() {
    assertEquals("[CommPlan/GatherSize]", Collective.ALL_GATHER.counts().violation().tag());
    assertEquals("[CommPlan/ScatterSize]", Collective.REDUCE_SCATTER.counts().violation().tag());
    assertEquals("[CommPlan/CountMismatch]", Collective.ALL_REDUCE.counts().violation().tag());
    assertEquals(1, RuleId.GATHER_SIZE.rule());
  }
}
