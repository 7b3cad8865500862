package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.runtime.local.LocalStream;
import java.time.Duration;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * The host-access guard: host reads of a buffer that in-flight plan work writes, and host writes to one
 * that it reads or writes, throw {@link BufferInFlightException} until the stream is synchronized; a
 * failed synchronize clears nothing; executeStep marks only its step; the guard can be turned off.
 */
class HostAccessGuardTest {
  private static final String N = "{\"n\"}";

  /** A plan of rank {@code comm}: x all-reduced in place (step 0), part gathered into all (step 1). */
  private static Plan twoStepPlan(Communicator comm, int n, boolean guard) {
    PlanBuilder b = new PlanBuilder("t.Guarded", comm, 0).hostAccessGuard(guard);
    int x = b.buffer("x", DataType.F32, n, N, null);
    int part = b.buffer("part", DataType.F32, n, N, null);
    int all = b.buffer("all", DataType.F32, (long) n * comm.size(), "{\"ranks\", \"n\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allGather(1, part, all);
    assertEquals(0, x);
    assertEquals(1, part);
    assertEquals(2, all);
    return b.build();
  }

  private static BufferInFlightException inFlight(Executable access) {
    return assertThrows(BufferInFlightException.class, access);
  }

  private static void assertMentions(String message, String... parts) {
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  private static float[] random(Random random, int n) {
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] = random.nextInt(1000) - 500; // integers: sums are exact in float
    }
    return values;
  }

  @Test
  void readingWhatAnExecuteWritesBeforeSynchronizeThrowsAndSynchronizeClears() {
    int n = 64;
    try (LocalCluster cluster = new LocalCluster(2)) {
      cluster.run(comm -> {
        Random random = new Random(11 + comm.rank());
        float[][] xs = {random(new Random(11), n), random(new Random(12), n)};
        float[] partData = random(random, n);
        try (Plan plan = twoStepPlan(comm, n, true)) {
          assertTrue(plan.hostAccessGuard());
          F32Buffer x = (F32Buffer) plan.buffer(0);
          F32Buffer part = (F32Buffer) plan.buffer(1);
          F32Buffer all = (F32Buffer) plan.buffer(2);
          x.copyFrom(xs[comm.rank()]);
          part.copyFrom(partData);
          Stream stream = comm.stream();
          plan.execute(stream);

          BufferInFlightException read = inFlight(() -> all.get(0));
          assertMentions(read.getMessage(), "host read of F32Buffer", "field 'all'", "plan t.Guarded", "step 1",
              "which writes it", "LocalStream[rank " + comm.rank() + "]", "call stream.synchronize() first",
              "PlanBuilder.hostAccessGuard(false)", "-Dcommplan.hostAccessGuard=false");
          assertEquals("all", read.field());
          assertEquals("t.Guarded", read.planName());
          assertEquals(1, read.step());
          assertFalse(read.isHostWrite());
          assertTrue(read instanceof IllegalStateException);
          // Every read form is refused, of every buffer the plan writes (in place: x too).
          inFlight(() -> all.copyTo(new float[all.toArray().length]));
          inFlight(all::toArray);
          inFlight(() -> all.copyTo(0, new float[4], 0, 4));
          inFlight(() -> x.get(n - 1));
          // The send side is only read by the work: reading it is fine, writing it is refused.
          assertArrayEquals(partData, part.toArray());
          BufferInFlightException write = inFlight(() -> part.set(0, 1f));
          assertMentions(write.getMessage(), "host write to", "field 'part'", "which reads it",
              "could send the new values or the old ones");
          assertTrue(write.isHostWrite());
          inFlight(() -> part.copyFrom(new float[n]));
          inFlight(() -> part.fill(2f));
          inFlight(() -> x.copyFrom(0, new float[1], 0, 1));
          assertTrue(all.isInFlight());

          stream.synchronize();
          assertFalse(all.isInFlight());
          float[] sum = new float[n];
          for (int i = 0; i < n; i++) {
            sum[i] = xs[0][i] + xs[1][i];
          }
          assertArrayEquals(sum, x.toArray());
          assertEquals(partData[0], all.get(comm.rank() * (long) n));
          part.set(0, 5f); // writes are allowed again too

          plan.execute(stream); // a new execute guards again
          inFlight(() -> all.get(0));
          stream.synchronize();
          all.get(0);
        }
      });
    }
  }

