package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.nccl.SharedContextFences.Lineage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicIntegerArray;
import org.junit.jupiter.api.Test;

/**
 * The host fences of ranks that share a CUDA context ({@link SharedContextFences}), without a GPU: who
 * meets whom, that nobody passes a fence before the last party arrives, and that a fence ends at its limit
 * or when the rank is told to give up.
 */
class SharedContextFencesTest {
  private static final Duration LONG = Duration.ofSeconds(20);

  @Test
  void noRankPassesTheSplitFenceBeforeTheLastArrives() throws Exception {
    SharedContextFences fences = new SharedContextFences();
    Lineage world = Lineage.world();
    int split = world.nextSplit();
    CountDownLatch threeWaiting = new CountDownLatch(3);
    AtomicBoolean lastArrived = new AtomicBoolean();
    List<Boolean> passedEarly = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<Boolean>> ranks = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        ranks.add(pool.submit(() -> {
          threeWaiting.countDown();
          boolean met = fences.afterSplit(world, split, 4, LONG, () -> false);
          synchronized (passedEarly) {
            passedEarly.add(!lastArrived.get());
          }
          return met;
        }));
      }
      assertTrue(threeWaiting.await(10, TimeUnit.SECONDS));
      Thread.sleep(100); // the three are at the fence (or about to be): none may pass while the fourth is away
      assertEquals(List.of(), passedEarly, "a rank passed the fence with the fourth still away");
      lastArrived.set(true);
      assertTrue(fences.afterSplit(world, split, 4, LONG, () -> false));
      for (Future<Boolean> rank : ranks) {
        assertTrue(rank.get(10, TimeUnit.SECONDS));
      }
      assertEquals(List.of(false, false, false), passedEarly);
      assertEquals(0, fences.open(), "a fence every party passed is forgotten");
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theGroupsOfOneSplitMeetTogetherAfterClosing() throws Exception {
    SharedContextFences fences = new SharedContextFences();
    Lineage world = Lineage.world();
    int split = world.nextSplit();
    // a 2x2 mesh's dp axis: colors 0 and 1, two ranks each; a rank closing color 0 waits for color 1's too
    Lineage color0 = world.child(split, 0, 4);
    Lineage color1 = world.child(split, 1, 4);
    assertEquals("world/0:0", color0.toString());
    assertEquals("world/0:1", color1.toString());
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<Boolean>> early = List.of(
          pool.submit(() -> fences.afterClose(color0, LONG, () -> false)),
          pool.submit(() -> fences.afterClose(color0, LONG, () -> false)),
          pool.submit(() -> fences.afterClose(color1, LONG, () -> false)));
      Thread.sleep(100);
      for (Future<Boolean> f : early) {
        assertFalse(f.isDone(), "passed before the last rank of the other group closed");
      }
      assertTrue(fences.afterClose(color1, LONG, () -> false));
      for (Future<Boolean> f : early) {
        assertTrue(f.get(10, TimeUnit.SECONDS));
      }
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void splitsOfOneParentAndNestedSplitsHaveFencesOfTheirOwn() {
    Lineage world = Lineage.world();
    Lineage first = world.child(world.nextSplit(), 0, 4);
    Lineage second = world.child(world.nextSplit(), 0, 4);
    Lineage nested = first.child(first.nextSplit(), 1, 2);
    assertEquals("world/0:0", first.toString());
    assertEquals("world/1:0", second.toString());
    assertEquals("world/0:0/0:1", nested.toString());
    SharedContextFences fences = new SharedContextFences();
    // the nested split closed on one rank of its parent of 2
    assertFalse(fences.afterClose(nested, Duration.ofMillis(1), () -> false), "it waits for its parent's other rank");
    assertTrue(fences.afterClose(Lineage.world(), Duration.ofMillis(1), () -> false), "a world has no close fence");
  }

  @Test
  void noRankLaunchesBeforeEveryRankOfItsGroupHasArrivedAndTheLastToLeaveForgetsTheFence() throws Exception {
    SharedContextFences fences = new SharedContextFences();
    Lineage group = Lineage.world().child(0, 0, 4);
    int ranks = 3;
    int rounds = 200;
    AtomicIntegerArray arrived = new AtomicIntegerArray(rounds);
    AtomicInteger early = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(ranks);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        running.add(pool.submit(() -> {
          SharedContextFences.LaunchFence fence = fences.launchFence(group, ranks);
          for (int round = 0; round < rounds; round++) {
            arrived.incrementAndGet(round);
            fence.pass(LONG, () -> false);
            if (arrived.get(round) != ranks) {
              early.incrementAndGet(); // launched while a peer had not reached this launch yet
            }
          }
          fence.leave();
          return null;
        }));
      }
      for (Future<?> f : running) {
        f.get(30, TimeUnit.SECONDS);
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(0, early.get(), "launches past the fence with a peer still away");
    assertEquals(0, fences.launchFences(), "closed on every rank: the fence is forgotten");
    assertNull(fences.launchFence(group, 1), "a group of one has nobody to wait for");
  }

  @Test
  void aLaunchFenceEndsWhenTheRankIsToldToStop() {
    SharedContextFences.LaunchFence fence = new SharedContextFences().launchFence(Lineage.world(), 2);
    long start = System.nanoTime();
    fence.pass(LONG, () -> true);
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "a rank told to stop still waited");
  }

  @Test
  void aFenceEndsAtItsLimitOrWhenTheRankGivesUp() {
    SharedContextFences fences = new SharedContextFences();
    Lineage world = Lineage.world();
    long start = System.nanoTime();
    assertFalse(fences.afterSplit(world, world.nextSplit(), 2, Duration.ofMillis(60), () -> false));
    assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(60), "ended before its limit");
    start = System.nanoTime();
    assertFalse(fences.afterSplit(world, world.nextSplit(), 2, LONG, () -> true));
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "a rank told to give up still waited");
  }

  @Test
  void thePropertyTurnsTheFencesOffAndNothingElse() {
    assertNotNull(SharedContextFences.forOneContext(null));
    assertNotNull(SharedContextFences.forOneContext(" auto "));
    assertNull(SharedContextFences.forOneContext("false"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> SharedContextFences.forOneContext("sometimes"));
    assertTrue(e.getMessage().contains(SharedContextFences.PROPERTY) && e.getMessage().contains("'sometimes'"),
        e.getMessage());
  }

  @Test
  void onlyClustersOfRanksThatShareAGpuGetFences() {
    assertNull(NcclGpuSharing.ONE_RANK_PER_GPU.inOneContext().fences());
    NcclGpuSharing threads = new NcclGpuSharing(4, 4, "at most 4 CTAs", "opted in", false, null).inOneContext();
    assertTrue(threads.oneContext());
    assertNotNull(threads.fences());
  }
}
