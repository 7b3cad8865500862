package dev.commplan.runtime.nccl.sharing;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Phaser;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

/**
 * Host fences for the ranks of an in-JVM cluster that share a GPU, and so its CUDA context ({@link
 * GpuSharing#oneContext()}): before launches all of a group's ranks make, and where a split's
 * communicators are made and destroyed. One per cluster.
 *
 * <p><b>Why.</b> NCCL frees the device memory of a communicator's ranks in a process when the last of them
 * destroys it ({@code commReclaim} in NCCL's {@code init.cc}: the last {@code ncclCommDestroy} cleans up
 * every rank's), and freeing device memory waits for all work of the context. A peer that returned from its
 * own destroy earlier and has since enqueued its next collective has a kernel in that context that spins
 * until the destroying rank joins it: neither moves. Making a communicator allocates device memory the same
 * way. ({@code memory.DeviceAllocator} keeps the ranks' own allocations off that path; NCCL's cannot be.)
 *
 * <p><b>The rule.</b> Each group (the world, each split's group) has one {@link GroupFence}, shared by its
 * ranks' communicators, where every rank of the group meets:
 * <ul>
 *   <li>before every launch all of them make (below);
 *   <li>after a split of the group, once {@code ncclCommSplit} returned on this rank;
 *   <li>after this rank destroyed its communicator of a split of the group: a split gives every rank of the
 *       group a communicator, and a mesh closes its axes in one order on every rank, so every rank meets
 *       there in turn. Closing a split is thus collective over its parent where ranks share a context, as
 *       the contract's {@code Mesh.close()} already is.
 * </ul>
 * So no rank of the process enqueues work while a peer makes or frees a communicator.
 *
 * <p>A fence waits at most the communicator's timeout and ends early when the rank is told to give up;
 * then the rank goes on. It prevents a hang; it is not a check (a hang that follows is timed out where it
 * happens). {@code -D}{@value #PROPERTY}{@code =false} turns the fences off, to compare.
 */
public final class SharedContextFences {
  /** The system property that turns the fences off ({@code false}); {@code auto} (the default) keeps them. */
  public static final String PROPERTY = "commplan.nccl.sharedContextFences";

  /** How often a waiting rank looks whether it was told to give up. */
  private static final long POLL_MILLIS = 10;

  private final Map<String, GroupFence> groupFences = new ConcurrentHashMap<>();

  /** The fences for one cluster's ranks that share a context, or null where {@value #PROPERTY} turns them off. */
  public static SharedContextFences forOneContext(String property) {
    return GpuSharing.setting(PROPERTY, property, true, "fence where ranks of this process share a GPU")
        ? new SharedContextFences() : null;
  }

  /**
   * The fence of the group {@code lineage} names ({@code size} ranks, all of this process), shared by
   * its ranks' communicators; null for a group of one.
   */
  public GroupFence groupFence(Lineage lineage, int size) {
    return size < 2 ? null : groupFences.computeIfAbsent(lineage.key, key -> new GroupFence(key, size));
  }

  /** How many groups have a fence: those with a communicator not closed yet on some rank. */
  public int groupFences() {
    return groupFences.size();
  }

  /**
   * Where every rank of one group meets: after a split of it and after closing a communicator split from it
   * (the class comment), and before each launch that all of them make: a direct collective, a plan's steps,
   * a captured plan's graph. CUDA does not promise that two streams progress independently (work of
   * streams that share one of the context's hardware queues waits in line), so a rank whose host
   * copy or launch is queued behind a peer's NCCL kernel never launches the kernel that peer spins for (run
   * 12: at 8 ranks, seven ranks' graphs spun while the eighth waited for its host write before its launch).
   * Met here, no rank's kernel runs before every peer's is enqueued. Sends and receives are not fenced:
   * their peers are not the whole group.
   */
  public final class GroupFence {
    private final String key;
    private final Phaser phaser;

    private GroupFence(String key, int size) {
      this.key = key;
      this.phaser = new Phaser(size);
    }

    /**
     * Waits until every rank of the group has arrived, at most {@code limit}, or until {@code giveUp}; then
     * the rank goes on (past the limit too: a hang that follows is timed out where it happens).
     *
     * @return whether every rank arrived
     */
    public boolean pass(Duration limit, BooleanSupplier giveUp) {
      int phase = phaser.arrive();
      long deadline = System.nanoTime() + limit.toNanos();
      while (true) {
        try {
          phaser.awaitAdvanceInterruptibly(phase, POLL_MILLIS, TimeUnit.MILLISECONDS);
          return true;
        } catch (TimeoutException e) {
          if (giveUp.getAsBoolean() || System.nanoTime() - deadline > 0) {
            return false;
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          return false;
        }
      }
    }

    /** This rank's communicator of the group is closed: it meets no more; the last to leave forgets the fence. */
    public void leave() {
      phaser.arriveAndDeregister();
      if (phaser.getRegisteredParties() == 0) {
        groupFences.remove(key, this);
      }
    }
  }

  /**
   * A communicator's place among its world's splits, which names its group's fence the same on every rank: the
   * world is {@code world}, the group of color 1 in the world's third split {@code world/2:1}. One per
   * communicator; a split is collective over its parent, so every rank counts its parent's splits alike.
   */
  public static final class Lineage {
    private final String key;
    private final AtomicInteger splits = new AtomicInteger();

    private Lineage(String key) {
      this.key = key;
    }

    /** A world's. */
    public static Lineage world() {
      return new Lineage("world");
    }

    /** The number of this communicator's next split (0 first). */
    public int nextSplit() {
      return splits.getAndIncrement();
    }

    /** The lineage of the group of {@code color} made by split number {@code split} of this communicator. */
    public Lineage child(int split, int color) {
      return new Lineage(key + "/" + split + ":" + color);
    }

    @Override
    public String toString() {
      return key;
    }
  }
}
