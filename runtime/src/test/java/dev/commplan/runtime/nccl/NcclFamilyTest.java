package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.nccl.rank.NcclBlockedCall;
import dev.commplan.runtime.nccl.rank.NcclFamily;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.rank.NcclSplit;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * The parts of splits and families that need no GPU: {@link NcclFamily}'s rule (the first failure of any
 * member aborts every other member once, names the member, its group and rank, and reaches members that
 * join later), with fake members in place of {@link NcclRankState}; the refusal on an NCCL without {@code
 * ncclCommSplit}; the watchdog's message for a blocked split.
 */
class NcclFamilyTest {
  /** A member that records what the family did to it. */
  private static final class Fake implements NcclFamily.Member {
    final String who;
    final AtomicInteger aborts = new AtomicInteger();
    final AtomicReference<NcclFamily.Failure> failure = new AtomicReference<>();

    Fake(String who) {
      this.who = who;
    }

    @Override
    public String who() {
      return who;
    }

    @Override
    public void abortWithFamily(NcclFamily.Failure f) {
      aborts.incrementAndGet();
      failure.set(f);
    }
  }

  @Test
  void theFirstFailureAbortsEveryOtherMemberOnceAndNamesTheOrigin() {
    NcclFamily family = new NcclFamily();
    Fake world = new Fake("rank 0 of world (device 0)");
    Fake tp = new Fake("rank 0 of axis tp of mesh [dp=1, tp=1] (device 0)");
    Fake dp = new Fake("rank 0 of axis dp of mesh [dp=1, tp=1] (device 0)");
    for (Fake f : List.of(world, tp, dp)) {
      assertTrue(family.join(f));
    }
    IllegalStateException cause = new IllegalStateException("boom");
    NcclFamily.Failure first = family.failed(tp, "was aborted (ncclCommAbort) by abort()", cause);
    assertEquals("rank 0 of axis tp of mesh [dp=1, tp=1] (device 0) was aborted (ncclCommAbort) by abort()",
        first.toString());
    assertSame(cause, first.cause());
    assertEquals(0, tp.aborts.get(), "the member that failed is not aborted again by its family");
    assertEquals(1, world.aborts.get());
    assertEquals(1, dp.aborts.get());
    assertSame(first, world.failure.get());
    assertSame(first, dp.failure.get());

    // the members it aborted report too (their state machines do); nothing propagates twice
    NcclFamily.Failure again = family.failed(world, "was aborted (ncclCommAbort) after a timeout", null);
    assertSame(first, again);
    assertSame(first, family.failure());
    assertEquals(1, dp.aborts.get());
    assertEquals(0, tp.aborts.get());
  }

  @Test
  void aMemberThatJoinsAfterTheFailureIsAbortedAtOnce() {
    NcclFamily family = new NcclFamily();
    Fake world = new Fake("rank 0 of world (device 0)");
    family.join(world);
    family.failed(world, "was aborted (ncclCommAbort) by abort()", null);
    Fake late = new Fake("rank 0 of split(color 0) of world (device 0)");
    assertFalse(family.join(late), "a split made while its family failed is not a member");
    assertEquals(1, late.aborts.get());
    assertEquals("rank 0 of world (device 0)", late.failure.get().who());
    assertFalse(family.members().contains(late));
  }

  @Test
  void aMemberThatLeftIsNotAborted() {
    NcclFamily family = new NcclFamily();
    Fake world = new Fake("rank 0 of world (device 0)");
    Fake closed = new Fake("rank 0 of split(color 1) of world (device 0)");
    family.join(world);
    family.join(closed);
    family.leave(closed);
    assertNull(family.failure());
    family.failed(world, "was aborted (ncclCommAbort) by abort()", null);
    assertEquals(0, closed.aborts.get());
  }

  /** Members failing at the same time on several threads (a watchdog and a rank): one failure, one abort each. */
  @Test
  void concurrentFailuresMakeOneFailureAndAbortEachMemberOnce() throws Exception {
    for (int round = 0; round < 200; round++) {
      NcclFamily family = new NcclFamily();
      List<Fake> members = new ArrayList<>();
      for (int i = 0; i < 6; i++) {
        Fake f = new Fake("member " + i);
        members.add(f);
        family.join(f);
      }
      CyclicBarrier start = new CyclicBarrier(members.size());
      CountDownLatch done = new CountDownLatch(members.size());
      List<NcclFamily.Failure> seen = java.util.Collections.synchronizedList(new ArrayList<>());
      for (Fake f : members) {
        Thread.ofPlatform().start(() -> {
          try {
            start.await();
            seen.add(family.failed(f, "failed", null));
          } catch (Exception e) {
            throw new AssertionError(e);
          } finally {
            done.countDown();
          }
        });
      }
      assertTrue(done.await(30, java.util.concurrent.TimeUnit.SECONDS));
      NcclFamily.Failure first = family.failure();
      assertTrue(seen.stream().allMatch(f -> f == first), "every caller gets the one first failure");
      int aborted = 0;
      for (Fake f : members) {
        assertTrue(f.aborts.get() <= 1, f.who + " aborted " + f.aborts.get() + " times");
        aborted += f.aborts.get();
        assertEquals(f.who.equals(first.who()) ? 0 : 1, f.aborts.get(), f.who);
      }
      assertEquals(members.size() - 1, aborted);
    }
  }

  @Test
  void anNcclWithoutCommSplitIsRefusedNamingBothVersionsAndTheFix() {
    assertNull(NcclSplit.unavailable(true, new NcclVersion(2, 28, 3)));
    RuntimeException e = NcclSplit.unavailable(false, new NcclVersion(2, 17, 1));
    assertTrue(e instanceof BackendUnavailableException, String.valueOf(e));
    for (String part : List.of("split(color, key)", "Mesh", "ncclCommSplit", "NCCL 2.18.1", "loaded NCCL 2.17.1",
        "-Dcommplan.nccl.library")) {
      assertTrue(e.getMessage().contains(part), () -> "'" + part + "' missing from: " + e.getMessage());
    }
    assertEquals(new NcclVersion(2, 18, 1), NcclVersion.COMM_SPLIT);
    assertEquals(NcclSplit.SINCE, NcclVersion.COMM_SPLIT.toString());
  }

  @Test
  void theWatchdogsMessageForABlockedSplitNamesTheCallTheGroupAndTheRank() {
    NcclBlockedCall blocked = new NcclBlockedCall();
    assertEquals(0, blocked.since());
    blocked.enter("ncclCommSplit (NCCL waits there for every rank of world to split it)",
        OperationLabel.direct("split(color 1, key 0) into axis tp of mesh [dp=2, tp=2]"));
    assertTrue(blocked.since() != 0);
    CommTimeoutException e = blocked.timedOut("rank 3", 3, 1, Duration.ofSeconds(2), new FlightRecorder(0, 4));
    for (String part : List.of("rank 3 (device 1) timed out after PT2S blocked in ncclCommSplit",
        "every rank of world", "split(color 1, key 0) into axis tp of mesh [dp=2, tp=2]", "ncclCommAbort")) {
      assertTrue(e.getMessage().contains(part), () -> "'" + part + "' missing from: " + e.getMessage());
    }
    assertEquals(3, e.rank());
    blocked.leave();
    assertEquals(0, blocked.since());
    blocked.enter(null);
    CommTimeoutException group = blocked.timedOut("rank 0", 0, 0, Duration.ofSeconds(1), new FlightRecorder(0, 4));
    assertTrue(group.getMessage().contains("blocked in " + NcclBlockedCall.GROUP_END), group.getMessage());
    assertEquals("ncclGroupEnd", group.collective());
  }
}
