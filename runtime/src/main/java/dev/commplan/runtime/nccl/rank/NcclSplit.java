package dev.commplan.runtime.nccl.rank;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.NcclVersion;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.NcclEnvironment;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import dev.commplan.runtime.nccl.sharing.SharedContextFences;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code Communicator.split} on this backend: one {@code ncclCommSplit} of the parent, which NCCL ranks
 * as the contract does (same color, one communicator; ordered by key, ties by parent rank: {@code
 * commGetSplitInfo} in NCCL's {@code init.cc} inserts after equal keys, in parent-rank order).
 *
 * <p><b>Blocking, like every communicator here.</b> The backend makes its communicators with {@code
 * ncclCommInitRank}, without a config (so blocking) or, where ranks share a GPU, with one that sets only
 * {@code maxCTAs} (blocking stays NCCL's default, 1). The split passes the same: no config, so the child
 * inherits the parent's ({@code nccl.h}: "If config is NULL, the new communicator will inherit the original
 * communicator's configuration"), or a config with the family's CTA limit ({@link GpuSharing}): the
 * split's ranks share their GPUs with all the world's, so the world's limit is theirs. {@code ncclCommSplit} then
 * returns once every rank of the parent has called it and the child is ready. Waiting is timed as the
 * backend times other blocking calls: the rank is marked blocked ({@link NcclWatchdog#enter}),
 * the cluster's watchdog looks at it every millisecond, and, since a communicator of one rank per
 * process has no watchdog, a timer of the split's own does the same (a daemon platform thread, since it
 * may call into CUDA, living as long as the split). Past the timeout either aborts the parent from
 * outside: while a split is being made NCCL's {@code ncclCommAbort} of the parent also sets the child's
 * abort flag ({@code childAbortFlag}), so the call returns, and the family fails with a {@code
 * CommTimeoutException} naming the parent's group, the rank and the split.
 *
 * <p><b>Ranks that share a CUDA context</b> (an in-JVM cluster with more ranks than GPUs) meet at the
 * parent's fence after the split and after closing what it made ({@link SharedContextFences}): NCCL's
 * allocations and frees there may wait for a peer's kernel.
 *
 * <p><b>Older NCCLs.</b> {@code ncclCommSplit} came with NCCL {@value #SINCE}; it is looked up by symbol
 * ({@link CheckedNccl#hasCommSplit()}), and where it is missing {@code split} fails with {@link
 * BackendUnavailableException} naming the loaded version and what is needed. There is deliberately no
 * fallback through {@code ncclGetUniqueId}/{@code ncclCommInitRank} (ids exchanged over the parent): it
 * would be a second way to make every group that no machine we test on could run (the GPU machine has
 * NCCL 2.28.3, and NCCLs that run on CUDA 13 all have the split), and an untested path is worse than a
 * clear refusal.
 */
public final class NcclSplit {
  private NcclSplit() {}

  /** {@link NcclVersion#COMM_SPLIT}, for the comment. */
  public static final String SINCE = "2.18.1";

  /** The new communicator of a split: its {@code ncclComm_t}, and its place among the world's splits. */
  public record Child(long comm, SharedContextFences.Lineage lineage) {}

  /**
   * {@code ncclCommSplit} of {@code parent}: this rank's {@code ncclComm_t} of its group ({@code color},
   * ranked by {@code key}), which messages will call {@code label}, once every rank of the parent's group has
   * split it (see the class comment); the caller makes the communicator on it, a member of the parent's
   * family. Called holding the parent communicator's gate, after {@code ensureUsable} and the checks that need
   * the communicator ({@link #unavailable}, no group of the user's open).
   */
  public static Child split(NcclRank parent, int color, int key, String label) {
    NcclRankState state = parent.state();
    int number = parent.lineage().nextSplit(); // counted alike on every rank: a split is collective over the parent
    parent.useDevice();
    OperationLabel what = OperationLabel.direct("split(color " + color + ", key " + key + ") into " + label);
    String call = "ncclCommSplit (NCCL waits there for every rank of " + parent.label() + " to split it)";
    int[] rc = new int[1];
    long child;
    CountDownLatch done = new CountDownLatch(1);
    long limitMillis = parent.timeout().toMillis();
    Thread timer = Thread.ofPlatform().daemon().name("commplan-nccl-split-timer").start(() -> {
      try {
        while (!done.await(limitMillis + 10, TimeUnit.MILLISECONDS)) {
          state.watchdog().watch(System.nanoTime(), false); // aborts the parent from outside once past the timeout
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    });
    state.watchdog().enter(call, what);
    try {
      child = CheckedNccl.ncclCommSplitRaw(parent.comm(), color, key, parent.family().sharing().maxCtas(), rc);
    } finally {
      state.watchdog().leave();
      done.countDown();
    }
    joinQuietly(timer);
    if (rc[0] != 0 || !state.isOpen()) { // failed, or returned because the parent was aborted meanwhile
      if (child != 0) {
        CheckedNccl.ncclCommAbortQuietly(child);
      }
      throw rc[0] != 0 ? state.failed("ncclCommSplit (" + what + ")", rc[0]) : state.notUsable();
    }
    parent.meetGroup(); // sharing a GPU: no rank goes on while a peer may still be making its group
    return new Child(child, parent.lineage().child(number, color));
  }

  /**
   * Why this process cannot split: {@code ncclCommSplit} missing from NCCL {@code version} (a {@link
   * BackendUnavailableException} naming both versions and what to do), or null when it can.
   */
  public static RuntimeException unavailable(boolean hasCommSplit, NcclVersion version) {
    if (hasCommSplit) {
      return null;
    }
    return new BackendUnavailableException("nccl backend: split(color, key) (and Mesh, which splits) needs"
        + " ncclCommSplit, which came with NCCL " + NcclVersion.COMM_SPLIT + "; this process loaded NCCL " + version
        + ", which lacks it: point -D" + NcclEnvironment.NCCL_PROPERTY + " at libnccl.so.2 of NCCL "
        + NcclVersion.COMM_SPLIT + " or newer");
  }

  private static void joinQuietly(Thread timer) {
    try {
      timer.join(1000); // it wakes at once: the latch is down
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
