package dev.commplan.runtime.agreement;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalCluster;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link Agreement#compareUnchecked}: the calls and messages that no check compared, compared on the host.
 * The checks here record only: their exchange says every stream is being captured, so a comparison due
 * (after calls 1, 3, 7, ...) is skipped, and the calls after the last such point are the unchecked tail.
 * (The end-to-end case, a local cluster's run whose last calls disagree, is in LocalAgreementCheckTest.)
 */
class UncheckedTailTest {
  private LocalCluster cluster;
  private Stream stream;

  /** Records only: a check due is skipped as if captured. */
  private static final Agreement.Exchange RECORD_ONLY = new RecordOnly();

  @BeforeEach
  void stream() {
    cluster = new LocalCluster(1);
    stream = cluster.communicator(0).stream(); // a stream with a synchronize hook, which the check asks for
  }

  @AfterEach
  void close() {
    cluster.close();
  }

  private Agreement[] ranks(int n) {
    Agreement[] a = new Agreement[n];
    for (int r = 0; r < n; r++) {
      a[r] = new Agreement(RECORD_ONLY, r, n, "world", true);
    }
    return a;
  }

  @Test
  void ranksThatMadeTheSameCallsAgree() {
    Agreement[] a = ranks(3);
    for (Agreement r : a) {
      Agreement.PlanKey plan = r.registerPlan("p.Grads");
      r.collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 8, stream);
      r.plan(plan, -1, false, stream, false);
      r.collective(Collective.BROADCAST, DataType.I32, null, 2, 4, stream);
    }
    a[0].pointToPoint(true, 1, DataType.F32, 4, stream);
    a[1].pointToPoint(false, 0, DataType.F32, 4, stream);
    a[2].pointToPoint(true, 2, DataType.BF16, 6, stream); // to itself
    a[2].pointToPoint(false, 2, DataType.BF16, 6, stream);
    assertNull(Agreement.compareUnchecked(a));
  }

  @Test
  void aCountThatDiffersIsNamedWithTheCallOnBothSides() {
    Agreement[] a = ranks(3);
    for (Agreement r : a) {
      r.collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 8, stream);
    }
    for (Agreement r : a) {
      r.collective(Collective.ALL_GATHER, DataType.F32, null, -1, r == a[2] ? 16 : 8, stream);
    }
    DisagreementException e = Agreement.compareUnchecked(a);
    assertNotNull(e);
    assertEquals(List.of(2), e.differingRanks());
    assertEquals(List.of("count"), e.differingFields());
    assertTrue(e.getMessage().contains("call 2 was, on rank 0, direct call: all-gather F32, count 8; on rank 2,"
        + " direct call: all-gather F32, count 16"), e.getMessage());
  }

  @Test
  void aPlanAndADirectCallInOppositeOrdersAreNamed() {
    Agreement[] a = ranks(2);
    Agreement.PlanKey plan = a[0].registerPlan("p.Step");
    a[1].registerPlan("p.Step");
    a[0].plan(plan, -1, false, stream, false);
    a[0].collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 8, stream);
    a[1].collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 8, stream);
    a[1].plan(plan, -1, false, stream, false);
    DisagreementException e = Agreement.compareUnchecked(a); // call 1 was a check point: call 2 is the tail
    assertNotNull(e);
    assertEquals("direct call: all-reduce F32 SUM, count 8", e.thisRank());
    assertEquals("plan p.Step, execute", e.otherRank());
    assertTrue(e.getMessage().contains("call 2 was, on rank 0, direct call"), e.getMessage());
  }

  /** Issue 34, item 3: two instances of one plan class, executed in opposite orders, are two plans. */
  @Test
  void twoInstancesOfOnePlanInOppositeOrdersAreNamedByTheirInstance() {
    Agreement[] a = ranks(2);
    Agreement.PlanKey[][] keys = new Agreement.PlanKey[2][];
    for (int r = 0; r < 2; r++) {
      keys[r] = new Agreement.PlanKey[] {a[r].registerPlan("t.Sum"), a[r].registerPlan("t.Sum")};
      for (int call = 1; call <= 3; call++) { // calls 1 and 3 are check points: 4 and 5 are the tail
        a[r].collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 8, stream);
      }
    }
    a[0].plan(keys[0][0], -1, false, stream, false);
    a[0].plan(keys[0][1], -1, false, stream, false);
    a[1].plan(keys[1][1], -1, false, stream, false);
    a[1].plan(keys[1][0], -1, false, stream, false);
    DisagreementException e = Agreement.compareUnchecked(a);
    assertNotNull(e);
    assertEquals("plan t.Sum #1, execute", e.thisRank());
    assertEquals("plan t.Sum #2, execute", e.otherRank());
    assertEquals(List.of("plan instance (another plan of the same name)"), e.differingFields());
    assertTrue(e.getMessage().contains("call 4 was, on rank 0, plan t.Sum #1, execute; on rank 1, plan t.Sum #2,"
        + " execute"), e.getMessage());
  }

  /**
   * Issue 40, item 1: a rank that closed a bucketed plan with its round open, before bucket 1, against a peer
   * that enqueued bucket 1: the record names the open round and the fields never marked ready there.
   */
  @Test
  void aPlanClosedWithItsRoundOpenIsNamedWithTheFieldsNeverMarked() {
    Agreement[] a = ranks(2);
    Agreement.PlanKey[] keys = new Agreement.PlanKey[2];
    for (int r = 0; r < 2; r++) {
      keys[r] = a[r].registerPlan("t.Grads", List.of("x", "y", "z"));
      a[r].bucket(keys[r], 0, 0, stream, false); // call 1, a check point: the tail starts at call 2
    }
    a[0].roundClosed(keys[0], 1, 0b011); // x and y never marked
    a[1].bucket(keys[1], 1, 0, stream, false);
    DisagreementException e = Agreement.compareUnchecked(a);
    assertNotNull(e);
    assertEquals("plan t.Grads, closed during a ready()/finish() round before bucket 1 was enqueued (fields never"
        + " marked ready: x, y)", e.thisRank());
    assertEquals("plan t.Grads, bucket 1 (step 0)", e.otherRank());
    assertTrue(e.getMessage().contains("call 2 was, on rank 0, plan t.Grads, closed during"), e.getMessage());
  }

  /** Ranks that all closed the plan at the same point of an open round agree. */
  @Test
  void ranksThatClosedTheSameOpenRoundAgree() {
    Agreement[] a = ranks(2);
    for (Agreement r : a) {
      Agreement.PlanKey key = r.registerPlan("t.Grads", List.of("x", "y", "z"));
      r.bucket(key, 0, 0, stream, false);
      r.roundClosed(key, 1, 0b011);
    }
    assertNull(Agreement.compareUnchecked(a));
  }

  @Test
  void aRankWithAnExtraCallIsNamed() {
    Agreement[] a = ranks(2);
    for (Agreement r : a) {
      r.collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 8, stream);
    }
    a[1].collective(Collective.REDUCE, DataType.F32, ReduceOp.MAX, 0, 8, stream);
    DisagreementException e = Agreement.compareUnchecked(a);
    assertNotNull(e);
    assertEquals("no call", e.thisRank());
    assertEquals("direct call: reduce F32 MAX root 0, count 8", e.otherRank());
    assertEquals(List.of("number of calls"), e.differingFields());
    assertTrue(e.getMessage().contains("call 2 was, on rank 0, no call; on rank 1, direct call: reduce F32 MAX root 0,"
        + " count 8 (differing: number of calls)"), e.getMessage());
  }

  @Test
  void sendsAndReceivesThatDoNotPairAreNamed() {
    Agreement[] a = ranks(2);
    a[0].pointToPoint(true, 1, DataType.F32, 4, stream);
    a[1].pointToPoint(false, 0, DataType.I32, 4, stream);
    DisagreementException e = Agreement.compareUnchecked(a);
    assertNotNull(e);
    assertEquals(List.of("data type"), e.differingFields());
    assertEquals("send F32 to rank 1, count 4", e.thisRank());
    assertEquals("recv I32 from rank 0, count 4", e.otherRank());

    Agreement[] b = ranks(2);
    b[0].pointToPoint(true, 1, DataType.F32, 4, stream);
    b[0].pointToPoint(true, 1, DataType.F32, 4, stream);
    b[1].pointToPoint(false, 0, DataType.F32, 4, stream);
    DisagreementException f = Agreement.compareUnchecked(b);
    assertNotNull(f);
    assertEquals(List.of("number of messages"), f.differingFields());
    assertTrue(f.getMessage().contains("rank 0 had sent 2 messages to rank 1 (its last: send F32 to rank 1, count 4)"
        + " where rank 1 had received 1 from it"), f.getMessage());
  }
}
