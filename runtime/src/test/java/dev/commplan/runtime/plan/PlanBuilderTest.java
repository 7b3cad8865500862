package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.local.LocalCluster;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

/**
 * PlanBuilder: the checks at build (with their messages), the layout of plan-owned buffers, coalescing,
 * in-place offsets, describe() and the plan's life cycle. Plans are built, not run (the correctness suite
 * runs them), on rank 2 of a 4-rank local cluster so that rank-dependent offsets are not zero.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlanBuilderTest {
  private static final String F = "{\"n\"}";
  private LocalCluster cluster;
  private Communicator comm; // rank 2 of 4
  private Communicator otherRank;

  @BeforeAll
  void start() {
    cluster = new LocalCluster(4);
    List<Communicator> comms = cluster.call(c -> c);
    comm = comms.get(2);
    otherRank = comms.get(1);
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private PlanBuilder builder() {
    // Built on one rank only (the others never build): the cross-rank fingerprint check is off.
    return new PlanBuilder("p.Grads", comm, 0).fingerprintCheck(false);
  }

  private static String messageOf(Class<? extends Throwable> type, Executable executable) {
    return assertThrows(type, executable).getMessage();
  }

  private static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  // ---- Layout -------------------------------------------------------------------------------------

  @Test
  void sameKeyBuffersAreContiguousInDeclarationOrderInAlignedBlocks() {
    PlanBuilder b = builder();
    int a = b.buffer("a", DataType.F32, 3, F, null);
    int x = b.buffer("x", DataType.F32, 2, F, null); // another key: MAX
    int bb = b.buffer("b", DataType.F32, 5, F, null);
    int c = b.buffer("c", DataType.F32, 7, F, null);
    int src = b.buffer("src", DataType.F32, 4, F, null);
    int dst = b.buffer("dst", DataType.F32, 4, F, null);
    int src2 = b.buffer("src2", DataType.F32, 6, F, null);
    int dst2 = b.buffer("dst2", DataType.F32, 6, F, null);
    b.allReduce(0, c, c, ReduceOp.SUM); // declared out of order on purpose: layout follows declaration order
    b.allReduce(0, a, a, ReduceOp.SUM);
    b.allReduce(0, x, x, ReduceOp.MAX);
    b.allReduce(0, bb, bb, ReduceOp.SUM);
    b.allReduce(0, src, dst, ReduceOp.SUM);
    b.allReduce(0, src2, dst2, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      Buffer pa = plan.buffer(a);
      assertEquals(0, pa.byteOffset() % 256);
      assertEquals(pa.byteOffset() + 12, plan.buffer(bb).byteOffset());
      assertEquals(pa.byteOffset() + 32, plan.buffer(c).byteOffset());
      assertEquals(0, plan.buffer(x).byteOffset() % 256);
      // Out of place: the send sides form one block, the receive sides another, each aligned.
      Buffer pSrc = plan.buffer(src);
      Buffer pDst = plan.buffer(dst);
      assertEquals(0, pSrc.byteOffset() % 256);
      assertEquals(pSrc.byteOffset() + 16, plan.buffer(src2).byteOffset());
      assertEquals(0, pDst.byteOffset() % 256);
      assertEquals(pDst.byteOffset() + 16, plan.buffer(dst2).byteOffset());
      for (int h : new int[] {a, x, bb, c, src, dst, src2, dst2}) {
        assertSame(pa.memory(), plan.buffer(h).memory(), "one allocation for the plan");
      }
    }
  }

  @Test
  void aBufferUsedByTwoCollectivesIsPlacedWithItsFirstUse() {
    PlanBuilder b = builder();
    int part = b.buffer("part", DataType.F32, 2, F, null);
    int all = b.buffer("all", DataType.F32, 8, F, null);
    int other = b.buffer("other", DataType.F32, 8, F, null);
    b.allReduce(1, all, all, ReduceOp.SUM); // step 1 uses 'all' again: it stays where step 0 put it
    b.allReduce(1, other, other, ReduceOp.SUM);
    b.allGather(0, part, all);
    try (Plan plan = b.build()) {
      long partAt = plan.buffer(part).byteOffset();
      long allAt = plan.buffer(all).byteOffset();
      long otherAt = plan.buffer(other).byteOffset();
      assertTrue(partAt < allAt && allAt < otherAt, partAt + " " + allAt + " " + otherAt);
      assertEquals(0, otherAt % 256);
      List<Step> steps = plan.schedule().steps();
      assertEquals(List.of(0, 1), steps.stream().map(Step::number).toList());
      assertEquals(2, steps.get(1).calls().size(), "'all' and 'other' are not adjacent, so they are not merged");
    }
  }

  // ---- Coalescing ---------------------------------------------------------------------------------

  @Test
  void allReduceOfThreeFieldsIsOneCall() {
    PlanBuilder b = builder();
    int w = b.buffer("w", DataType.F32, 4096, "{\"4\", \"hidden\"}", null);
    int bias = b.buffer("bias", DataType.F32, 1024, "{\"hidden\"}", null);
    int scale = b.buffer("scale", DataType.F32, 1, "{\"1\"}", null);
    b.allReduce(0, w, w, ReduceOp.AVG);
    b.allReduce(0, bias, bias, ReduceOp.AVG);
    b.allReduce(0, scale, scale, ReduceOp.AVG);
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      assertEquals(1, calls.size());
      CollectiveCall call = calls.getFirst();
      assertEquals(Collective.ALL_REDUCE, call.collective());
      assertEquals(4096 + 1024 + 1, call.count());
      assertEquals(List.of("w", "bias", "scale"), call.fields());
      assertTrue(call.inPlace());
      assertEquals(plan.buffer(w).byteOffset(), call.sendByteOffset());
      assertEquals(ReduceOp.AVG, call.op());
    }
  }

  @Test
  void allGatherOfTwoFieldsStaysTwoCalls() {
    PlanBuilder b = builder();
    int p1 = b.buffer("p1", DataType.F32, 3, F, null);
    int p2 = b.buffer("p2", DataType.F32, 5, F, null);
    int all1 = b.buffer("all1", DataType.F32, 12, F, null);
    int all2 = b.buffer("all2", DataType.F32, 20, F, null);
    b.allGather(0, p1, all1);
    b.allGather(0, p2, all2);
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      assertEquals(2, calls.size(), "a concatenation of gathered shards is rank-major, so no merging");
      assertEquals(List.of("p1"), calls.get(0).fields());
      assertEquals(3, calls.get(0).count());
      assertEquals(5, calls.get(1).count());
      // ...although the layout would have allowed it:
      assertEquals(plan.buffer(p1).byteOffset() + 12, plan.buffer(p2).byteOffset());
    }
  }

  @Test
  void onlyCallsWithTheSameKeyAreMerged() {
    PlanBuilder b = builder();
    int a = b.buffer("a", DataType.F32, 2, F, null);
    int c = b.buffer("c", DataType.F64, 2, F, null);
    int d = b.buffer("d", DataType.F32, 2, F, null);
    int e = b.buffer("e", DataType.F32, 2, F, null);
    int f = b.buffer("f", DataType.F32, 2, F, null);
    int g = b.buffer("g", DataType.F32, 2, F, null);
    b.allReduce(0, a, a, ReduceOp.SUM);
    b.allReduce(0, c, c, ReduceOp.SUM); // other type
    b.allReduce(0, d, d, ReduceOp.SUM); // merges with a: same key, and the layout puts it right after a
    b.allReduce(0, e, e, ReduceOp.MAX); // other op
    b.broadcast(0, f, f, 0);
    b.broadcast(0, g, g, 3); // other root
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      assertEquals(List.of(List.of("a", "d"), List.of("c"), List.of("e"), List.of("f"), List.of("g")),
          calls.stream().map(CollectiveCall::fields).toList());
      assertEquals(3, calls.get(4).root());
    }
  }

  @Test
  void adjacentUserBoundBuffersAreCoalescedToo() {
    try (F32Buffer block = F32Buffer.allocate(comm, 10); F32Buffer apart = F32Buffer.allocate(comm, 3)) {
      Buffer first = Buffer.view(DataType.F32, block.memory(), 0, 4);
      Buffer second = Buffer.view(DataType.F32, block.memory(), 16, 6);
      PlanBuilder b = builder();
      int h1 = b.buffer("first", DataType.F32, 4, F, first);
      int h2 = b.buffer("second", DataType.F32, 6, F, second);
      int h3 = b.buffer("apart", DataType.F32, 3, F, apart);
      b.allReduce(0, h1, h1, ReduceOp.SUM);
      b.allReduce(0, h2, h2, ReduceOp.SUM);
      b.allReduce(0, h3, h3, ReduceOp.SUM);
      try (Plan plan = b.build()) {
        List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
        assertEquals(List.of(List.of("first", "second"), List.of("apart")),
            calls.stream().map(CollectiveCall::fields).toList());
        assertEquals(10, calls.getFirst().count());
        assertSame(first, plan.buffer(h1), "a bound buffer is handed back as is");
      }
      assertFalse(block.isClosed(), "closing the plan leaves bound buffers to their owner");
    }
  }

  // ---- In place -----------------------------------------------------------------------------------

  @Test
  void inPlaceAllGatherAndReduceScatterUseNcclOffsets() {
    PlanBuilder b = builder();
    int gathered = b.buffer("gathered", DataType.F64, 8, "{\"ranks\", \"2\"}", null);
    int scattered = b.buffer("scattered", DataType.F64, 12, "{\"ranks\", \"3\"}", null);
    b.allGather(0, gathered, gathered);
    b.reduceScatter(0, scattered, scattered, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      List<CollectiveCall> calls = plan.schedule().steps().getFirst().calls();
      CollectiveCall gather = calls.get(0);
      assertEquals(2, gather.count());
      assertEquals(plan.buffer(gathered).byteOffset(), gather.recvByteOffset());
      assertEquals(gather.recvByteOffset() + 2 /* rank */ * 2 * 8, gather.sendByteOffset());
      assertTrue(gather.inPlace());
      CollectiveCall scatter = calls.get(1);
      assertEquals(3, scatter.count());
      assertEquals(plan.buffer(scattered).byteOffset(), scatter.sendByteOffset());
      assertEquals(scatter.sendByteOffset() + 2 /* rank */ * 3 * 8, scatter.recvByteOffset());
      assertTrue(scatter.inPlace());
    }
  }

  @Test
  void outOfPlaceCallsAreNotInPlaceEvenInOneBlock() {
    try (F32Buffer block = F32Buffer.allocate(comm, 5)) {
      Buffer part = Buffer.view(DataType.F32, block.memory(), 0, 1);
      Buffer all = Buffer.view(DataType.F32, block.memory(), 4, 4);
      PlanBuilder b = builder();
      int hp = b.buffer("part", DataType.F32, 1, F, part);
      int ha = b.buffer("all", DataType.F32, 4, F, all);
      b.allGather(0, hp, ha);
      try (Plan plan = b.build()) {
        assertFalse(plan.schedule().steps().getFirst().calls().getFirst().inPlace());
      }
    }
  }

  // ---- Checks and their messages ------------------------------------------------------------------

  @Test
  void fixedRanksMustMatchTheCommunicator() {
    String message = messageOf(PlanBuildException.class, () -> new PlanBuilder("p.Grads", comm, 8));
    assertMentions(message, "p.Grads", "ranks = 8", "4 ranks");
    new PlanBuilder("p.Grads", comm, 4); // matching: fine
  }

  @Test
  void dimsMustBeSetAndPositive() {
    assertMentions(messageOf(PlanBuildException.class, () -> PlanBuilder.requireDim("hidden", 0, false)),
        "'hidden'", "not set", "hidden(long)");
    assertMentions(messageOf(PlanBuildException.class, () -> PlanBuilder.requireDim("hidden", -3, true)),
        "'hidden'", "-3", "> 0");
    assertEquals(64, PlanBuilder.requireDim("hidden", 64, true));
  }

  @Test
  void allGatherReceiveMustBeRanksTimesSend() {
    PlanBuilder b = builder();
    int part = b.buffer("part", DataType.F32, 4, "{\"n\"}", null);
    int all = b.buffer("all", DataType.F32, 12, "{\"3\", \"n\"}", null);
    b.allGather(0, part, all);
    assertMentions(messageOf(PlanBuildException.class, b::build),
        "p.Grads", "@AllGather(into = \"all\")", "'part'", "count(all)", "4 × 4 = 16", "= 12", "{\"3\", \"n\"}");
  }

  @Test
  void reduceScatterSendMustBeRanksTimesReceive() {
    PlanBuilder b = builder();
    int whole = b.buffer("whole", DataType.I32, 10, "{\"10\"}", null);
    int mine = b.buffer("mine", DataType.I32, 2, "{\"2\"}", null);
    b.reduceScatter(0, whole, mine, ReduceOp.MAX);
    assertMentions(messageOf(PlanBuildException.class, b::build),
        "@ReduceScatter(op = MAX, into = \"mine\")", "'whole'", "4 × 2 = 8", "count(whole) = 10");
  }

  @Test
  void allReduceAndBroadcastSidesMustBeEqual() {
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 5, "{\"5\"}", null);
    int y = b.buffer("y", DataType.F32, 6, "{\"6\"}", null);
    b.allReduce(0, x, y, ReduceOp.SUM);
    assertMentions(messageOf(PlanBuildException.class, b::build), "'x'", "count(y)", "count(x) = 5", "count(y) = 6");
    PlanBuilder c = builder();
    int p = c.buffer("p", DataType.F32, 5, "{\"5\"}", null);
    int q = c.buffer("q", DataType.F32, 4, "{\"4\"}", null);
    c.broadcast(2, p, q, 0);
    assertMentions(messageOf(PlanBuildException.class, c::build), "@Broadcast(root = 0, into = \"q\", step = 2)");
  }

  @Test
  void inPlaceAllGatherAndReduceScatterNeedCountsDivisibleByRanks() {
    PlanBuilder b = builder();
    int all = b.buffer("all", DataType.F32, 10, "{\"10\"}", null);
    b.allGather(0, all, all);
    assertMentions(messageOf(PlanBuildException.class, b::build),
        "@AllGather", "'all'", "count 10", "{\"10\"}", "ranks = 4", "multiple of the ranks");
    PlanBuilder c = builder();
    int input = c.buffer("input", DataType.F32, 6, "{\"6\"}", null);
    c.reduceScatter(0, input, input, ReduceOp.SUM);
    assertMentions(messageOf(PlanBuildException.class, c::build), "@ReduceScatter(op = SUM)", "'input'", "count 6");
  }

  @Test
  void broadcastRootMustBeARank() {
    PlanBuilder b = builder();
    int p = b.buffer("params", DataType.F32, 5, "{\"5\"}", null);
    b.broadcast(0, p, p, 4);
    assertMentions(messageOf(PlanBuildException.class, b::build), "'params'", "root 4", "4-rank", "[0, 4)");
  }

  @Test
  void bothSidesMustHaveTheSameDataType() {
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 5, F, null);
    int y = b.buffer("y", DataType.F64, 5, F, null);
    b.allReduce(0, x, y, ReduceOp.SUM);
    assertMentions(messageOf(PlanBuildException.class, b::build), "'x' is F32", "'y' is F64");
  }

  @Test
  void boundBuffersAreCheckedAgainstTheField() {
    try (F32Buffer small = F32Buffer.allocate(comm, 4000);
        F64Buffer wrongType = F64Buffer.allocate(comm, 4096);
        F32Buffer elsewhere = F32Buffer.allocate(otherRank, 4096)) {
      String shape = "{\"4\", \"hidden\"}";
      assertMentions(messageOf(BufferBindingException.class,
              () -> builder().buffer("w", DataType.F32, 4096, shape, small)),
          "'w'", "4096", "4000", shape);
      assertMentions(messageOf(BufferBindingException.class,
              () -> builder().buffer("w", DataType.F32, 4096, shape, wrongType)),
          "'w'", "F32", "F64", shape);
      assertMentions(messageOf(BufferBindingException.class,
              () -> builder().buffer("w", DataType.F32, 4096, shape, elsewhere)),
          "'w'", "another communicator", "rank 1", "rank 2");
    }
    F32Buffer closed = F32Buffer.allocate(comm, 8);
    closed.close();
    assertMentions(messageOf(BufferBindingException.class,
        () -> builder().buffer("w", DataType.F32, 8, "{\"8\"}", closed)), "'w'", "closed");
  }

  @Test
  void collectivesOfOneStepMustNotRaceOnBoundMemory() {
    try (F32Buffer shared = F32Buffer.allocate(comm, 8)) {
      PlanBuilder b = builder();
      int x = b.buffer("x", DataType.F32, 8, F, shared);
      int y = b.buffer("y", DataType.F32, 8, F, Buffer.view(DataType.F32, shared.memory(), 0, 8));
      b.allReduce(0, x, x, ReduceOp.SUM);
      b.allReduce(0, y, y, ReduceOp.MAX);
      assertMentions(messageOf(PlanBuildException.class, b::build), "step 0", "'x'", "'y'", "another step");
    }
  }

  @Test
  void misuseOfTheBuilderIsRefused() {
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 2, F, null);
    assertThrows(IllegalArgumentException.class, () -> b.buffer("x", DataType.F32, 2, F, null));
    assertThrows(IllegalArgumentException.class, () -> b.allReduce(0, x, 7, ReduceOp.SUM));
    assertThrows(PlanBuildException.class, () -> b.buffer("empty", DataType.F32, 0, "{\"0\"}", null));
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.build().close();
    assertThrows(IllegalStateException.class, b::build);
    assertThrows(IllegalStateException.class, () -> b.allReduce(0, x, x, ReduceOp.SUM));
  }

  @Test
  void theNamedDeclarationsAreTheGenericOne() {
    PlanBuilder named = builder();
    PlanBuilder generic = builder();
    for (PlanBuilder b : List.of(named, generic)) {
      int w = b.buffer("w", DataType.F32, 8, F, null);
      int bias = b.buffer("bias", DataType.F32, 4, F, null);
      int part = b.buffer("part", DataType.F32, 2, F, null);
      int all = b.buffer("all", DataType.F32, 8, F, null);
      int whole = b.buffer("whole", DataType.F32, 8, F, null);
      if (b == named) {
        b.allReduce(0, w, w, ReduceOp.AVG);
        b.broadcast(0, bias, bias, 3);
        b.allGather(1, part, all);
        b.reduceScatter(2, whole, whole, ReduceOp.MAX);
      } else {
        b.collective(0, Collective.ALL_REDUCE, w, w, ReduceOp.AVG, -1);
        b.collective(0, Collective.BROADCAST, bias, bias, null, 3);
        b.collective(1, Collective.ALL_GATHER, part, all, null, -1);
        b.collective(2, Collective.REDUCE_SCATTER, whole, whole, ReduceOp.MAX, -1);
      }
    }
    try (Plan a = named.build(); Plan b = generic.build()) {
      assertEquals(a.describe(), b.describe());
      assertEquals(a.schedule().toDot(), b.schedule().toDot());
    }
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 8, F, null);
    assertThrows(NullPointerException.class, () -> b.collective(0, Collective.REDUCE_SCATTER, x, x, null, -1));
    assertMentions(messageOf(IllegalArgumentException.class,
        () -> b.collective(0, Collective.ALL_GATHER, x, x, ReduceOp.SUM, -1)), "all-gather takes no op");
    assertMentions(messageOf(IllegalArgumentException.class,
        () -> b.collective(0, Collective.ALL_REDUCE, x, x, ReduceOp.SUM, 0)), "all-reduce takes no root");
  }

  // ---- The plan -----------------------------------------------------------------------------------

  @Test
  void describeNamesThePlanStepsCallsAndFields() {
    PlanBuilder b = builder();
    int w = b.buffer("w", DataType.F32, 16, "{\"4\", \"hidden\"}", null);
    int bias = b.buffer("bias", DataType.F32, 4, "{\"hidden\"}", null);
    int part = b.buffer("part", DataType.BF16, 4, "{\"hidden\"}", null);
    int all = b.buffer("all", DataType.BF16, 16, "{\"ranks\", \"hidden\"}", null);
    int params = b.buffer("params", DataType.I64, 5, "{\"5\"}", null);
    b.allReduce(0, w, w, ReduceOp.AVG);
    b.allReduce(0, bias, bias, ReduceOp.AVG);
    b.allGather(1, part, all);
    b.broadcast(1, params, params, 3);
    try (Plan plan = b.build()) {
      String text = plan.describe();
      assertMentions(text, "plan p.Grads", "4 ranks", "local backend", "2 steps", "3 calls", "step 0", "step 1",
          "all-reduce F32 AVG, count 20 (80 bytes), in place: w, bias (2 fields coalesced)",
          "all-gather BF16, count 4 (8 bytes sent, 32 received), out of place: part -> all",
          "broadcast I64 root 3, count 5 (40 bytes), in place: params");
      assertTrue(text.lines().count() >= 6, text);
    }
  }

  @Test
  void aClosedPlanCannotRunAndClosingTwiceIsFine() {
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 2, F, null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    Plan plan = b.build();
    assertSame(comm, plan.communicator());
    plan.close();
    plan.close();
    assertTrue(plan.isClosed());
    assertTrue(plan.buffer(x).isClosed(), "plan-owned memory is freed with the plan");
    assertMentions(messageOf(IllegalStateException.class, () -> plan.execute(comm.stream())), "p.Grads", "closed");
  }

  @Test
  void executeRefusesAnotherRanksStreamAndClosedBoundBuffers() {
    F32Buffer mine = F32Buffer.allocate(comm, 2);
    PlanBuilder b = builder();
    int x = b.buffer("x", DataType.F32, 2, F, mine);
    b.allReduce(0, x, x, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      assertThrows(IllegalArgumentException.class, () -> plan.execute(otherRank.stream()));
      mine.close();
      assertMentions(messageOf(IllegalStateException.class, () -> plan.execute(comm.stream())), "'x'", "closed");
    }
  }

  @Test
  void countMultipliesExactlyAndNamesTheFieldOnOverflow() {
    assertEquals(4L * 1024 * 3, PlanBuilder.count("w", "{\"4\", \"hidden\", \"ranks\"}", 4L, 1024L, 3L));
    PlanBuildException e = assertThrows(PlanBuildException.class,
        () -> PlanBuilder.count("w", "{\"4\", \"hidden\"}", 4L, 1L << 62));
    assertTrue(e.getMessage().contains("field 'w' @Shape({\"4\", \"hidden\"}): 4 × 4611686018427387904 = 18446744073709551616 elements does not fit in a long"), e.getMessage());
  }
}
