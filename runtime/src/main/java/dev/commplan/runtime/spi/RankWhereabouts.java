package dev.commplan.runtime.spi;

import java.util.Arrays;
import java.util.function.IntPredicate;

/**
 * Where the ranks still running were when a run was aborted: each one's thread stack, read at the run's
 * first abort before anything woke it ({@link RankSupervisor#abort}), then attached to that rank's
 * failure. A rank stuck in a call no timeout watches (a native call that waits for the device, a lock of
 * its own) is otherwise known only as "was aborted"; with this its failure also says where it was, as a
 * thread dump would.
 */
final class RankWhereabouts {
  /** The most frames kept of a stack: enough to reach the user's code from inside a backend's call. */
  static final int FRAMES = 24;
  /** Before any abort of a run: no rank read. */
  static final RankWhereabouts NONE = new RankWhereabouts(new StackTraceElement[0][], "");

  /** Each rank's stack at the abort, or null for a rank not read (the one that failed, one that had ended). */
  private final StackTraceElement[][] stacks;
  private final String cause;

  private RankWhereabouts(StackTraceElement[][] stacks, String cause) {
    this.stacks = stacks;
    this.cause = cause;
  }

  /**
   * Reads the stack of {@code threads[r]} for every rank {@code r} for which {@code stillRunning} holds.
   *
   * @param failedRank the rank whose failure aborts the run, or -1 (for the message)
   */
  static RankWhereabouts read(Thread[] threads, int failedRank, IntPredicate stillRunning) {
    StackTraceElement[][] stacks = new StackTraceElement[threads.length][];
    for (int r = 0; r < threads.length; r++) {
      Thread t = threads[r];
      if (t != null && t != Thread.currentThread() && stillRunning.test(r)) {
        StackTraceElement[] stack = t.getStackTrace();
        stacks[r] = Arrays.copyOf(stack, Math.min(stack.length, FRAMES));
      }
    }
    return new RankWhereabouts(stacks, failedRank >= 0 ? "rank " + failedRank + "'s failure" : "the caller's interrupt");
  }

  /**
   * Adds to {@code failure} (rank {@code rank}'s) a suppressed exception whose stack is the one read at the
   * abort, so that it prints as a thread dump would; nothing for a rank not read.
   */
  void attachTo(int rank, Throwable failure) {
    StackTraceElement[] stack = rank < stacks.length ? stacks[rank] : null;
    if (stack == null || failure == null) {
      return;
    }
    WhereItWas where = new WhereItWas("rank " + rank + "'s thread was here when " + cause + " aborted the run"
        + " (its stack, read at the abort" + (stack.length == FRAMES ? ", the innermost " + FRAMES + " frames" : "")
        + ")");
    where.setStackTrace(stack);
    failure.addSuppressed(where);
  }

  /** Carries a rank's stack read at the abort; not thrown. */
  static final class WhereItWas extends RuntimeException {
    private static final long serialVersionUID = 1L;

    WhereItWas(String message) {
      super(message, null, false, true);
    }
  }
}
