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
      // NCCL spells one of them with a lower-case t
      assertEquals("nccl" + c.annotation().replace("AllToAll", "AlltoAll"), c.ncclFunction());
    }
    assertEquals("all-to-all", Collective.ALL_TO_ALL.label());
    assertEquals("allToAll", Collective.ALL_TO_ALL.methodName());
    assertEquals("recv", Collective.RECV.methodName());
    assertSame(Collective.SEND, Collective.forAnnotation("dev.commplan.annotations.Send"));
  }

  @Test
  void operandsAndSidesOfTheNewCollectives() {
    assertTrue(Collective.REDUCE.hasOp());
    assertTrue(Collective.REDUCE.hasRoot());
    assertFalse(Collective.REDUCE.hasPeer());
    assertTrue(Collective.GATHER.hasRoot());
    assertFalse(Collective.GATHER.hasOp());
    assertTrue(Collective.SCATTER.hasRoot());
    assertFalse(Collective.ALL_TO_ALL.hasRoot());
    assertFalse(Collective.ALL_TO_ALL.hasOp());
    assertTrue(Collective.SEND.hasPeer());
    assertTrue(Collective.RECV.pointToPoint());
    assertFalse(Collective.ALL_REDUCE.pointToPoint());
    assertSame(Collective.RECV, Collective.SEND.counterpart());
    assertSame(Collective.SEND, Collective.RECV.counterpart());
    assertNull(Collective.GATHER.counterpart());
    assertEquals("to", Collective.SEND.peerAttribute());
    assertEquals("from", Collective.RECV.peerAttribute());
    // Rule 19: root-only writes still write; Send only reads, Recv only writes.
    assertTrue(Collective.REDUCE.writesRecvOnRootOnly());
    assertTrue(Collective.GATHER.writesRecvOnRootOnly());
    assertFalse(Collective.SCATTER.writesRecvOnRootOnly());
    assertFalse(Collective.ALL_REDUCE.writesRecvOnRootOnly());
    for (Collective c : Collective.values()) {
      assertEquals(c != Collective.SEND, c.writesRecv(), c.toString());
      assertEquals(c != Collective.RECV, c.readsSend(), c.toString());
    }
    assertTrue(Collective.REDUCE.elementwise());
    assertFalse(Collective.GATHER.elementwise());
    assertFalse(Collective.ALL_TO_ALL.elementwise());
    assertFalse(Collective.SEND.elementwise());
    assertSame(InPlace.NOT_ALLOWED, Collective.ALL_TO_ALL.inPlace());
    assertSame(InPlace.ONE_BUFFER, Collective.SEND.inPlace());
    assertSame(InPlace.SEND_IS_RANK_SLICE_OF_RECV, Collective.GATHER.inPlace());
    assertSame(InPlace.RECV_IS_RANK_SLICE_OF_SEND, Collective.SCATTER.inPlace());
    assertTrue(Collective.GATHER.inPlace().sliced());
    assertFalse(InPlace.NOT_ALLOWED.sliced());
    assertFalse(InPlace.ONE_BUFFER.sliced());
  }

  @Test
  void allToAllCountsAreEqualAndDivisible() {
    CountRule rule = Collective.ALL_TO_ALL.counts();
    assertSame(CountRule.SAME_DIVISIBLE, rule);
    assertTrue(rule.holds(12, 12, 3));
    assertFalse(rule.holds(12, 12, 5));
    assertFalse(rule.holds(12, 15, 3));
    assertEquals(12, rule.requiredRecv(12, 4));
    assertEquals(-1, rule.requiredRecv(10, 4));
    assertEquals(4, rule.ncclCount(12, 12, 3));
    assertEquals(3, rule.sendCounts(3));
    assertEquals(3, rule.recvCounts(3));
    assertEquals(1, CountRule.SAME.sendCounts(3));
    assertEquals(3, CountRule.RECV_IS_RANKS_TIMES_SEND.recvCounts(3));
    assertEquals(1, CountRule.RECV_IS_RANKS_TIMES_SEND.sendCounts(3));
    assertEquals(3, CountRule.SEND_IS_RANKS_TIMES_RECV.sendCounts(3));
    assertEquals(5, Collective.SCATTER.counts().ncclCount(15, 5, 3)); // ncclScatter's count is the receive count
    assertEquals(5, Collective.GATHER.counts().ncclCount(5, 15, 3)); // ncclGather's is the send count
    org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class, () -> rule.ncclCount(12, 12));
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
    assertEquals("[CommPlan/GatherSize]", Collective.GATHER.counts().violation().tag());
    assertEquals("[CommPlan/ScatterSize]", Collective.SCATTER.counts().violation().tag());
    assertEquals("[CommPlan/AllToAllSize]", Collective.ALL_TO_ALL.counts().violation().tag());
    assertEquals(15, RuleId.ALL_TO_ALL_SIZE.rule());
    assertEquals(15, RuleId.MISSING_INTO.rule());
    assertEquals(17, RuleId.BAD_PEER.rule());
    assertEquals(18, RuleId.UNMATCHED_PEER.rule());
    assertEquals("[CommPlan/UnmatchedPeer]", RuleId.UNMATCHED_PEER.tag());
  }
}