  @Test
  void executeStepMarksOnlyTheBuffersOfThatStep() {
    int n = 16;
    try (LocalCluster cluster = new LocalCluster(2)) {
      cluster.run(comm -> {
        try (Plan plan = twoStepPlan(comm, n, true)) {
          F32Buffer x = (F32Buffer) plan.buffer(0);
          F32Buffer part = (F32Buffer) plan.buffer(1);
          F32Buffer all = (F32Buffer) plan.buffer(2);
          plan.executeStep(0, comm.stream());
          assertEquals("x", inFlight(() -> x.get(0)).field());
          all.get(0); // step 1 was not enqueued
          part.set(0, 3f);
          comm.stream().synchronize();
          plan.executeStep(1, comm.stream());
          x.set(0, 1f);
          assertEquals(1, inFlight(() -> all.get(0)).step());
          comm.stream().synchronize();
          assertEquals(3f, all.get(comm.rank() * (long) n));
        }
      });
    }
  }

  /**
   * A step marks its buffers only while another plan or step has not marked one since (the steady state
   * skips the per-buffer work): once plan B has marked a buffer that plan A also writes, A's next
   * execute must point the buffer back at A, or a read would be checked against B's synchronized work
   * and pass while A's is still running.
   */
  @Test
  void aBufferMarkedByAnotherPlanInBetweenIsMarkedAgain() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (F32Buffer shared = F32Buffer.allocate(comm, 8)) {
          Plan a = onePlanWriting(comm, "t.A", shared);
          Plan b = onePlanWriting(comm, "t.B", shared);
          Stream s = comm.stream();
          for (int round = 0; round < 3; round++) {
            a.execute(s);
            s.synchronize();
            b.execute(s);
            s.synchronize();
            a.execute(s); // a's marks were overwritten by b: marked again
            BufferInFlightException e = inFlight(() -> shared.get(0));
            assertEquals("t.A", e.planName());
            s.synchronize();
            shared.get(0);
            a.execute(s); // a's marks in place: the ticket alone moves
            assertEquals("t.A", inFlight(() -> shared.get(0)).planName());
            s.synchronize();
          }
          a.close();
          b.close();
        }
      });
    }
  }

  /** The same within one plan: two steps that write one buffer take the mark from each other. */
  @Test
  void twoStepsWritingOneBufferEachMarkItAgain() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        PlanBuilder builder = new PlanBuilder("t.TwoSteps", comm, 0);
        int x = builder.buffer("x", DataType.F32, 8, "{\"8\"}", null);
        builder.allReduce(0, x, x, ReduceOp.SUM);
        builder.allReduce(1, x, x, ReduceOp.MAX);
        try (Plan plan = builder.build()) {
          F32Buffer buffer = (F32Buffer) plan.buffer(x);
          Stream s = comm.stream();
          for (int round = 0; round < 3; round++) {
            plan.executeStep(0, s);
            assertEquals(0, inFlight(() -> buffer.get(0)).step());
            s.synchronize();
            plan.executeStep(1, s);
            assertEquals(1, inFlight(() -> buffer.get(0)).step());
            s.synchronize();
            plan.executeStep(0, s); // step 1 took the mark: step 0 marks again
            assertEquals(0, inFlight(() -> buffer.get(0)).step());
            s.synchronize();
          }
          plan.execute(s);
          assertEquals(1, inFlight(() -> buffer.get(0)).step()); // the last step that writes it
          s.synchronize();
          buffer.get(0);
        }
      });
    }
  }

  private static Plan onePlanWriting(Communicator comm, String name, F32Buffer bound) {
    PlanBuilder builder = new PlanBuilder(name, comm, 0);
    int h = builder.buffer("shared", DataType.F32, bound.length(), "{\"" + bound.length() + "\"}", bound);
    builder.allReduce(0, h, h, ReduceOp.SUM);
    return builder.build();
  }

  @Test
  void boundBuffersAreGuardedUnderTheirFieldName() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (I32Buffer counts = I32Buffer.allocate(comm, 8)) {
          PlanBuilder b = new PlanBuilder("t.Bound", comm, 0);
          int h = b.buffer("counts", DataType.I32, 8, "{\"8\"}", counts);
          b.allReduce(0, h, h, ReduceOp.SUM);
          try (Plan plan = b.build()) {
            counts.copyFrom(new int[] {1, 2, 3, 4, 5, 6, 7, 8});
            plan.execute(comm.stream());
            assertMentions(inFlight(() -> counts.get(3)).getMessage(), "I32Buffer", "field 'counts'", "t.Bound");
            comm.stream().synchronize();
            assertEquals(4, counts.get(3));
          }
        }
      });
    }
  }

  @Test
  void aFailedSynchronizeClearsNothing() {
    try (LocalCluster cluster = new LocalCluster(1, Duration.ofSeconds(20))) {
      AtomicReference<Throwable> afterFailure = new AtomicReference<>();
      assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        Plan plan = twoStepPlan(comm, 4, true);
        F32Buffer all = (F32Buffer) plan.buffer(2);
        ((LocalStream) comm.stream()).enqueueHostTask(() -> {
          throw new IllegalStateException("injected failure");
        });
        plan.execute(comm.stream());
        try {
          comm.stream().synchronize();
        } catch (RuntimeException expected) {
          // the stream failed: what the plan wrote is undefined, so it stays guarded
          afterFailure.set(assertThrows(BufferInFlightException.class, () -> all.get(0)));
          throw expected;
        }
      }));
      assertTrue(afterFailure.get() instanceof BufferInFlightException, String.valueOf(afterFailure.get()));
    }
  }

  @Test
  void hostTasksOnTheStreamRunInStreamOrderAndMayRead() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (Plan plan = twoStepPlan(comm, 4, true)) {
          F32Buffer part = (F32Buffer) plan.buffer(1);
          F32Buffer all = (F32Buffer) plan.buffer(2);
          part.copyFrom(new float[] {1, 2, 3, 4});
          float[] seen = new float[4];
          plan.execute(comm.stream());
          ((LocalStream) comm.stream()).enqueueHostTask(() -> all.copyTo(seen));
          inFlight(() -> all.get(0)); // the rank's own thread is not in stream order
          comm.stream().synchronize();
          assertArrayEquals(new float[] {1, 2, 3, 4}, seen);
        }
      });
    }
  }

  @Test
  void theGuardCanBeTurnedOffPerPlanOrByTheSystemProperty() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (Plan plan = twoStepPlan(comm, 4, false)) {
          assertFalse(plan.hostAccessGuard());
          plan.execute(comm.stream());
          ((F32Buffer) plan.buffer(2)).get(0); // not checked: the caller's responsibility
          ((F32Buffer) plan.buffer(1)).set(0, 1f);
          comm.stream().synchronize();
        }
      });
    }
    String previous = System.getProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY);
    try {
      System.clearProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY);
      assertTrue(PlanBuilder.defaultHostAccessGuard());
      System.setProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY, "false");
      assertFalse(PlanBuilder.defaultHostAccessGuard());
      try (LocalCluster cluster = new LocalCluster(1)) {
        cluster.run(comm -> {
          PlanBuilder b = new PlanBuilder("t.Off", comm, 0);
          int x = b.buffer("x", DataType.F32, 4, N, null);
          b.allReduce(0, x, x, ReduceOp.SUM);
          try (Plan plan = b.build()) {
            assertFalse(plan.hostAccessGuard());
          }
        });
      }
      System.setProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY, " TRUE ");
      assertTrue(PlanBuilder.defaultHostAccessGuard());
      System.setProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY, "maybe");
      IllegalArgumentException bad = assertThrows(IllegalArgumentException.class, PlanBuilder::defaultHostAccessGuard);
      assertMentions(bad.getMessage(), "commplan.hostAccessGuard", "maybe", "true or false");
    } finally {
      if (previous == null) {
        System.clearProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY);
      } else {
        System.setProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY, previous);
      }
    }
  }
}
