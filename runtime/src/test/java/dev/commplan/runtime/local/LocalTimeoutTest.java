package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.spi.FlightRecorder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Timeouts on the local backend: what the exception says, how accurately it fires (issue 5: between T
 * and T + max(1 s, T/2) for T of 1 and 2 s), no false timeouts over 10,000 healthy executes, the stall
 * watchdog in synchronize, the flight record and the options.
 */
class LocalTimeoutTest {
  private static final int N = 16;
  private static final String SHAPE = "{\"16\"}";

  /**
   * Plan p.Timeouts: step 0 all-reduces x (SUM), step 1 all-reduces y (MAX). Built without the
   * fingerprint check: these tests time the execute path and count its collectives, and the check would
   * be an extra collective at build (its own timeout is LocalFailureMatrixTest's "before build" case).
   */
  private static Plan twoSteps(Communicator comm) {
    PlanBuilder b = new PlanBuilder("p.Timeouts", comm, 0).fingerprintCheck(false);
    int x = b.buffer("x", DataType.F32, N, SHAPE, null);
    int y = b.buffer("y", DataType.F32, N, SHAPE, null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allReduce(1, y, y, ReduceOp.MAX);
    Plan plan = b.build();
    Random random = new Random(42 + comm.rank());
    float[] v = new float[N];
    for (int i = 0; i < N; i++) {
      v[i] = random.nextFloat();
    }
    ((F32Buffer) plan.buffer(x)).copyFrom(v);
    ((F32Buffer) plan.buffer(y)).copyFrom(v);
    return plan;
  }

  /**
   * Ranks 0 and 1 wait at step 1 for rank 2, which never comes. Both start their clocks at about the same
   * moment, so which of them times out first (and aborts the other) is up to the scheduler: the test takes
   * the first timeout, whichever rank it came from, and checks everything it says about that rank. The
   * other waiting rank must end with its own timeout or with the abort, nothing else.
   */
  @Test
  void theTimeoutNamesPlanStepCollectiveFieldRankAndWhoDidNotArrive() {
    AtomicReference<CommTimeoutException> firstTimeout = new AtomicReference<>();
    List<Throwable> others = Collections.synchronizedList(new ArrayList<>());
    try (LocalCluster cluster = new LocalCluster(3, CommOptions.timeout(Duration.ofSeconds(1))
        .withAgreementCheck(false))) { // exact sequence numbers: none of the agreement check's calls
      CommPlanException failure = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(
          CommPlanException.class, () -> cluster.run(comm -> {
            try (Plan plan = twoSteps(comm)) {
              plan.executeStep(0, comm.stream());
              comm.stream().synchronize();
              if (comm.rank() == 2) {
                return; // stops: never issues step 1
              }
              plan.executeStep(1, comm.stream());
              try {
                comm.stream().synchronize();
              } catch (CommTimeoutException e) {
                if (!firstTimeout.compareAndSet(null, e)) {
                  others.add(e);
                }
                throw e;
              } catch (RuntimeException e) {
                others.add(e);
                throw e;
              }
            }
          })));
      CommTimeoutException t = firstTimeout.get();
      assertNotNull(t, () -> "rank 0 or rank 1 should time out itself, got " + failure);
      int rank = t.rank();
      assertTrue(rank == 0 || rank == 1, () -> "only ranks 0 and 1 wait at step 1, not rank " + rank);
      assertEquals("p.Timeouts", t.planName());
      assertEquals(1, t.step());
      assertEquals("all-reduce F32 MAX, count 16", t.collective());
      assertEquals(List.of("y"), t.fields());
      assertEquals(Duration.ofSeconds(1), t.timeout());
      assertEquals(List.of(2), t.missingRanks());
      String m = t.getMessage();
      for (String part : List.of("plan p.Timeouts, step 1, all-reduce F32 MAX, count 16, fields [y]",
          "timed out on rank " + rank + " after PT1S", "ranks [0, 1] arrived, ranks [2] did not", "collective #1",
          "flight record of rank " + rank, "#0 FINISHED", "#1 STARTED", "the cluster is aborted")) {
        assertTrue(m.contains(part), () -> "'" + part + "' missing from: " + m);
      }
      for (Throwable other : others) {
        assertTrue(other instanceof CommTimeoutException || other instanceof RankAbortedException,
            () -> "the other waiting rank ends with its own timeout or the abort, not " + other);
      }
      assertTrue(cluster.isAborted());
      System.out.println("[figures] a real timeout, as rank " + rank + " sees it:\n" + t.getMessage());
    }
  }

