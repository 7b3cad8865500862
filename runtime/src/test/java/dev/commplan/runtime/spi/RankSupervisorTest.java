package dev.commplan.runtime.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.local.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntPredicate;
import org.junit.jupiter.api.Test;

/**
 * The failure rules every backend's cluster shares, with a backend that only records what it is asked
 * to do. Ranks wait on latches, never on time, so no outcome depends on timing.
 */
class RankSupervisorTest {
  /** A backend whose ranks have no communicator; it records the aborts and forced aborts it is asked for. */
  private static final class Recording implements RankSupervisor.RankControl {
    final List<String> calls = Collections.synchronizedList(new ArrayList<>());
    final CountDownLatch aborted = new CountDownLatch(1);
    final AtomicInteger watched = new AtomicInteger();
    volatile boolean usable;
    /** The ranks' communicators, or null: none. */
    volatile Communicator[] communicators;
    private final int ranks;

    Recording(int ranks) {
      this.ranks = ranks;
    }

    @Override
    public Communicator communicator(int rank) {
      Communicator[] c = communicators;
      return c == null ? null : c[rank];
    }

    @Override
    public void abortRanks(int failedRank, Throwable cause, IntPredicate stillRunning) {
      List<Integer> running = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        if (stillRunning.test(r)) {
          running.add(r);
        }
      }
      calls.add("abort after rank " + failedRank + " (" + cause.getMessage() + "), running " + running);
      aborted.countDown();
    }

    @Override
    public void forceAbort(int rank) {
      calls.add("force " + rank);
    }

    @Override
    public void watch(long nowNanos) {
      watched.incrementAndGet();
    }

