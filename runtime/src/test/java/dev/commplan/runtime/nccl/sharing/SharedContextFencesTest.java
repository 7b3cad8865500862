package dev.commplan.runtime.nccl.sharing;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.nccl.sharing.SharedContextFences.Lineage;
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
  void noRankPassesItsGroupsFenceBeforeTheLastArrives() throws Exception {
    SharedContextFences fences = new SharedContextFences();
    Lineage world = Lineage.world();
    CountDownLatch threeWaiting = new CountDownLatch(3);
    AtomicBoolean lastArrived = new AtomicBoolean();
    List<Boolean> passedEarly = new ArrayList<>();
    ExecutorService pool = Executors.newFixedThreadPool(3);
    try {
      List<Future<Boolean>> ranks = new ArrayList<>();
      for (int r = 0; r < 3; r++) {
        ranks.add(pool.submit(() -> {
          threeWaiting.countDown();
          boolean met = fences.groupFence(world, 4).pass(LONG, () -> false); // as after a split of the world
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
      assertTrue(fences.groupFence(world, 4).pass(LONG, () -> false));
      for (Future<Boolean> rank : ranks) {
        assertTrue(rank.get(10, TimeUnit.SECONDS));
      }
      assertEquals(List.of(false, false, false), passedEarly);
    } finally {
      pool.shutdownNow();
    }
  }

  @Test
  void theRanksOfAGroupShareOneFenceAndEachGroupOfASplitHasItsOwn() {
    SharedContextFences fences = new SharedContextFences();
    Lineage world = Lineage.world();
    int split = world.nextSplit();
    // a 2x2 mesh's dp axis: colors 0 and 1, two ranks each; closing either, a rank meets the world's fence
    Lineage color0 = world.child(split, 0);
    Lineage color1 = world.child(split, 1);
    assertEquals("world/0:0", color0.toString());
    assertEquals("world/0:1", color1.toString());
    SharedContextFences.GroupFence worlds = fences.groupFence(world, 4);
    assertTrue(worlds == fences.groupFence(Lineage.world(), 4), "every rank's world meets at one fence");
    SharedContextFences.GroupFence dp0 = fences.groupFence(color0, 2);
    SharedContextFences.GroupFence dp1 = fences.groupFence(color1, 2);
    assertTrue(dp0 == fences.groupFence(world.child(split, 0), 2), "both ranks of color 0 meet at one fence");
    assertTrue(dp0 != dp1 && dp0 != worlds && dp1 != worlds, "each group meets at a fence of its own");
  }

  @Test
  void splitsOfOneParentAndNestedSplitsHaveFencesOfTheirOwn() {
    Lineage world = Lineage.world();
    Lineage first = world.child(world.nextSplit(), 0);
    Lineage second = world.child(world.nextSplit(), 0);
    Lineage nested = first.child(first.nextSplit(), 1);
    assertEquals("world/0:0", first.toString());
    assertEquals("world/1:0", second.toString());
    assertEquals("world/0:0/0:1", nested.toString());
    SharedContextFences fences = new SharedContextFences();
    assertTrue(fences.groupFence(first, 2) != fences.groupFence(second, 2));
    assertTrue(fences.groupFence(nested, 2) != fences.groupFence(first, 2));
  }

  @Test
  void noRankLaunchesBeforeEveryRankOfItsGroupHasArrivedAndTheLastToLeaveForgetsTheFence() throws Exception {
    SharedContextFences fences = new SharedContextFences();
    Lineage group = Lineage.world().child(0, 0);
    int ranks = 3;
    int rounds = 200;
    AtomicIntegerArray arrived = new AtomicIntegerArray(rounds);
    AtomicInteger early = new AtomicInteger();
    ExecutorService pool = Executors.newFixedThreadPool(ranks);
    try {
      List<Future<?>> running = new ArrayList<>();
      for (int r = 0; r < ranks; r++) {
        running.add(pool.submit(() -> {
          SharedContextFences.GroupFence fence = fences.groupFence(group, ranks);
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
    assertEquals(0, fences.groupFences(), "closed on every rank: the fence is forgotten");
    assertNull(fences.groupFence(group, 1), "a group of one has nobody to wait for");
  }

  @Test
  void aFenceEndsAtItsLimitOrWhenTheRankIsToldToStop() {
    SharedContextFences fences = new SharedContextFences();
    long start = System.nanoTime();
    assertFalse(fences.groupFence(Lineage.world(), 2).pass(Duration.ofMillis(60), () -> false));
    assertTrue(System.nanoTime() - start >= TimeUnit.MILLISECONDS.toNanos(60), "ended before its limit");
    start = System.nanoTime();
    assertFalse(fences.groupFence(Lineage.world().child(0, 0), 2).pass(LONG, () -> true));
    assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5), "a rank told to stop still waited");
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
    assertNull(GpuSharing.ONE_RANK_PER_GPU.inOneContext().fences());
    GpuSharing threads = new GpuSharing(4, 4, "at most 4 CTAs", "opted in").inOneContext();
    assertTrue(threads.oneContext());
    assertNotNull(threads.fences());
  }

  @Test
  void capturedPlansReplayWhereRanksShareAContextUnlessGraphsAreAskedFor() {
    assertTrue(GpuSharing.ONE_RANK_PER_GPU.inOneContext().graphs());
    assertTrue(new GpuSharing(4, 4, "at most 4 CTAs", "opted in").graphs(), "separate processes capture graphs");
    GpuSharing threads = new GpuSharing(4, 4, "at most 4 CTAs", "opted in").inOneContext();
    assertEquals("true".equalsIgnoreCase(System.getProperty(GpuSharing.SHARED_CONTEXT_GRAPHS_PROPERTY, "").strip()),
        threads.graphs());
    assertTrue(threads.graphs() || threads.describe().contains("captured plans replay their steps"), threads.describe());
    assertFalse(GpuSharing.graphsInSharedContext(null));
    assertFalse(GpuSharing.graphsInSharedContext(" auto "));
    assertFalse(GpuSharing.graphsInSharedContext("false"));
    assertTrue(GpuSharing.graphsInSharedContext("TRUE"));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> GpuSharing.graphsInSharedContext("yes"));
    assertTrue(e.getMessage().contains(GpuSharing.SHARED_CONTEXT_GRAPHS_PROPERTY) && e.getMessage().contains("'yes'"),
        e.getMessage());
  }
}