  @Test
  void ranksNotAtTheTimedOutCollectiveFailWithAnAbortCausedByTheTimeout() {
    AtomicReference<Throwable> rank1 = new AtomicReference<>();
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofMillis(500)))) {
      assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(CommPlanException.class,
          () -> cluster.run(comm -> {
            try (F32Buffer x = F32Buffer.allocate(comm, 4)) {
              if (comm.rank() == 1) {
                try {
                  Thread.sleep(60_000); // host work that takes too long; the abort interrupts it
                } catch (InterruptedException e) {
                  rank1.set(e);
                  comm.stream().synchronize(); // the stream is failed: typed exception
                }
              }
              comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
              comm.stream().synchronize();
            } catch (RankAbortedException e) {
              if (comm.rank() == 1) {
                rank1.set(e);
              }
              throw e;
            }
          })));
    }
    RankAbortedException aborted = assertInstanceOf(RankAbortedException.class, rank1.get());
    assertInstanceOf(CommTimeoutException.class, aborted.getCause().getCause() instanceof CommTimeoutException
        ? aborted.getCause().getCause() : aborted.getCause());
    assertTrue(aborted.getMessage().contains("rank 0 failed"), aborted.getMessage());
    assertTrue(aborted.getMessage().contains("flight record of rank 1"), aborted.getMessage());
    System.out.println("[figures] a real abort, as rank 1 sees it:\n" + aborted.getMessage());
  }

  @Test
  void timeoutsFireBetweenTAndTPlusMaxOfOneSecondAndHalfT() {
    StringBuilder figures = new StringBuilder("[figures] timeout accuracy (rank 1 never arrives, 2 ranks):");
    for (long seconds : new long[] {1, 2}) {
      Duration t = Duration.ofSeconds(seconds);
      long upper = t.toNanos() + Math.max(1_000_000_000L, t.toNanos() / 2);
      List<Long> detected = new ArrayList<>();
      for (int rep = 0; rep < 5; rep++) {
        AtomicLong nanos = new AtomicLong(-1);
        try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(t))) {
          assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(CommPlanException.class,
              () -> cluster.run(comm -> {
                if (comm.rank() == 1) {
                  return;
                }
                try (Plan plan = twoSteps(comm)) {
                  long start = System.nanoTime();
                  plan.execute(comm.stream());
                  try {
                    comm.stream().synchronize();
                  } catch (CommTimeoutException e) {
                    nanos.set(System.nanoTime() - start);
                    throw e;
                  }
                }
              })));
        }
        long d = nanos.get();
        assertTrue(d >= t.toNanos() && d <= upper,
            () -> "T = " + t + ": detected after " + d / 1e6 + " ms, outside [T, T + max(1 s, T/2)]");
        detected.add(d);
      }
      Collections.sort(detected);
      figures.append(String.format(Locale.ROOT, " T=%ds: min %.1f ms, median %.1f ms, max %.1f ms (n=%d);", seconds,
          detected.getFirst() / 1e6, detected.get(detected.size() / 2) / 1e6, detected.getLast() / 1e6,
          detected.size()));
    }
    System.out.println(figures);
  }

  @Test
  void tenThousandHealthyExecutesNeverTimeOut() {
    int executes = 10_000;
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofSeconds(1))
        .withAgreementCheck(false))) { // exact sequence numbers: none of the agreement check's calls
      long start = System.nanoTime();
      List<Long> done = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> cluster.call(comm -> {
        long count = 0;
        try (Plan plan = twoSteps(comm)) {
          for (int i = 0; i < executes; i++) {
            plan.execute(comm.stream());
            comm.stream().synchronize();
            count++;
          }
        }
        return count;
      }));
      long wall = System.nanoTime() - start;
      assertEquals(List.of((long) executes, (long) executes), done);
      assertTrue(!cluster.isAborted());
      FlightRecorder.Entry last = cluster.communicator(0).flightRecorder().snapshot().getLast();
      assertEquals(FlightRecorder.State.FINISHED, last.state());
      assertEquals(2L * executes - 1, last.sequence());
      assertEquals("p.Timeouts", last.label().planName());
      System.out.printf(Locale.ROOT,
          "[figures] %d healthy executes (2 steps each, 2 ranks, T = 1 s): 0 timeouts, wall %.2f s (%.1f us per"
              + " execute + synchronize)%n", executes, wall / 1e9, wall / 1e3 / executes);
    }
  }

  @Test
  void executeAllocatesNothingWithTheFlightRecorderOn() {
    try (LocalCluster cluster = new LocalCluster(1, CommOptions.timeout(Duration.ofSeconds(30))
        .withAgreementCheck(false))) { // the plan's path alone: the agreement check's all-gathers (every 256 units) allocate what direct calls do here
      cluster.run(comm -> {
        LocalStream stream = (LocalStream) comm.stream();
        com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long id = Thread.currentThread().threadId();
        try (Plan plan = twoSteps(comm)) {
          long allocated = 0;
          for (int round = 0; round < 3; round++) { // the first rounds grow the queue and warm up the JIT
            CountDownLatch hold = new CountDownLatch(1);
            stream.enqueueHostTask(hold::await); // the worker waits: enqueue never contends for the lock
            long before = threads.getThreadAllocatedBytes(id);
            for (int i = 0; i < 2000; i++) {
              plan.execute(stream);
            }
            allocated = threads.getThreadAllocatedBytes(id) - before;
            hold.countDown();
            stream.synchronize();
          }
          long bytes = allocated;
          // Less than one byte per execute: any object made per execute (16 B at least) would be 32 KB
          // here; a one-off (the JIT deoptimizing once under load) is not a per-execute allocation.
          assertTrue(bytes < 2000, () -> "2,000 executes allocated " + bytes + " bytes");
        }
      });
    }
  }

  @Test
  void aHostTaskThatNeverEndsTimesOutInSynchronize() {
    try (LocalCluster cluster = new LocalCluster(1, CommOptions.timeout(Duration.ofMillis(400)))) {
      CountDownLatch never = new CountDownLatch(1);
      long[] took = new long[1];
      CommPlanException failure = assertTimeoutPreemptively(Duration.ofSeconds(20), () -> assertThrows(
          CommPlanException.class, () -> cluster.run(comm -> {
            ((LocalStream) comm.stream()).enqueueHostTask(never::await);
            long start = System.nanoTime();
            try {
              comm.stream().synchronize();
            } finally {
              took[0] = System.nanoTime() - start;
            }
          })));
      CommTimeoutException t = assertInstanceOf(CommTimeoutException.class, failure.getCause());
      assertEquals("host task", t.collective());
      assertTrue(t.summary().contains("made no progress"), t.summary());
      assertTrue(took[0] >= Duration.ofMillis(400).toNanos() && took[0] < Duration.ofSeconds(5).toNanos(),
          () -> took[0] / 1e6 + " ms");
      assertTrue(cluster.isAborted());
    }
  }

  @Test
  void theFlightRecordKeepsTheLastOperationsWithTheirLabels() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofSeconds(10))
        .withAgreementCheck(false))) { // exact sequence numbers: none of the agreement check's calls
      cluster.run(comm -> {
        try (Plan plan = twoSteps(comm)) {
          for (int i = 0; i < 20; i++) { // 40 operations: more than the ring keeps
            plan.execute(comm.stream());
          }
          comm.stream().synchronize();
        }
      });
      FlightRecorder recorder = cluster.communicator(1).flightRecorder();
      List<FlightRecorder.Entry> entries = recorder.snapshot();
      assertEquals(FlightRecorder.DEFAULT_CAPACITY, entries.size());
      assertEquals(40 - FlightRecorder.DEFAULT_CAPACITY, entries.getFirst().sequence());
      assertEquals(39, entries.getLast().sequence());
      assertEquals(1, entries.getLast().label().step());
      assertEquals(List.of("y"), entries.getLast().label().fields());
      assertTrue(entries.stream().allMatch(e -> e.state() == FlightRecorder.State.FINISHED));
      String text = cluster.flightRecords();
      assertTrue(text.contains("flight record of rank 0 (last 32 of 40 operations, most recent last)"), text);
      assertTrue(text.contains("#39 FINISHED"), text);
      assertTrue(text.contains("plan p.Timeouts, step 0, all-reduce F32 SUM, count 16, fields [x]"), text);
    }
  }

  @Test
  void optionsComeFromTheArgumentOrTheDocumentedProperty() {
    assertEquals(Duration.ofMinutes(5), CommOptions.DEFAULT_TIMEOUT);
    assertThrows(IllegalArgumentException.class, () -> CommOptions.timeout(Duration.ZERO));
    assertThrows(IllegalArgumentException.class, () -> new LocalCluster(2, Duration.ofSeconds(-1)));
    String before = System.getProperty(CommOptions.TIMEOUT_PROPERTY);
    try {
      System.clearProperty(CommOptions.TIMEOUT_PROPERTY);
      assertEquals(CommOptions.DEFAULT_TIMEOUT, CommOptions.defaults().timeout());
      System.setProperty(CommOptions.TIMEOUT_PROPERTY, "PT42S");
      assertEquals(Duration.ofSeconds(42), CommOptions.defaults().timeout());
      System.setProperty(CommOptions.TIMEOUT_PROPERTY, "2.5");
      assertEquals(Duration.ofMillis(2500), CommOptions.defaults().timeout());
      try (LocalCluster cluster = new LocalCluster(1)) {
        assertEquals(Duration.ofMillis(2500), cluster.timeout());
      }
      System.setProperty(CommOptions.TIMEOUT_PROPERTY, "soon");
      String m = assertThrows(IllegalArgumentException.class, CommOptions::defaults).getMessage();
      assertTrue(m.contains("commplan.timeout") && m.contains("soon"), m);
    } finally {
      if (before == null) {
        System.clearProperty(CommOptions.TIMEOUT_PROPERTY);
      } else {
        System.setProperty(CommOptions.TIMEOUT_PROPERTY, before);
      }
    }
    try (LocalCluster cluster = new LocalCluster(2, Duration.ofSeconds(7))) {
      assertEquals(Duration.ofSeconds(7), cluster.options().timeout());
      assertEquals(Duration.ofSeconds(7), cluster.rendezvousTimeout());
    }
  }
}