    @Override
    public boolean usableAfterFailure() {
      return usable;
    }
  }

  /**
   * Every rank returned, but their last calls, which no agreement check compared, disagree: the run fails,
   * naming the difference. The ranks are two one-rank local clusters, so nothing but the supervisor sees
   * both (as on NCCL, where no rendezvous compares the ranks' calls); call 1 is a check point, call 2 is not.
   */
  @Test
  void lastCallsThatDisagreeFailTheRunOnceEveryRankReturned() {
    try (LocalCluster a = new LocalCluster(1); LocalCluster b = new LocalCluster(1)) {
      Recording control = new Recording(2);
      control.communicators = new Communicator[] {a.communicator(0), b.communicator(0)};
      try (RankSupervisor s = supervisor(Duration.ofSeconds(5), control)) {
        assertEquals(List.of(0, 0), s.call(comm -> run(comm, ReduceOp.SUM)), "ranks that agree");
        CommPlanException e = assertThrows(CommPlanException.class,
            () -> s.call(comm -> run(comm, comm == control.communicators[0] ? ReduceOp.SUM : ReduceOp.MAX)));
        DisagreementException d = assertInstanceOf(DisagreementException.class, e.getCause(), e.toString());
        assertEquals(List.of("op"), d.differingFields());
        assertTrue(e.getMessage().startsWith("every rank of the test cluster returned, but world: the ranks disagree"
            + " about their calls"), e.getMessage());
        // (each is rank 0 of its own cluster: the message names them by their place in the supervisor's run)
        assertTrue(e.getMessage().contains("call 4 was, on rank 0, direct call: all-reduce F32 SUM, count 8; on rank"
            + " 1, direct call: all-reduce F32 MAX, count 8 (differing: op)"), e.getMessage());
      }
    }
  }

  /** Two all-reduces, the second with {@code op}; the first run's are calls 1 and 2, the second's 3 and 4. */
  private static int run(Communicator comm, ReduceOp op) {
    try (F32Buffer x = F32Buffer.allocate(comm, 8)) {
      comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
      comm.allReduce(x, x, op, comm.stream());
      comm.stream().synchronize();
    }
    return comm.rank();
  }

  private static RankSupervisor supervisor(Duration grace, Recording control) {
    RankSupervisor s = new RankSupervisor("test", control.ranks, grace);
    s.control(control);
    return s;
  }

  @Test
  void resultsComeBackInRankOrderOnEachRanksOwnThread() {
    Recording control = new Recording(4);
    try (RankSupervisor s = supervisor(Duration.ofSeconds(1), control)) {
      assertEquals(List.of("commplan-test-rank-0", "commplan-test-rank-1", "commplan-test-rank-2",
          "commplan-test-rank-3"), s.call(c -> Thread.currentThread().getName()));
      assertEquals(List.of("commplan-test-rank-0", "commplan-test-rank-1", "commplan-test-rank-2",
          "commplan-test-rank-3"), s.call(c -> Thread.currentThread().getName()), "the same threads run again");
      assertTrue(control.calls.isEmpty());
    }
  }

  @Test
  void theFirstFailureAbortsTheRanksStillRunningAndIsRethrown() {
    Recording control = new Recording(4);
    try (RankSupervisor s = supervisor(Duration.ofSeconds(5), control)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> s.call(c -> {
        String me = Thread.currentThread().getName();
        if (me.endsWith("-1")) {
          throw new IllegalStateException("boom");
        }
        control.aborted.await(); // the others wait until the abort, then give up
        throw new RankAbortedException("gave up", null);
      }));
      assertTrue(e.getMessage().startsWith("rank 1 of 4 failed: java.lang.IllegalStateException: boom"), e.getMessage());
      assertInstanceOf(IllegalStateException.class, e.getCause());
      assertEquals(3, e.getSuppressed().length, "ranks 0, 2 and 3's failures are suppressed");
      String abort = control.calls.getFirst();
      assertEquals("abort after rank 1 (boom), running [0, 2, 3]", abort, "the failed rank is not asked to give up");
      assertTrue(s.isBroken(), "the backend said its ranks are not usable after a failure");
      IllegalStateException refused = assertThrows(IllegalStateException.class, () -> s.call(c -> 1));
      assertTrue(refused.getMessage().contains("was aborted when rank 1 failed (boom)"), refused.getMessage());
    }
  }

  /**
   * A rank stuck in a call no timeout watches (run 11: two NCCL ranks that never joined an all-gather) is
   * named with where it was: its failure carries the stack read at the abort. The rank that failed and a
   * rank that had returned carry none.
   */
  @Test
  void aRankStillRunningAtTheAbortCarriesTheStackItHadThen() {
    Recording control = new Recording(3);
    CountDownLatch parked = new CountDownLatch(1);
    CountDownLatch returned = new CountDownLatch(1);
    try (RankSupervisor s = supervisor(Duration.ofSeconds(5), control)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> s.call(c -> {
        String me = Thread.currentThread().getName();
        if (me.endsWith("-1")) {
          return waitsWhereTheAbortFindsIt(parked);
        }
        if (me.endsWith("-2")) {
          returned.countDown();
          return 2;
        }
        parked.await();
        returned.await();
        throw new IllegalStateException("boom");
      }));
      assertEquals(List.of(), whereaboutsOf(e.getCause()), "the failed rank's own failure says where it failed");
      assertEquals(1, e.getSuppressed().length, "rank 1's failure; rank 2 returned: " + List.of(e.getSuppressed()));
      List<RankWhereabouts.WhereItWas> where = whereaboutsOf(e.getSuppressed()[0]);
      assertEquals(1, where.size(), e.getSuppressed()[0].toString());
      assertEquals("rank 1's thread was here when rank 0's failure aborted the run (its stack, read at the abort)",
          where.getFirst().getMessage());
      assertTrue(List.of(where.getFirst().getStackTrace()).stream()
          .anyMatch(f -> f.getMethodName().equals("waitsWhereTheAbortFindsIt")), List.of(where.getFirst().getStackTrace())
          .toString());
    }
  }

  private static int waitsWhereTheAbortFindsIt(CountDownLatch parked) throws InterruptedException {
    parked.countDown();
    new CountDownLatch(1).await(); // until the abort interrupts it
    return 1;
  }

  private static List<RankWhereabouts.WhereItWas> whereaboutsOf(Throwable t) {
    return java.util.Arrays.stream(t.getSuppressed()).filter(RankWhereabouts.WhereItWas.class::isInstance)
        .map(RankWhereabouts.WhereItWas.class::cast).toList();
  }

  @Test
  void aClusterWhoseRanksSurviveAFailureRunsAgain() {
    Recording control = new Recording(1);
    control.usable = true;
    try (RankSupervisor s = supervisor(Duration.ofSeconds(5), control)) {
      assertThrows(CommPlanException.class, () -> s.call(c -> {
        throw new IllegalStateException("boom");
      }));
      assertFalse(s.isBroken());
      assertEquals(List.of(7), s.call(c -> 7));
      assertFalse(s.isAborted(), "a new run starts without the last one's abort");
    }
  }

  @Test
  void aRankBlockedInItsOwnCodeIsInterrupted() {
    Recording control = new Recording(2);
    CountDownLatch blocked = new CountDownLatch(1);
    try (RankSupervisor s = supervisor(Duration.ofSeconds(30), control)) {
      CommPlanException e = assertTimeoutPreemptively(Duration.ofSeconds(10), () -> assertThrows(CommPlanException.class,
          () -> s.call(c -> {
            if (Thread.currentThread().getName().endsWith("-0")) {
              blocked.await(); // fail only once rank 1 is inside its own code
              throw new IllegalStateException("boom");
            }
            blocked.countDown();
            new CountDownLatch(1).await(); // forever, unless interrupted
            return null;
          })));
      assertInstanceOf(InterruptedException.class, e.getSuppressed()[0]);
      assertTrue(control.calls.stream().noneMatch(c -> c.startsWith("force")), control.calls.toString());
    }
  }

  @Test
  void aRankThatIgnoresTheAbortIsForcedThenLeftBehind() throws InterruptedException {
    Recording control = new Recording(2);
    AtomicBoolean release = new AtomicBoolean();
    CountDownLatch stuckEnded = new CountDownLatch(1);
    CountDownLatch spinning = new CountDownLatch(1);
    try (RankSupervisor s = supervisor(Duration.ofMillis(200), control)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> s.call(c -> {
        if (Thread.currentThread().getName().endsWith("-0")) {
          spinning.await(); // fail only once rank 1 is inside its own code
          throw new IllegalStateException("boom");
        }
        spinning.countDown();
        while (!release.get()) {
          Thread.onSpinWait(); // ignores interrupts: neither the abort nor the interrupt stops it
        }
        stuckEnded.countDown();
        return null;
      }));
      assertEquals(List.of("force 1"), control.calls.subList(1, control.calls.size()));
      RankAbortedException left = assertInstanceOf(RankAbortedException.class, e.getSuppressed()[0]);
      assertTrue(left.getMessage().contains("rank 1 did not stop within PT0.4S") && left.getMessage().contains("left behind"),
          left.getMessage());
      assertTrue(s.isBroken());
      release.set(true);
      assertTrue(stuckEnded.await(10, TimeUnit.SECONDS));
    }
  }

  @Test
  void anAbortReportedByTheBackendBetweenRunsRefusesTheNext() {
    Recording control = new Recording(2);
    try (RankSupervisor s = supervisor(Duration.ofSeconds(1), control)) {
      s.abort(1, new IllegalStateException("a stream's work failed"));
      assertEquals("abort after rank 1 (a stream's work failed), running [0]", control.calls.getFirst());
      IllegalStateException refused = assertThrows(IllegalStateException.class, () -> s.call(c -> 1));
      assertTrue(refused.getMessage().contains("rank 1 failed between runs"), refused.getMessage());
    }
  }

  @Test
  void theCallerWatchesWhileATaskRuns() {
    Recording control = new Recording(1);
    try (RankSupervisor s = supervisor(Duration.ofSeconds(1), control)) {
      s.call(c -> {
        long until = System.nanoTime() + 50_000_000L;
        while (control.watched.get() < 5 && System.nanoTime() - until < 0) {
          Thread.onSpinWait();
        }
        return null;
      });
      assertTrue(control.watched.get() >= 5, "watched " + control.watched.get() + " times");
    }
  }

  /**
   * The leak tests count live threads right after a close: close() returns once the rank threads have ended,
   * not only once their executors say so (they do while the thread is still on its way out). Many closes,
   * each checked at once, since one close rarely lands in that window.
   */
  @Test
  void closeReturnsOnceEveryRankThreadHasEnded() {
    for (int i = 0; i < 300; i++) {
      Recording control = new Recording(4);
      RankSupervisor s = supervisor(Duration.ofSeconds(1), control);
      List<Thread> threads = s.call(c -> Thread.currentThread());
      s.close();
      for (Thread t : threads) {
        assertFalse(t.isAlive(), "close " + i + ": " + t.getName() + " is still alive");
      }
    }
  }

  @Test
  void oneTaskAtATimeAndNoneAfterClose() throws InterruptedException {
    Recording control = new Recording(1);
    RankSupervisor s = supervisor(Duration.ofSeconds(1), control);
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch leave = new CountDownLatch(1);
    Thread first = Thread.ofPlatform().start(() -> s.call(c -> {
      inside.countDown();
      leave.await();
      return null;
    }));
    assertTrue(inside.await(10, TimeUnit.SECONDS));
    IllegalStateException busy = assertThrows(IllegalStateException.class, () -> s.call(c -> 1));
    assertTrue(busy.getMessage().contains("one at a time"), busy.getMessage());
    leave.countDown();
    first.join();
    s.close();
    assertThrows(IllegalStateException.class, () -> s.call(c -> 1));
  }
}
