package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BucketSuite;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalCluster;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What a bucketed plan is made of and what it refuses: buckets cut in reverse declaration order at the byte
 * cap's boundaries, interleaved across axes, shown by describe() and in the fingerprint; and every misuse (a
 * field marked twice, fields never marked, a consumer of another communicator, execute during a round, close
 * during a round) refused with a message naming the plan and the fields, leaving no rank waiting.
 */
class BucketedPlanTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);

  @Test
  void bucketsAreCutInReverseDeclarationOrderAtTheCap() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (Plan plan = BucketSuite.build(comm, "t.Cut", true, null)) {
          List<Schedule.Bucket> buckets = plan.schedule().buckets();
          assertEquals(BucketSuite.EXPECTED_BUCKETS, buckets.stream().map(Schedule.Bucket::fields).toList());
          assertEquals(List.of(64L, 68L, 64L, 64L, 20L, 28L), buckets.stream().map(Schedule.Bucket::bytes).toList());
          assertEquals(List.of(0, 0, 0, 0, 0, 1), buckets.stream().map(Schedule.Bucket::step).toList());
          // calls inside a bucket coalesce as a step's do: f5 and f6 are adjacent in memory, one call of 16
          assertEquals(1, buckets.getFirst().calls().size());
          assertEquals(16, buckets.getFirst().calls().getFirst().count());
          assertEquals(List.of("f5", "f6"), buckets.getFirst().calls().getFirst().fields());
          assertEquals(6, plan.buckets());
          String d = plan.describe();
          assertTrue(d.contains("buckets (bucketBytes 64), enqueued in this order as their fields are marked ready: 6"),
              d);
          assertTrue(d.contains("bucket 0, step 0: f6, f5 (64 bytes), 1 call: all-reduce F32 SUM, count 16"), d);
          assertTrue(d.contains("bucket 1, step 0: f4 (68 bytes), 1 call: all-reduce F32 SUM, count 17"), d);
          // execute still issues the whole plan, step by step
          assertTrue(d.contains("step 0: 1 call in one group"), d);
        }
      });
    }
  }

  @Test
  void aPlanWithoutBucketBytesHasNoBucketsAndNoRounds() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        PlanBuilder b = new PlanBuilder("t.Whole", comm, 0);
        int w = b.buffer("w", DataType.F32, 4, "{\"4\"}", null);
        b.allReduce(0, w, w, ReduceOp.SUM);
        try (Plan plan = b.build()) {
          assertEquals(0, plan.buckets());
          assertEquals(List.of(), plan.schedule().buckets());
          String m = assertThrows(IllegalStateException.class, () -> plan.ready(w, comm.stream())).getMessage();
          assertTrue(m.contains("plan t.Whole is not bucketed") && m.contains("bucketBytes"), m);
          assertThrows(IllegalStateException.class, () -> plan.finish(comm.stream()));
        }
        PlanBuildException e = assertThrows(PlanBuildException.class, () -> new PlanBuilder("t.Bad", comm, 0)
            .bucketBytes(-1));
        assertTrue(e.getMessage().startsWith("[CommPlan/BadBucket] plan t.Bad: bucketBytes = -1"), e.getMessage());
      });
    }
  }

  /** Over a 2x2 mesh: buckets of the world and of an axis, each cut on its own, interleaved in backward order. */
  @Test
  void bucketsOfDifferentAxesInterleaveInBackwardOrder() {
    try (LocalCluster cluster = new LocalCluster(4)) {
      List<List<List<String>>> cuts = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(world -> {
        try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
          PlanBuilder b = new PlanBuilder("t.Mesh", mesh, 0, "tp").bucketBytes(32);
          int[] h = new int[4];
          for (int i = 0; i < 4; i++) {
            h[i] = b.buffer("g" + i, DataType.F32, 8, "{\"8\"}", null);
            b.collective(0, dev.commplan.model.Collective.ALL_REDUCE, h[i], h[i], ReduceOp.SUM, -1,
                i % 2 == 0 ? "" : "tp");
          }
          try (Plan plan = b.build()) {
            for (int i = 0; i < 4; i++) {
              ((F32Buffer) plan.buffer(h[i])).fill(world.rank() + 1);
            }
            for (int i = 0; i < 4; i++) {
              plan.ready(h[i], world.stream());
            }
            plan.finish(world.stream());
            world.stream().synchronize();
            float worldSum = 1 + 2 + 3 + 4;
            int tpPeer = world.rank() ^ 1; // row-major 2x2: tp groups are {0, 1} and {2, 3}
            float tpSum = world.rank() + 1 + tpPeer + 1;
            assertArrayEquals(new float[] {worldSum, tpSum, worldSum, tpSum}, new float[] {
                ((F32Buffer) plan.buffer(h[0])).get(7), ((F32Buffer) plan.buffer(h[1])).get(7),
                ((F32Buffer) plan.buffer(h[2])).get(7), ((F32Buffer) plan.buffer(h[3])).get(7)});
            return plan.schedule().buckets().stream().map(bk -> {
              List<String> l = new java.util.ArrayList<>(bk.fields());
              l.add(bk.axis().isEmpty() ? "world" : bk.axis());
              return (List<String>) l;
            }).toList();
          }
        }
      }));
      assertEquals(List.of(List.of("g3", "tp"), List.of("g2", "world"), List.of("g1", "tp"), List.of("g0", "world")),
          cuts.getFirst());
    }
  }

  @Test
  void ranksThatCutDifferentlyFailAtBuildNamingTheBuckets() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      Exception e = assertThrows(Exception.class, () -> cluster.run(comm -> {
        PlanBuilder b = new PlanBuilder("t.Differ", comm, 0).bucketBytes(comm.rank() == 0 ? 16 : 32);
        for (int i = 0; i < 2; i++) {
          int h = b.buffer("g" + i, DataType.F32, 4, "{\"4\"}", null);
          b.allReduce(0, h, h, ReduceOp.SUM);
        }
        b.build().close();
      }));
      PlanMismatchException m = findCause(e, PlanMismatchException.class);
      assertTrue(m.getMessage().contains("bucket 0: step 0, "), m.getMessage());
    }
  }

  /**
   * Each bucket is a unit of the agreement check: one rank's bucket and another's whole execute issue the same
   * all-reduce (so the ranks meet), but the check (compared at once: the plan has the order check), read after
   * the consumer's synchronize (which waited for the communication stream), fails both, naming the bucket.
   */
  @Test
  void aBucketWhereAnotherRankExecutesTheWholePlanFailsTheAgreementCheck() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<String> messages = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        PlanBuilder b = new PlanBuilder("t.Unit", comm, 0).bucketBytes(1024).orderCheck(true);
        int g = b.buffer("g", DataType.F32, 4, "{\"4\"}", null);
        b.allReduce(0, g, g, ReduceOp.SUM);
        try (Plan plan = b.build()) {
          // with the order check, the window is compared right after the plan's unit, on the unit's stream (on
          // rank 0 the communication stream: compared when the consumer, which waited for it, is synchronized)
          if (comm.rank() == 0) {
            plan.ready(g, comm.stream());
            plan.finish(comm.stream());
          } else {
            plan.execute(comm.stream());
          }
          return assertThrows(dev.commplan.runtime.DisagreementException.class, comm.stream()::synchronize)
              .getMessage();
        }
      }));
      for (String m : messages) {
        assertTrue(m.contains("plan t.Unit, bucket 0 (step 0)") && m.contains("plan t.Unit, execute"), m);
      }
    }
  }

  @Test
  void aFieldMarkedTwiceIsRefusedAndChangesNothing() {
    runOnTwoRanks("t.Twice", (comm, plan) -> {
      plan.ready(0, comm.stream());
      String m = assertThrows(IllegalStateException.class, () -> plan.ready(0, comm.stream())).getMessage();
      assertTrue(m.contains("plan t.Twice: field 'f0' was marked ready twice in this round"), m);
      markAllBut(plan, comm.stream(), 0);
      plan.finish(comm.stream()); // the round completes normally: nothing was changed by the refusal
      comm.stream().synchronize();
      assertEquals(2f * comm.size(), ((F32Buffer) plan.buffer(0)).get(0));
    });
  }

  @Test
  void fieldsNeverMarkedAreNamedAndNoPeerIsLeftWaiting() {
    runOnTwoRanks("t.Never", (comm, plan) -> {
      plan.ready(0, comm.stream());
      plan.ready(3, comm.stream());
      String m = assertThrows(IllegalStateException.class, () -> plan.finish(comm.stream())).getMessage();
      assertTrue(m.contains("plan t.Never: finish() with fields never marked ready in this round: [f1, f2, f4, f5, f6,"
          + " late]"), m);
      comm.stream().synchronize(); // every bucket was still enqueued on every rank: nothing hangs
      assertEquals(2f * comm.size(), ((F32Buffer) plan.buffer(6)).get(0), "the unmarked fields were reduced");
      markAllBut(plan, comm.stream(), -1); // the round was reset: a full round works
      plan.finish(comm.stream());
      comm.stream().synchronize();
      assertEquals(2f * comm.size() * comm.size(), ((F32Buffer) plan.buffer(6)).get(0));
    });
  }

  @Test
  void aConsumerOfAnotherCommunicatorAndAForeignProducerAreRefused() {
    runOnTwoRanks("t.Other", (comm, plan) -> {
      try (Communicator other = comm.split(0, comm.rank())) {
        String m = assertThrows(IllegalArgumentException.class, () -> plan.finish(other.stream())).getMessage();
        assertTrue(m.contains("plan t.Other was built for") && m.contains("use a stream of that communicator"), m);
        String f = assertThrows(IndexOutOfBoundsException.class, () -> plan.ready(99, comm.stream())).getMessage();
        assertTrue(f.contains("plan t.Other has buffer handles 0..7, not 99"), f);
      }
      markAllBut(plan, comm.stream(), -1);
      plan.finish(comm.stream());
      comm.stream().synchronize();
    });
  }

  @Test
  void executeDuringAnOpenRoundIsRefusedNamingTheMarkedFields() {
    runOnTwoRanks("t.Busy", (comm, plan) -> {
      plan.ready(4, comm.stream());
      plan.ready(1, comm.stream());
      String m = assertThrows(IllegalStateException.class, () -> plan.execute(comm.stream())).getMessage();
      assertTrue(m.contains("plan t.Busy: execute() while a ready()/finish() round is open (fields marked ready:"
          + " [f1, f4])"), m);
      assertThrows(IllegalStateException.class, () -> plan.executeStep(0, comm.stream()));
      assertThrows(IllegalStateException.class, () -> plan.capture(comm.stream()));
      markAllBut(plan, comm.stream(), 4, 1);
      plan.finish(comm.stream());
      plan.execute(comm.stream()); // after the round: the whole plan, as always
      comm.stream().synchronize();
      assertEquals(2f * comm.size() * comm.size(), ((F32Buffer) plan.buffer(0)).get(0));
    });
  }

  /**
   * Every rank closes the plan at the same point of an open round: close enqueues nothing (not a collective),
   * names the unmarked fields, and the ranks' next collective meets as usual; their agreement check finds the
   * same open round on every rank.
   */
  @Test
  void closingDuringARoundNamesTheUnmarkedEnqueuesNothingAndLeavesNothingWaiting() {
    try (LocalCluster cluster = new LocalCluster(3)) {
      List<String> messages = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        Plan plan = BucketSuite.build(comm, "t.Closed", true, null);
        plan.ready(6, comm.stream());
        IllegalStateException e = assertThrows(IllegalStateException.class, plan::close);
        assertTrue(plan.isClosed());
        plan.close(); // idempotent, quiet
        try (F32Buffer x = F32Buffer.allocate(comm, 4)) {
          x.fill(1);
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          comm.stream().synchronize();
          assertEquals(comm.size(), x.get(0));
        }
        return e.getMessage();
      }));
      for (String m : messages) {
        assertTrue(m.contains("plan t.Closed was closed during a ready()/finish() round, with fields never marked"
            + " ready: [f0, f1, f2, f3, f4, f5, late]. Closing issues no collective: bucket 0 and those after it were"
            + " not enqueued on this rank"), m);
      }
    }
  }

  @Test
  void aGivenCommunicationStreamIsUsedAndLeftOpen() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        Stream side = comm.newStream();
        try (Plan plan = BucketSuite.build(comm, "t.Given", true, side)) {
          markAllBut(plan, comm.stream(), -1);
          plan.finish(comm.stream());
          comm.stream().synchronize();
        }
        side.synchronize(); // still open: the plan does not close a stream it was given
        side.close();
        String m = assertThrows(IllegalArgumentException.class,
            () -> new PlanBuilder("t.Foreign", comm, 0).commStream(comm.split(0, 0).stream())).getMessage();
        assertTrue(m.contains("plan t.Foreign: commStream(") && m.contains("not to the plan's communicator"), m);
      }));
    }
  }

  /** Marks every field of {@link BucketSuite}'s plan ready on {@code producer}, but {@code except}. */
  private static void markAllBut(Plan plan, Stream producer, int... except) {
    for (int h = 0; h < BucketSuite.fields(); h++) {
      int field = h;
      if (java.util.Arrays.stream(except).noneMatch(x -> x == field)) {
        plan.ready(h, producer);
      }
    }
  }

  private interface RankBody {
    void run(Communicator comm, Plan plan) throws Exception;
  }

  /** Builds {@link BucketSuite}'s plan on two ranks, fills every field with 2, and runs {@code body} on each. */
  private static void runOnTwoRanks(String name, RankBody body) {
    try (LocalCluster cluster = new LocalCluster(2)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        try (Plan plan = BucketSuite.build(comm, name, true, null)) {
          for (int h = 0; h < BucketSuite.fields(); h++) {
            ((F32Buffer) plan.buffer(h)).fill(2);
          }
          body.run(comm, plan);
        }
      }));
    }
  }

  private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
      for (Throwable s : c.getSuppressed()) {
        if (type.isInstance(s)) {
          return type.cast(s);
        }
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + t, t);
  }
}
