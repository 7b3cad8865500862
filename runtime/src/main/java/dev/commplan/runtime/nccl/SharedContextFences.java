package dev.commplan.runtime.nccl;

import java.time.Duration;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Host fences for the ranks of an in-JVM cluster that share a GPU, and so its CUDA context ({@link
 * NcclGpuSharing#oneContext()}), where a split's communicators are made and destroyed. One per cluster.
 *
 * <p><b>Why.</b> NCCL frees the device memory of a communicator's ranks in a process when the last of them
 * destroys it ({@code commReclaim} in NCCL's {@code init.cc}: the last {@code ncclCommDestroy} cleans up
 * every rank's), and freeing device memory waits for all work of the context. A peer that returned from its
 * own destroy earlier and has since enqueued its next collective has a kernel in that context that spins
 * until the destroying rank joins it: neither moves. Making a communicator allocates device memory the same
 * way. ({@link DeviceAllocator} keeps the ranks' own allocations off that path; NCCL's cannot be.)
 *
 * <p><b>The rule.</b> After a split, every rank of the parent waits until all of them have returned from
 * {@code ncclCommSplit}. After closing a split's communicator, a rank waits until every rank of the split
 * has destroyed its own (a split gives every rank of the parent a group, so that is every rank of the
 * parent). So no rank of the process enqueues work while a peer makes or frees a communicator. A mesh closes
 * its axes in one order on every rank, so every rank meets each axis's fence in turn. Closing a split is
 * thus collective over its parent where ranks share a context, as the contract's {@code Mesh.close()}
 * already is.
 *
 * <p>Beside these, each group has a {@link LaunchFence}, met before every launch all its ranks make.
 *
 * <p>A fence waits at most the communicator's timeout and ends early when the rank is told to give up;
 * then the rank goes on. It prevents a hang; it is not a check (a hang that follows is timed out where it
 * happens). {@code -D}{@value #PROPERTY}{@code =false} turns the fences off, to compare.
 */
final class SharedContextFences {
  /** The system property that turns the fences off ({@code false}); {@code auto} (the default) keeps them. */
  static final String PROPERTY = "commplan.nccl.sharedContextFences";

  /** How often a waiting rank looks whether it was told to give up. */
  private static final long POLL_MILLIS = 10;

  private final Map<String, Meeting> meetings = new ConcurrentHashMap<>();
  private final Map<String, LaunchFence> launchFences = new ConcurrentHashMap<>();

  /** The fences for one cluster's ranks that share a context, or null where {@value #PROPERTY} turns them off. */
  static SharedContextFences forOneContext(String property) {
    if (property == null || property.isBlank()) {
      return new SharedContextFences();
    }
    return switch (property.strip().toLowerCase(Locale.ROOT)) {
      case "auto", "true" -> new SharedContextFences();
      case "false" -> null;
      default -> throw new IllegalArgumentException("the system property " + PROPERTY + " is '" + property
          + "'; it is auto (fence where ranks of this process share a GPU) or false");
    };
  }

  /**
   * After {@code ncclCommSplit} of {@code parent} returned on this rank: waits for the parent's other ranks.
   *
   * @param split the parent's split number ({@link Lineage#nextSplit()})
   * @param parties the parent's size
   * @return whether every rank came within {@code limit}
   */
  boolean afterSplit(Lineage parent, int split, int parties, Duration limit, BooleanSupplier giveUp) {
    return meet(parent.key + " split " + split + " made", parties, limit, giveUp);
  }

  /** After this rank destroyed the communicator of {@code child}: waits for the split's other ranks. */
  boolean afterClose(Lineage child, Duration limit, BooleanSupplier giveUp) {
    if (child.closedFence == null) {
      return true; // a world: the cluster closes all of them at once
    }
    return meet(child.closedFence, child.parentSize, limit, giveUp);
  }

  /**
   * The launch fence of the group {@code lineage} names ({@code size} ranks, all of this process), shared by
   * its ranks' communicators; null for a group of one.
   */
  LaunchFence launchFence(Lineage lineage, int size) {
    return size < 2 ? null : launchFences.computeIfAbsent(lineage.key, key -> new LaunchFence(key, size));
  }

  /** How many fences some rank waits at or a rank never reached (for tests: none after a clean run). */
  int open() {
    return meetings.size();
  }

  /** How many groups have a launch fence: those with a communicator not closed yet on some rank. */
  int launchFences() {
    return launchFences.size();
  }

  /**
   * Where every rank of one group meets before each launch that all of them make: a direct collective, a
   * plan's steps, a captured plan's graph. CUDA does not promise that two streams progress independently
   * (work of streams that share one of the context's hardware queues waits in line), so a rank whose host
   * copy or launch is queued behind a peer's NCCL kernel never launches the kernel that peer spins for (run
   * 12: at 8 ranks, seven ranks' graphs spun while the eighth waited for its host write before its launch).
   * Met here, no rank's kernel runs before every peer's is enqueued. Sends and receives are not fenced:
   * their peers are not the whole group.
   */
  final class LaunchFence {
    private final String key;
    private final Phaser phaser;

    private LaunchFence(String key, int size) {
      this.key = key;
      this.phaser = new Phaser(size);
    }

    /**
     * Waits until every rank of the group has arrived, at most {@code limit}, or until {@code giveUp}; then
     * the rank launches (past the limit too: a hang that follows is timed out where it happens).
     */
    void pass(Duration limit, BooleanSupplier giveUp) {
      int phase = phaser.arrive();
      long deadline = System.nanoTime() + limit.toNanos();
      while (true) {
        try {
          phaser.awaitAdvanceInterruptibly(phase, POLL_MILLIS, TimeUnit.MILLISECONDS);
          return;
        } catch (TimeoutException e) {
          if (giveUp.getAsBoolean() || System.nanoTime() - deadline > 0) {
            return;
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return;
        }
      }
    }

    /** This rank's communicator of the group is closed: it launches no more; the last to leave forgets the fence. */
    void leave() {
      phaser.arriveAndDeregister();
      if (phaser.getRegisteredParties() == 0) {
        launchFences.remove(key, this);
      }
    }
  }

  private boolean meet(String where, int parties, Duration limit, BooleanSupplier giveUp) {
    Meeting meeting = meetings.computeIfAbsent(where, w -> new Meeting());
    long deadline = System.nanoTime() + limit.toNanos();
    synchronized (meeting) {
      meeting.arrived++;
      if (meeting.arrived >= parties) {
        meetings.remove(where);
        meeting.notifyAll();
        return true;
      }
      try {
        while (meeting.arrived < parties && !giveUp.getAsBoolean()) {
          long left = deadline - System.nanoTime();
          if (left <= 0) {
            return false;
          }
          meeting.wait(Math.max(1, Math.min(POLL_MILLIS, left / 1_000_000)));
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
      return meeting.arrived >= parties;
    }
  }

  /** The ranks that arrived at one fence so far; its monitor guards {@link #arrived}. */
  private static final class Meeting {
    private int arrived;
  }

  /**
   * A communicator's place among its world's splits, which names its fences the same on every rank: the
   * world is {@code world}, the group of color 1 in the world's third split {@code world/2:1}. One per
   * communicator; a split is collective over its parent, so every rank counts its parent's splits alike.
   */
  static final class Lineage {
    private final String key;
    /** The fence after closing this communicator, or null for a world. */
    private final String closedFence;
    private final int parentSize;
    private final AtomicInteger splits = new AtomicInteger();

    private Lineage(String key, String closedFence, int parentSize) {
      this.key = key;
      this.closedFence = closedFence;
      this.parentSize = parentSize;
    }

    /** A world's. */
    static Lineage world() {
      return new Lineage("world", null, 0);
    }

    /** The number of this communicator's next split (0 first). */
    int nextSplit() {
      return splits.getAndIncrement();
    }

    /** The lineage of the group of {@code color} made by split number {@code split} of this communicator. */
    Lineage child(int split, int color, int size) {
      return new Lineage(key + "/" + split + ":" + color, key + " split " + split + " closed", size);
    }

    @Override
    public String toString() {
      return key;
    }
  }
}
