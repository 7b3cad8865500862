package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The failure model holds for sends and receives on the local backend: a mismatch fails both ranks with
 * one message naming both sides, a receive whose send never comes times out naming the plan, step and
 * peer, and a failing rank wakes a rank waiting for its transfer.
 */
class LocalPointToPointFailureTest {
  private static Throwable rootOf(Throwable t) {
    Throwable c = t;
    while (c.getCause() != null && c.getCause() != c) {
      c = c.getCause();
    }
    return c;
  }

  private static String chain(Throwable t) {
    StringBuilder s = new StringBuilder();
    for (Throwable c = t; c != null; c = c.getCause() == c ? null : c.getCause()) {
      s.append(c.getMessage()).append(" | ");
      for (Throwable suppressed : c.getSuppressed()) {
        s.append(suppressed.getMessage()).append(" | ");
      }
    }
    return s.toString();
  }

  @Test
  void aSizeMismatchFailsBothRanksNamingBothSides() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofSeconds(20)))) {
      CommPlanException e = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertThrows(CommPlanException.class,
          () -> cluster.run(comm -> {
            try (F32Buffer four = F32Buffer.allocate(comm, 4); F32Buffer eight = F32Buffer.allocate(comm, 8)) {
              if (comm.rank() == 0) {
                comm.send(four, 1, comm.stream());
              } else {
                comm.recv(eight, 0, comm.stream());
              }
              comm.stream().synchronize();
            }
          })));
      String all = chain(e);
      assertTrue(all.contains("world: rank 0's sends to rank 1 and rank 1's receives from rank 0 disagree: a message"
          + " was, on rank 0, send F32 to rank 1, count 4; on rank 1, recv F32 from rank 0, count 8 (differing:"
          + " count)"), all);
    }
  }

  @Test
  void aReceiveWhoseSendNeverComesTimesOutNamingPlanStepAndPeer() {
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofMillis(700)))) {
      CommPlanException e = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertThrows(CommPlanException.class,
          () -> cluster.run(comm -> {
            PlanBuilder b = new PlanBuilder("t.Stuck", comm, 0).fingerprintCheck(false);
            int x = b.buffer("x", DataType.F32, 3, "{\"3\"}", null);
            int y = b.buffer("y", DataType.F32, 3, "{\"3\"}", null);
            b.send(3, x, "rank - 1");
            b.recv(3, y, "rank + 1");
            try (Plan plan = b.build()) {
              if (comm.rank() == 0) {
                plan.execute(comm.stream()); // rank 0 receives from rank 1, which never executes
                comm.stream().synchronize();
              }
            }
          })));
      Throwable root = rootOf(e);
      CommTimeoutException timeout = assertInstanceOf(CommTimeoutException.class, root, chain(e));
      assertEquals("t.Stuck", timeout.planName());
      assertEquals(3, timeout.step());
      assertEquals(List.of(1), timeout.missingRanks());
      assertTrue(timeout.getMessage().contains("waiting for rank 1 to send to it (recv F32 from rank 1, count 3 (plan"
          + " t.Stuck, step 3, recv F32 from rank 1, count 3, fields [y]))"), timeout.getMessage());
    }
  }

  @Test
  void aFailingRankWakesTheRankWaitingForItsSend() {
    long started = System.nanoTime();
    try (LocalCluster cluster = new LocalCluster(2, CommOptions.timeout(Duration.ofSeconds(60)))) {
      CommPlanException e = assertTimeoutPreemptively(Duration.ofSeconds(30), () -> assertThrows(CommPlanException.class,
          () -> cluster.run(comm -> {
            try (F32Buffer y = F32Buffer.allocate(comm, 2)) {
              if (comm.rank() == 1) {
                comm.recv(y, 0, comm.stream());
                comm.stream().synchronize(); // woken by the abort, long before the 60 s timeout
              } else {
                Thread.sleep(200);
                throw new IllegalStateException("rank 0 gives up");
              }
            }
          })));
      assertTrue(chain(e).contains("rank 0 gives up"), chain(e));
      boolean rank1Aborted = false;
      for (Throwable s : e.getSuppressed()) {
        rank1Aborted |= s instanceof RankAbortedException || s.getCause() instanceof RankAbortedException;
      }
      assertTrue(rank1Aborted || chain(e).contains("abandoned") || chain(e).contains("aborted"), chain(e));
    }
    assertTrue(System.nanoTime() - started < 20_000_000_000L);
  }
}
