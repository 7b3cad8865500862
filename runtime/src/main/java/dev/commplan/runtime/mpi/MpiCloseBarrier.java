package dev.commplan.runtime.mpi;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.RankAbortedException;
import java.lang.foreign.MemorySegment;
import java.util.Locale;
import java.util.concurrent.locks.LockSupport;

/**
 * The barrier that closing the world communicator of an MPI family waits at ({@link MpiFamily#closeWorld}),
 * so that a rank whose own calls all succeeded still learns, at the latest when it closes, that another
 * failed (a send that completed into a receive that was too short). It runs on the family's control
 * communicator ({@link MpiNoticeChannel}) and is waited for at most {@link MpiFamily#closeWaitNanos} of the
 * timeout, looking for notices all along:
 *
 * <ul>
 *   <li>unless the family already failed: then this rank's peers know from its notice, and nobody waits for
 *       it here;
 *   <li>a notice that arrives ends the wait: this rank gives up too, and throws;
 *   <li>after a second, this rank says it is waiting here ({@link MpiNotice#LEFT}): not a failure, but a rank
 *       that times out names it as the one that left its call;
 *   <li>past the limit, the family fails with a timeout, which is thrown;
 *   <li>once every rank has come, the control communicator is freed.
 * </ul>
 *
 * <p>It takes and lets go of {@link MpiRuntime#LOCK} itself, between polls.
 */
final class MpiCloseBarrier {
  /** What the close of the world is called in notices. */
  static final String CLOSING = "close() of world";

  private final MpiFamily family;
  private final MpiNoticeChannel channel;
  private final MpiCommunicator world;
  private final long limitNanos;
  private final String what;

  /**
   * @param family the family whose world closes
   * @param channel its control communicator
   * @param world the world's communicator on this rank
   * @param timeoutNanos the communicator's timeout: the barrier waits {@link MpiFamily#closeWaitNanos} of it
   */
  MpiCloseBarrier(MpiFamily family, MpiNoticeChannel channel, MpiCommunicator world, long timeoutNanos) {
    this.family = family;
    this.channel = channel;
    this.world = world;
    this.limitNanos = MpiFamily.closeWaitNanos(timeoutNanos);
    this.what = "the barrier of " + world.rankText() + "'s close";
  }

  /**
   * Waits at the barrier (see the class comment).
   *
   * @throws RankAbortedException if another rank's notice arrives meanwhile
   * @throws CommPlanException if the other ranks do not all come within the limit
   */
  void await() {
    MemorySegment barrier = start();
    if (barrier == null) {
      return;
    }
    long start = System.nanoTime();
    while (!passed(barrier)) {
      long waited = System.nanoTime() - start;
      if (waited > 1_000_000_000L) {
        family.sayWaitingToClose(world, CLOSING + " has waited 1 s for the other ranks to close it too");
      }
      if (waited > limitNanos) {
        throw timedOut(waited);
      }
      if (waited > 1_000_000L) {
        LockSupport.parkNanos(50_000L);
      } else {
        Thread.yield();
      }
    }
  }

  /** Starts the barrier, and returns its request, or null where there is nothing to wait for. */
  private MemorySegment start() {
    if (channel.isFreed()) {
      return null;
    }
    MpiRuntime.LOCK.lock();
    try {
      if (family.failure() != null) {
        channel.flush(); // the peers learn from the notice; nobody waits for this rank at the barrier
        return null;
      }
      family.enteringCloseBarrier();
      return channel.startBarrier(what);
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /**
   * One look: another rank's notice ends the wait (thrown); a completed barrier frees the control
   * communicator. Returns whether the barrier completed.
   */
  private boolean passed(MemorySegment barrier) {
    MpiRuntime.LOCK.lock();
    try {
      MpiNotice notice = family.poll();
      if (notice != null) {
        RankAbortedException e = family.gaveUp(world, CLOSING, notice);
        channel.flush();
        throw e;
      }
      if (channel.barrierDone(barrier, what)) {
        channel.free();
        return true;
      }
      return false;
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /** The other ranks did not all come within the limit: the family fails with a timeout, which is returned. */
  private CommPlanException timedOut(long waitedNanos) {
    CommPlanException e = new CommPlanException(String.format(Locale.ROOT, "%s: %s waited %.1f s"
        + " (twice the timeout) for the other ranks of world to close it too; a rank that is still working,"
        + " stalled or gone leaves the others waiting here", world.rankText(), CLOSING, waitedNanos / 1e9));
    MpiRuntime.LOCK.lock();
    try {
      family.fail(world, MpiNotice.TIMED_OUT, e);
      channel.flush();
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    return e;
  }
}
