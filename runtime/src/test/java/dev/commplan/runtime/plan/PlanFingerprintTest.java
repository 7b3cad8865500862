package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.agreement.PlanFingerprint;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.DeviceMemory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * The cross-rank plan fingerprint at build: each kind of difference is caught on every rank, with the
 * same message naming the first differing operation and both sides; the same plan passes (and runs).
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class PlanFingerprintTest {
  private static final Duration DEADLINE = Duration.ofSeconds(30);
  private static final String S = "{\"n\"}";
  private LocalCluster four;

  @BeforeAll
  void start() {
    four = new LocalCluster(4, Duration.ofSeconds(20));
  }

  @AfterAll
  void stop() {
    four.close();
  }

  /** Declares a plan on one rank. */
  interface Declaration {
    void declare(PlanBuilder b, Communicator comm);
  }

  /** The base plan, with hooks to vary it on some rank. Execution order: w, seed (step 0), grads, part (step 1). */
  private static Declaration base(Variation v) {
    return (b, comm) -> {
      int rank = comm.rank();
      int w = b.buffer("w", DataType.F32, 4096, S, null);
      int grads = b.buffer("grads", v.type(rank), v.gradsCount(rank), S, null);
      int part = b.buffer("part", DataType.F32, 1024, S, null);
      int all = b.buffer("all", DataType.F32, 1024L * comm.size(), S, null);
      int seed = b.buffer("seed", DataType.I64, 8, S, null);
      b.allReduce(0, w, w, ReduceOp.AVG);
      if (v.swap(rank)) {
        b.allGather(1, part, all);
        b.allReduce(1, grads, grads, v.op(rank));
      } else {
        b.allReduce(1, grads, grads, v.op(rank));
        if (!v.dropGather(rank)) {
          b.allGather(1, part, all);
        }
      }
      b.broadcast(0, seed, seed, v.root(rank));
    };
  }

  /** What differs, on which rank. */
  record Variation(int rank, int kind) {
    static final Variation NONE = new Variation(-1, 0);

    DataType type(int r) {
      return r == rank && kind == 1 ? DataType.F16 : DataType.F32;
    }

    long gradsCount(int r) {
      return r == rank && kind == 2 ? 4097 : 4096;
    }

    ReduceOp op(int r) {
      return r == rank && kind == 3 ? ReduceOp.MAX : ReduceOp.SUM;
    }

    int root(int r) {
      return r == rank && kind == 4 ? 3 : 0;
    }

    boolean swap(int r) {
      return r == rank && kind == 5;
    }

    boolean dropGather(int r) {
      return r == rank && kind == 6;
    }
  }

  /** Builds on every rank of {@code cluster}; each rank's plan's describe(), or the exception it threw. */
  private static List<Object> buildEverywhere(LocalCluster cluster, Declaration declaration) {
    return assertTimeoutPreemptively(DEADLINE, () -> cluster.call(comm -> {
      PlanBuilder b = new PlanBuilder("p.Grads", comm, 0);
      declaration.declare(b, comm);
      try (Plan plan = b.build()) {
        return (Object) plan.describe();
      } catch (PlanBuildException | PlanMismatchException e) { // a mismatch is a DisagreementException
        return e;
      }
    }));
  }

  /** Every rank threw a PlanMismatchException with one message; that message. */
  private static String mismatchOnEveryRank(List<Object> results, List<Integer> differing) {
    String message = null;
    for (int r = 0; r < results.size(); r++) {
      PlanMismatchException e = assertInstanceOf(PlanMismatchException.class, results.get(r), "rank " + r);
      assertEquals(differing, e.differingRanks(), e.getMessage());
      assertEquals("p.Grads", e.planName());
      if (message == null) {
        message = e.getMessage();
      } else {
        assertEquals(message, e.getMessage(), "rank " + r + "'s message");
      }
    }
    return message;
  }

  private static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from:\n" + message);
    }
  }

  @Test
  void theSamePlanPassesAndRuns() {
    List<Object> results = buildEverywhere(four, base(Variation.NONE));
    for (Object r : results) {
      assertInstanceOf(String.class, r);
    }
    List<float[]> out = assertTimeoutPreemptively(DEADLINE, () -> four.call(comm -> {
      PlanBuilder b = new PlanBuilder("p.Sum", comm, 0);
      int y = b.buffer("y", DataType.F32, 5, S, null);
      b.allReduce(0, y, y, ReduceOp.SUM);
      try (Plan plan = b.build()) {
        F32Buffer buf = (F32Buffer) plan.buffer(y);
        buf.copyFrom(new float[] {comm.rank(), 1, 2, 3, 4});
        plan.execute(comm.stream());
        comm.stream().synchronize();
        return buf.toArray();
      }
    }));
    for (float[] o : out) {
      assertEquals(6f, o[0]);
      assertEquals(4f, o[1]);
    }
  }

  @Test
  void aCountDifferenceNamesTheOperationAndBothSides() {
    String m = mismatchOnEveryRank(buildEverywhere(four, base(new Variation(2, 2))), List.of(2));
    assertMentions(m, "plan p.Grads", "rank 2 differs from ranks [0, 1, 3]", "operation #3 (step 1)",
        "rank 0: step 1 @AllReduce(op = SUM) grads F32[4096]", "rank 2: step 1 @AllReduce(op = SUM) grads F32[4097]",
        "fix: ", "dims");
  }

  @Test
  void aTypeDifferenceIsNamed() {
    String m = mismatchOnEveryRank(buildEverywhere(four, base(new Variation(1, 1))), List.of(1));
    assertMentions(m, "operation #3 (step 1)", "rank 0: step 1 @AllReduce(op = SUM) grads F32[4096]",
        "rank 1: step 1 @AllReduce(op = SUM) grads F16[4096]");
  }

  @Test
  void anOpDifferenceIsNamed() {
    String m = mismatchOnEveryRank(buildEverywhere(four, base(new Variation(3, 3))), List.of(3));
    assertMentions(m, "operation #3 (step 1)", "rank 3: step 1 @AllReduce(op = MAX) grads F32[4096]");
  }

  @Test
  void aRootDifferenceIsNamed() {
    String m = mismatchOnEveryRank(buildEverywhere(four, base(new Variation(1, 4))), List.of(1));
    assertMentions(m, "operation #2 (step 0)", "rank 0: step 0 @Broadcast(root = 0) seed I64[8]",
        "rank 1: step 0 @Broadcast(root = 3) seed I64[8]");
  }

  @Test
  void anOrderDifferenceIsNamed() {
    String m = mismatchOnEveryRank(buildEverywhere(four, base(new Variation(2, 5))), List.of(2));
    assertMentions(m, "operation #3 (step 1)", "rank 0: step 1 @AllReduce(op = SUM) grads F32[4096]",
        "rank 2: step 1 @AllGather part F32[1024] -> all F32[4096]");
  }

  @Test
  void aMissingOperationIsNamed() {
    String m = mismatchOnEveryRank(buildEverywhere(four, base(new Variation(0, 6))), List.of(0));
    // rank 0 is the odd one out: the reference is the plan most ranks built
    assertMentions(m, "rank 0 differs from ranks [1, 2, 3]", "operation #4 (step 1)",
        "rank 1: step 1 @AllGather part F32[1024] -> all F32[4096]", "rank 0: (nothing: its plan has 3 operations");
  }

  @Test
  void withTwoRanksTheLowerRankIsTheReference() {
    try (LocalCluster two = new LocalCluster(2, Duration.ofSeconds(20))) {
      String m = mismatchOnEveryRank(buildEverywhere(two, base(new Variation(0, 2))), List.of(1));
      assertMentions(m, "rank 1 differs from rank 0 (of 2)", "rank 0: step 1 @AllReduce(op = SUM) grads F32[4097]",
          "rank 1: step 1 @AllReduce(op = SUM) grads F32[4096]");
    }
  }

  @Test
  void twoDifferentDeviantsAreBothShown() {
    Declaration d = (b, comm) -> {
      int rank = comm.rank();
      int x = b.buffer("x", DataType.F32, rank == 1 ? 8 : rank == 3 ? 9 : 7, S, null);
      b.allReduce(0, x, x, ReduceOp.SUM);
    };
    String m = mismatchOnEveryRank(buildEverywhere(four, d), List.of(1, 3));
    assertMentions(m, "ranks [1, 3] differ from ranks [0, 2]", "rank 1: step 0 @AllReduce(op = SUM) x F32[8]",
        "rank 3: step 0 @AllReduce(op = SUM) x F32[9]", "rank 0: step 0 @AllReduce(op = SUM) x F32[7]");
  }

  @Test
  void sameDeclarationsButDifferentCoalescingIsCaughtAtTheSchedule() {
    Declaration d = (b, comm) -> {
      int rank = comm.rank();
      Buffer a;
      Buffer c;
      if (rank == 1) { // adjacent views of one allocation: merged into one NCCL call
        DeviceMemory block = DeviceMemory.allocate(comm, 2 * 16 * 4);
        a = Buffer.view(DataType.F32, block, 0, 16);
        c = Buffer.view(DataType.F32, block, 16 * 4, 16);
      } else {
        a = F32Buffer.allocate(comm, 16);
        c = F32Buffer.allocate(comm, 16);
      }
      int ha = b.buffer("a", DataType.F32, 16, S, a);
      int hc = b.buffer("c", DataType.F32, 16, S, c);
      b.allReduce(0, ha, ha, ReduceOp.SUM);
      b.allReduce(0, hc, hc, ReduceOp.SUM);
    };
    String m = mismatchOnEveryRank(buildEverywhere(four, d), List.of(1));
    assertMentions(m, "NCCL call #1 of the built schedule (step 0)",
        "rank 0: step 0 all-reduce F32 SUM, count 16, in place: a",
        "rank 1: step 0 all-reduce F32 SUM, count 32, in place: a, c", "coalesce", "bind buffers the same way");
  }

  @Test
  void aRankWhoseBuildFailsAloneDoesNotLeaveTheOthersWaiting() {
    Declaration d = (b, comm) -> {
      int rank = comm.rank();
      int x = b.buffer("x", DataType.F32, 8, S, null);
      int y = b.buffer("y", DataType.F32, rank == 2 ? 9 : 8, S, null); // rank 2: into a wrong count
      b.allReduce(0, x, y, ReduceOp.SUM);
    };
    List<Object> results = buildEverywhere(four, d);
    String m = mismatchOnEveryRank(results, List.of(2));
    assertMentions(m, "operation #1 (step 0)", "rank 2: step 0 @AllReduce(op = SUM) x F32[8] -> y F32[9]");
    PlanMismatchException onTwo = (PlanMismatchException) results.get(2);
    assertEquals(1, onTwo.getSuppressed().length, "rank 2's own failure is attached");
    assertMentions(onTwo.getSuppressed()[0].getMessage(), "count(y) must equal count(x)");
  }

  @Test
  void aRankThatFailsAfterTheSameDeclarationsIsNamedWithItsError() {
    Declaration d = (b, comm) -> {
      int rank = comm.rank();
      DeviceMemory block = DeviceMemory.allocate(comm, 64 * 4);
      // rank 1 binds overlapping sides to an out-of-place all-reduce; the others disjoint ones
      Buffer x = Buffer.view(DataType.F32, block, 0, 16);
      Buffer y = Buffer.view(DataType.F32, block, rank == 1 ? 8 * 4 : 32 * 4, 16);
      b.allReduce(0, b.buffer("x", DataType.F32, 16, S, x), b.buffer("y", DataType.F32, 16, S, y), ReduceOp.SUM);
    };
    List<Object> results = buildEverywhere(four, d);
    String m = mismatchOnEveryRank(results, List.of(1));
    assertMentions(m, "first difference: the build itself", "rank 0: (built without error)",
        "rank 1: build failed on this rank: PlanBuildException: [CommPlan/Overlap] plan p.Grads: @AllReduce(op = SUM, into = \"y\")"
            + " on field 'x': the buffers bound to 'x' and 'y' overlap",
        "fix: the plan failed to build on some ranks only");
    assertEquals(1, ((PlanMismatchException) results.get(1)).getSuppressed().length);
  }

  @Test
  void theSameInvalidPlanOnEveryRankGivesTheUsualErrorNotAMismatch() {
    Declaration d = (b, comm) -> {
      int rank = comm.rank();
      int x = b.buffer("x", DataType.F32, 8, S, null);
      int y = b.buffer("y", DataType.F32, 9, S, null);
      b.allReduce(0, x, y, ReduceOp.SUM);
    };
    for (Object r : buildEverywhere(four, d)) {
      PlanBuildException e = assertInstanceOf(PlanBuildException.class, r); // not a PlanMismatchException
      assertMentions(e.getMessage(), "count(y) must equal count(x)");
    }
  }

  @Test
  void oneRankIsTrivial() {
    try (LocalCluster one = new LocalCluster(1)) {
      assertInstanceOf(String.class, buildEverywhere(one, base(Variation.NONE)).getFirst());
    }
  }

  @Test
  void theCheckCanBeTurnedOff() {
    List<Object> results = assertTimeoutPreemptively(DEADLINE, () -> four.call(comm -> {
      PlanBuilder b = new PlanBuilder("p.Grads", comm, 0).fingerprintCheck(false);
      base(new Variation(2, 2)).declare(b, comm);
      try (Plan plan = b.build()) {
        return (Object) plan.describe(); // built, not run: running it would be the mismatch this check stops
      }
    }));
    assertMentions((String) results.get(2), "grads F32[4097]");
  }

  @Test
  void compareIsNullForEqualTextsAndDeterministic() {
    assertNull(PlanFingerprint.compare("p", List.of("a\nb", "a\nb", "a\nb")));
    Random random = new Random(7);
    for (int i = 0; i < 50; i++) {
      List<String> texts = new ArrayList<>();
      for (int r = 0; r < 5; r++) {
        texts.add("plan p on 5 ranks\nop 1: step 0 @AllReduce(op = SUM) x F32[" + random.nextInt(3) + "]");
      }
      PlanMismatchException e = PlanFingerprint.compare("p", texts);
      if (texts.stream().distinct().count() == 1) {
        assertNull(e);
      } else {
        assertNotNull(e);
        assertEquals(e.getMessage(), PlanFingerprint.compare("p", texts).getMessage());
        for (int r = 0; r < texts.size(); r++) { // the differing ranks are exactly those without the majority text
          String text = texts.get(r);
          long same = texts.stream().filter(text::equals).count();
          if (e.differingRanks().contains(r)) {
            assertTrue(texts.stream().anyMatch(t -> texts.stream().filter(t::equals).count() >= same && !t.equals(text)));
          }
        }
      }
    }
    PlanFingerprint f = new PlanFingerprint("p", List.of("plan p on 2 ranks", "op 1: step 0 @AllGather x U8[3]"));
    assertEquals(64, f.hex().length());
    assertEquals(f.hex(), new PlanFingerprint("p", List.of("plan p on 2 ranks", "op 1: step 0 @AllGather x U8[3]")).hex());
  }
}
