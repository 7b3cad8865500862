package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.Peer;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.rules.CallRules;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

/**
 * Issue 17 at the plan level: Reduce, Gather, Scatter, AllToAll, Send and Recv declared through {@link
 * PlanBuilder} (built, not run: the suites run them), on rank 2 of a 4-rank local cluster. Coalescing of
 * Reduce, the order and grouping of a step's transfers, describe() and the fingerprint's lines, the guard
 * tables, and every rule with its id and a message that names the fields, the sizes and the fix.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NewCollectivesPlanTest {
  private static final String F = "{\"n\"}";
  private LocalCluster cluster;
  private Communicator comm; // rank 2 of 4

  @BeforeAll
  void start() {
    cluster = new LocalCluster(4);
    comm = cluster.call(c -> c).get(2);
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private PlanBuilder builder() {
    return new PlanBuilder("p.New", comm, 0).fingerprintCheck(false); // built on one rank only
  }

  private static String messageOf(Class<? extends Throwable> type, Executable executable) {
    return assertThrows(type, executable).getMessage();
  }

  private static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  // ---- Schedule ------------------------------------------------------------------------------------

  @Test
  void reduceCoalescesLikeAllReduceAndTheOthersDoNot() {
    PlanBuilder b = builder();
    int a = b.buffer("a", DataType.F32, 3, F, null);
    int c = b.buffer("c", DataType.F32, 5, F, null);
    int d = b.buffer("d", DataType.F32, 2, F, null); // another root: not merged with a and c
    int part = b.buffer("part", DataType.I32, 2, F, null);
    int part2 = b.buffer("part2", DataType.I32, 2, F, null);
    int all = b.buffer("all", DataType.I32, 8, "{\"ranks\", \"2\"}", null);
    int all2 = b.buffer("all2", DataType.I32, 8, "{\"ranks\", \"2\"}", null);
    b.collective(0, Collective.REDUCE, a, a, ReduceOp.SUM, 1);
    b.collective(0, Collective.REDUCE, c, c, ReduceOp.SUM, 1);
    b.collective(0, Collective.REDUCE, d, d, ReduceOp.SUM, 3);
    b.collective(0, Collective.GATHER, part, all, null, 0);
    b.collective(0, Collective.GATHER, part2, all2, null, 0);
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      assertEquals(4, calls.size(), calls.toString());
      CollectiveCall merged = calls.getFirst();
      assertEquals(Collective.REDUCE, merged.collective());
      assertEquals(8, merged.count());
      assertEquals(List.of("a", "c"), merged.fields());
      assertEquals(1, merged.root());
      assertEquals(List.of("d"), calls.get(1).fields());
      assertEquals(3, calls.get(1).root());
      assertEquals(2, calls.get(2).count()); // ncclGather's count: the send count
      assertEquals(32, calls.get(2).recvBytes(4));
      assertMentions(plan.describe(), "reduce F32 SUM root 1, count 8 (32 bytes), in place: a, c (2 fields coalesced)",
          "gather I32 root 0, count 2 (8 bytes sent, 32 received), out of place: part -> all",
          "gather I32 root 0, count 2 (8 bytes sent, 32 received), out of place: part2 -> all2");
    }
  }

  @Test
  void inPlaceSlicesAndAllToAllCountsAreNcclsArguments() {
    PlanBuilder b = builder();
    int g = b.buffer("g", DataType.F64, 12, "{\"ranks\", \"3\"}", null);
    int s = b.buffer("s", DataType.U8, 8, "{\"ranks\", \"2\"}", null);
    int x = b.buffer("x", DataType.F32, 12, "{\"ranks\", \"3\"}", null);
    int y = b.buffer("y", DataType.F32, 12, "{\"ranks\", \"3\"}", null);
    b.collective(0, Collective.GATHER, g, g, null, 1);
    b.collective(0, Collective.SCATTER, s, s, null, 3);
    b.collective(0, Collective.ALL_TO_ALL, x, y, null, -1);
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      CollectiveCall gather = calls.get(0);
      assertEquals(3, gather.count());
      assertEquals(gather.recvByteOffset() + 2 * 3 * 8, gather.sendByteOffset()); // send = recv + rank·count
      CollectiveCall scatter = calls.get(1);
      assertEquals(2, scatter.count());
      assertEquals(scatter.sendByteOffset() + 2 * 2, scatter.recvByteOffset()); // recv = send + rank·count
      CollectiveCall allToAll = calls.get(2);
      assertEquals(3, allToAll.count()); // per peer
      assertEquals(48, allToAll.sendBytes(4));
      assertEquals(48, allToAll.recvBytes(4));
      assertMentions(plan.describe(), "all-to-all F32, count 3 (48 bytes), out of place: x -> y",
          "scatter U8 root 3, count 2 (8 bytes sent, 2 received), in place: s");
    }
  }

  @Test
  void aStepsTransfersFollowItsCollectivesSendsFirstThenReceivesInPairOrder() {
    PlanBuilder b = builder();
    int ar = b.buffer("ar", DataType.F32, 4, F, null);
    int a = b.buffer("a", DataType.F32, 2, F, null);
    int c = b.buffer("c", DataType.F32, 3, F, null);
    int back = b.buffer("back", DataType.F32, 2, F, null);
    int fromC = b.buffer("fromC", DataType.F32, 3, F, null);
    int fromA = b.buffer("fromA", DataType.F32, 2, F, null);
    int fromBack = b.buffer("fromBack", DataType.F32, 2, F, null);
    b.recv(0, fromC, "(rank - 1) % ranks"); // declared before the sends: issued after them
    b.send(0, a, "(rank + 1) % ranks");
    b.allReduce(0, ar, ar, ReduceOp.MAX);
    b.send(0, c, "(rank + 1) % ranks");
    b.recv(0, fromA, "(rank - 1) % ranks");
    b.send(0, back, "rank - 1");
    b.recv(0, fromBack, "rank + 1");
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      assertEquals(List.of("ar", "a", "c", "back", "fromA", "fromC", "fromBack"),
          calls.stream().map(k -> k.fields().getFirst()).toList());
      // rank 2 of 4: neighbours 3 and 1
      assertEquals(3, calls.get(1).peer());
      assertEquals(1, calls.get(3).peer());
      assertEquals(1, calls.get(4).peer());
      assertEquals(3, calls.get(6).peer());
      assertEquals(Peer.parse("rank + 1"), calls.get(6).peerExpression());
      assertMentions(plan.describe(), "step 0: 7 calls in one group",
          "send F32 to rank 3 ((rank + 1) % ranks), count 2 (8 bytes): a",
          "recv F32 from rank 1 ((rank - 1) % ranks), count 3 (12 bytes): fromC");
    }
  }

  @Test
  void aPeerOutsideTheRanksIsInTheScheduleWithNoTransferHere() {
    LocalCluster two = new LocalCluster(2);
    try (two) {
      List<String> described = two.call(c -> {
        PlanBuilder b = new PlanBuilder("p.Edge", c, 0);
        int x = b.buffer("x", DataType.F32, 2, F, null);
        int y = b.buffer("y", DataType.F32, 2, F, null);
        b.send(0, x, "rank + 1");
        b.recv(0, y, "rank - 1");
        try (Plan plan = b.build()) { // the fingerprints agree although the ranks transfer differently
          return plan.describe();
        }
      });
      assertMentions(described.get(0), "send F32 to rank 1 (rank + 1), count 2 (8 bytes): x",
          "recv F32 from no one on this rank (rank - 1), count 2 (8 bytes, not moved): y");
      assertMentions(described.get(1), "send F32 to no one on this rank (rank + 1), count 2 (8 bytes, not moved): x",
          "recv F32 from rank 0 (rank - 1), count 2 (8 bytes): y");
    }
  }

  @Test
  void fingerprintLinesOfTheNewCollectives() {
    PlanBuilder b = builder();
    int r = b.buffer("r", DataType.BF16, 4, F, null);
    int x = b.buffer("x", DataType.F8E4M3, 4, F, null);
    int y = b.buffer("y", DataType.F8E4M3, 4, F, null);
    b.collective(1, Collective.REDUCE, r, r, ReduceOp.MAX, 2);
    b.send(0, x, "(rank + 1) % ranks");
    b.recv(0, y, "(rank - 1) % ranks");
    Declarations d = declarationsOf(b);
    Plan plan = b.build();
    try (plan) {
      List<String> lines = FingerprintLines.render("p.New", 4, false, false, d, d.ordered(), plan.schedule(), null).lines();
      assertEquals(List.of(
          "plan p.New on 4 ranks",
          "op 1: step 0 @Send(to = \"(rank + 1) % ranks\") x F8E4M3[4]",
          "op 2: step 0 @Recv(from = \"(rank - 1) % ranks\") y F8E4M3[4]",
          "op 3: step 1 @Reduce(op = MAX, root = 2) r BF16[4]",
          "call 1: step 0 send F8E4M3 to (rank + 1) % ranks, count 4: x",
          "call 2: step 0 recv F8E4M3 from (rank - 1) % ranks, count 4: y",
          "call 3: step 1 reduce BF16 MAX root 2, count 4, in place: r"), lines);
    }
  }

  @Test
  void guardTablesCountRootOnlyWritesAndSendsOnlyRead() {
    Declarations d = new Declarations(List.of(""));
    int s = d.add(d.next("s", DataType.F32, 4, F, null));
    int g = d.add(d.next("g", DataType.F32, 16, F, null));
    int t = d.add(d.next("t", DataType.F32, 4, F, null));
    int u = d.add(d.next("u", DataType.F32, 4, F, null));
    d.addCall(0, Collective.GATHER, s, g, null, 0, null, 0);
    d.addCall(0, Collective.SEND, t, t, null, -1, Peer.parse("rank + 1"), 0);
    d.addCall(0, Collective.RECV, u, u, null, -1, Peer.parse("rank - 1"), 0);
    GuardTables tables = GuardTables.of(d.ordered());
    assertArrayEquals(new int[] {g, u}, tables.written()[0]); // the gathered field on every rank; the receive
    assertArrayEquals(new int[] {s, t}, tables.read()[0]); // the send side and the sent buffer, read only
  }

  // ---- Rules ---------------------------------------------------------------------------------------

  @Test
  void sizeRulesOfGatherScatterAndAllToAll() {
    PlanBuilder gather = builder();
    gather.collective(0, Collective.GATHER, gather.buffer("part", DataType.F32, 3, "{\"h\"}", null),
        gather.buffer("all", DataType.F32, 10, "{\"10\"}", null), null, 0);
    assertMentions(messageOf(PlanBuildException.class, gather::build), "[CommPlan/GatherSize] plan p.New:"
        + " @Gather(root = 0, into = \"all\") on field 'part': count(all) must be ranks × count(part) = 4 × 3 = 12;"
        + " count(part) = 3 (shape {\"h\"}), count(all) = 10 (shape {\"10\"}), ranks = 4. Fix: make count(all) = 12");

    PlanBuilder scatter = builder();
    scatter.collective(0, Collective.SCATTER, scatter.buffer("whole", DataType.F32, 10, "{\"10\"}", null),
        scatter.buffer("mine", DataType.F32, 3, "{\"h\"}", null), null, 1);
    assertMentions(messageOf(PlanBuildException.class, scatter::build), "[CommPlan/ScatterSize]",
        "@Scatter(root = 1, into = \"mine\") on field 'whole'", "count(whole) must be ranks × count(mine) = 4 × 3 = 12",
        "Fix: make count(whole) = 12");

    PlanBuilder unequal = builder();
    unequal.collective(0, Collective.ALL_TO_ALL, unequal.buffer("x", DataType.F32, 8, F, null),
        unequal.buffer("y", DataType.F32, 12, F, null), null, -1);
    assertMentions(messageOf(PlanBuildException.class, unequal::build), "[CommPlan/AllToAllSize]",
        "@AllToAll(into = \"y\") on field 'x'", "count(y) must equal count(x)", "Fix: make count(y) = 8");

    PlanBuilder indivisible = builder();
    indivisible.collective(0, Collective.ALL_TO_ALL, indivisible.buffer("x", DataType.F32, 6, F, null),
        indivisible.buffer("y", DataType.F32, 6, F, null), null, -1);
    assertMentions(messageOf(PlanBuildException.class, indivisible::build), "[CommPlan/AllToAllSize]",
        "count(x) must hold one slice per rank, so be divisible by ranks = 4",
        "Fix: make count(x) = a multiple of ranks = 4");

    PlanBuilder inPlace = builder();
    int z = inPlace.buffer("z", DataType.I8, 8, "{\"ranks\", \"2\"}", null);
    inPlace.collective(0, Collective.ALL_TO_ALL, z, z, null, -1);
    assertMentions(messageOf(PlanBuildException.class, inPlace::build), "[CommPlan/MissingInto] plan p.New:"
        + " @AllToAll on field 'z': all-to-all has no in-place form",
        "Fix: add into = \"<field>\" naming a I8 field with @Shape({\"ranks\", \"2\"})");

    PlanBuilder gatherInPlace = builder();
    int h = gatherInPlace.buffer("h", DataType.F32, 7, "{\"7\"}", null);
    gatherInPlace.collective(0, Collective.GATHER, h, h, null, 0);
    assertMentions(messageOf(PlanBuildException.class, gatherInPlace::build), "[CommPlan/NotDivisible]",
        "not divisible by ranks = 4");
  }

  @Test
  void rootsOfReduceGatherAndScatterAreRanks() {
    for (Collective c : List.of(Collective.REDUCE, Collective.GATHER, Collective.SCATTER)) {
      PlanBuilder b = builder();
      int x = b.buffer("x", DataType.F32, 4, F, null);
      b.collective(0, c, x, x, c.hasOp() ? ReduceOp.SUM : null, 4);
      assertMentions(messageOf(PlanBuildException.class, b::build), "[CommPlan/BadRoot]",
          "@" + c.annotation(), "root 4 is not a rank of this 4-rank communicator; it must be in [0, 4)");
    }
  }

  @Test
  void unmatchedTransfersNameTheFieldAndThePeerTheyNeed() {
    PlanBuilder alone = builder();
    alone.send(2, alone.buffer("x", DataType.F32, 4, F, null), "rank + 1");
    assertMentions(messageOf(PlanBuildException.class, alone::build), "[CommPlan/UnmatchedPeer] plan p.New:"
        + " @Send(to = \"rank + 1\", step = 2) on field 'x' (F32, count 4, shape {\"n\"}) has no matching"
        + " @Recv(from = \"rank - 1\", step = 2) of F32 and count 4 in step 2",
        "Fix: declare @Recv(from = \"rank - 1\", step = 2) on a field of type F32 with @Shape({\"n\"}), or remove this send");

    PlanBuilder wrongType = builder();
    wrongType.send(0, wrongType.buffer("x", DataType.F32, 4, F, null), "(rank + 1) % ranks");
    wrongType.recv(0, wrongType.buffer("y", DataType.I32, 4, F, null), "(rank - 1) % ranks");
    assertMentions(messageOf(PlanBuildException.class, wrongType::build), "[CommPlan/UnmatchedPeer]",
        "@Send(to = \"(rank + 1) % ranks\") on field 'x'");

    PlanBuilder wrongCount = builder();
    wrongCount.send(0, wrongCount.buffer("x", DataType.F32, 4, F, null), "rank + 1");
    wrongCount.recv(0, wrongCount.buffer("y", DataType.F32, 5, F, null), "rank - 1");
    assertMentions(messageOf(PlanBuildException.class, wrongCount::build), "[CommPlan/UnmatchedPeer]", "'x'");

    PlanBuilder notInverse = builder(); // wrapped and unwrapped do not pair
    notInverse.send(0, notInverse.buffer("x", DataType.F32, 4, F, null), "rank + 1");
    notInverse.recv(0, notInverse.buffer("y", DataType.F32, 4, F, null), "(rank - 1) % ranks");
    assertMentions(messageOf(PlanBuildException.class, notInverse::build), "[CommPlan/UnmatchedPeer]",
        "@Send(to = \"rank + 1\")");

    PlanBuilder otherStep = builder();
    otherStep.send(0, otherStep.buffer("x", DataType.F32, 4, F, null), "rank + 1");
    otherStep.recv(1, otherStep.buffer("y", DataType.F32, 4, F, null), "rank - 1");
    assertMentions(messageOf(PlanBuildException.class, otherStep::build), "[CommPlan/UnmatchedPeer]", "in step 0");

    PlanBuilder extraRecv = builder();
    extraRecv.send(0, extraRecv.buffer("x", DataType.F32, 4, F, null), "rank + 1");
    extraRecv.recv(0, extraRecv.buffer("y", DataType.F32, 4, F, null), "rank - 1");
    extraRecv.recv(0, extraRecv.buffer("z", DataType.F32, 4, F, null), "rank - 1");
    assertMentions(messageOf(PlanBuildException.class, extraRecv::build), "[CommPlan/UnmatchedPeer]",
        "@Recv(from = \"rank - 1\") on field 'z'", "every receive needs a send there",
        "Fix: declare @Send(to = \"rank + 1\") on a field of type F32 with @Shape({\"n\"}), or remove this recv");

    PlanBuilder self = builder(); // rank + 0 is rank - 0: a transfer to itself pairs
    int a = self.buffer("a", DataType.F32, 4, F, null);
    int c = self.buffer("c", DataType.F32, 4, F, null);
    self.send(0, a, "rank + 0");
    self.recv(0, c, "rank + 0");
    self.build().close();
  }

  @Test
  void aPeerThatDoesNotParseIsBadPeer() {
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 4, F, null);
    assertMentions(messageOf(PlanBuildException.class, () -> b.send(1, x, "rank + x")),
        "[CommPlan/BadPeer] plan p.New: @Send(to = \"rank + x\", step = 1) on field 'x': 'rank + x' is not a peer:"
            + " k must be an integer literal >= 0, not 'x'",
        "Fix: write the peer as one of those, e.g. \"rank + 1\" or \"(rank - 1) % ranks\"");
    assertMentions(messageOf(PlanBuildException.class, () -> b.recv(0, x, "rank - 1 % ranks")), "[CommPlan/BadPeer]",
        "@Recv(from = \"rank - 1 % ranks\")", "parenthesize it");
    assertMentions(messageOf(IllegalArgumentException.class, () -> b.collective(0, Collective.SEND, x, x, null, -1)),
        "send is point-to-point: declare it with send(step, buffer, peer)");
  }

  @Test
  void rootOnlyWritesAndReceivesRaceSendsDoNot() {
    PlanBuilder reduce = builder(); // rule 19: Reduce writes its receive side, if only on the root
    int x = reduce.buffer("x", DataType.F32, 4, F, null);
    int y = reduce.buffer("y", DataType.F32, 4, F, null);
    reduce.collective(0, Collective.REDUCE, x, y, ReduceOp.SUM, 0);
    reduce.allReduce(0, y, y, ReduceOp.SUM);
    assertMentions(messageOf(PlanBuildException.class, reduce::build), "[CommPlan/StepRace]",
        "@Reduce(op = SUM, root = 0, into = \"y\") on field 'x' writes 'y'");

    PlanBuilder sendAndRecv = builder();
    int b = sendAndRecv.buffer("b", DataType.F32, 4, F, null);
    sendAndRecv.send(0, b, "(rank + 1) % ranks");
    sendAndRecv.recv(0, b, "(rank - 1) % ranks");
    assertMentions(messageOf(PlanBuildException.class, sendAndRecv::build), "[CommPlan/StepRace]",
        "@Recv(from = \"(rank - 1) % ranks\") on field 'b' writes 'b'", "@Send(to = \"(rank + 1) % ranks\")", "reads");

    PlanBuilder twoSends = builder(); // reading one buffer twice is no race
    int s = twoSends.buffer("s", DataType.F32, 4, F, null);
    int l = twoSends.buffer("l", DataType.F32, 4, F, null);
    int r = twoSends.buffer("r", DataType.F32, 4, F, null);
    twoSends.send(0, s, "rank + 1");
    twoSends.send(0, s, "rank - 1");
    twoSends.recv(0, l, "rank - 1");
    twoSends.recv(0, r, "rank + 1");
    twoSends.build().close();
  }

  // ---- Direct calls ---------------------------------------------------------------------------------

  @Test
  void directCallsCheckTheSameRules() {
    try (F32Buffer four = F32Buffer.allocate(comm, 4); F32Buffer twelve = F32Buffer.allocate(comm, 12);
        F32Buffer sixteen = F32Buffer.allocate(comm, 16)) {
      assertMentions(messageOf(IllegalArgumentException.class, () -> comm.send(four, 4, comm.stream())),
          "[CommPlan/BadPeer] send on rank 2: peer 4 is not a rank of this 4-rank communicator; it must be in [0, 4)");
      assertMentions(messageOf(IllegalArgumentException.class, () -> comm.recv(four, -1, comm.stream())),
          "[CommPlan/BadPeer] recv on rank 2: peer -1");
      assertMentions(messageOf(IllegalArgumentException.class,
          () -> comm.reduce(four, four, ReduceOp.SUM, 7, comm.stream())), "[CommPlan/BadRoot] reduce on rank 2: root 7");
      assertMentions(messageOf(BufferBindingException.class, () -> comm.gather(four, twelve, 0, comm.stream())),
          "[CommPlan/GatherSize] gather on rank 2: count(recv) must be ranks × count(send) = 4 × 4 = 16");
      assertMentions(messageOf(BufferBindingException.class, () -> comm.scatter(twelve, four, 0, comm.stream())),
          "[CommPlan/ScatterSize]");
      assertMentions(messageOf(BufferBindingException.class, () -> comm.allToAll(four, twelve, comm.stream())),
          "[CommPlan/AllToAllSize]");
      assertMentions(messageOf(BufferBindingException.class, () -> comm.allToAll(sixteen, sixteen, comm.stream())),
          "[CommPlan/Overlap]", "none: all-to-all has no in-place form");
      Buffer slice = Buffer.view(DataType.F32, sixteen.memory(), 2 * 4 * 4, 4);
      assertEquals(4, CallRules.checkCollective(Collective.GATHER, comm, slice, sixteen, null, 0, comm.stream()));
      try (F32Buffer other = F32Buffer.allocate(comm, 12)) {
        assertEquals(3, CallRules.checkCollective(Collective.ALL_TO_ALL, comm, twelve, other, null, -1, comm.stream()));
      }
      assertEquals(4, CallRules.checkPointToPoint(Collective.RECV, comm, four, 0, comm.stream()));
      assertThrows(IllegalArgumentException.class,
          () -> CallRules.checkCollective(Collective.SEND, comm, four, four, null, 1, comm.stream()));
      assertEquals("[CommPlan/BadPeer]", RuleId.BAD_PEER.tag());
    }
  }

  private static Declarations declarationsOf(PlanBuilder b) {
    try {
      java.lang.reflect.Field f = PlanBuilder.class.getDeclaredField("declarations");
      f.setAccessible(true);
      return (Declarations) f.get(b);
    } catch (ReflectiveOperationException e) {
      throw new AssertionError(e);
    }
  }
}
