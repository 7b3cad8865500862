package dev.commplan.runtime.nccl;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.raw.NcclCommunicators;
import dev.commplan.runtime.nccl.rank.CloseTimeline;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Where the time of closing split communicators goes on NCCL, on one GPU (one rank). {@code mesh-cost
 * --backend nccl} measured about 0.5 s to close a 1x1 mesh, the same for two and three axes; our close
 * has no wait of its own (it destroys the rank's graphs, calls {@code ncclCommDestroy}, frees memory and
 * streams). The suspect is NCCL's: every communicator that does not share its parent's resources (split
 * with {@code splitShare} 0, the default) starts its own "UDS service" thread ({@code ncclProxyCreate}),
 * which waits in {@code poll(..., 500)} and looks at its stop flag only when that returns ({@code
 * ncclProxyServiceUDS} in {@code proxy.cc}); {@code ncclCommDestroy} sets the flag, then joins the
 * thread ({@code commFree} in {@code init.cc}). If so, a destroy lasts what is left of the thread's
 * current 500 ms poll, about {@code 500 - (age mod 500)} ms where age is the time since the split, and
 * with {@code NCCL_COMM_SPLIT_SHARE_RESOURCES=1} (no threads of the split's own) it is quick.
 *
 * <p>It prints, in milliseconds:
 * <ol>
 *   <li><b>ours</b>: a mesh built and closed at once, as {@code mesh-cost} does; for each of its
 *       communicators, from {@link CloseTimeline}: destroying its graphs, {@code ncclCommDestroy},
 *       freeing its memory, streams and events; and the rest of {@code Mesh.close} (its bookkeeping);
 *   <li><b>raw</b>: three communicators split from the world with {@code ncclCommSplit}, then, after a
 *       pause, each in turn: {@code ncclCommFinalize}, the wait for it ({@code ncclCommGetAsyncError}
 *       until it is not {@code ncclInProgress}), {@code ncclCommDestroy}; {@code poll_left} is {@code 500 -
 *       (age mod 500)}, what the 500 ms poll would leave; then once every finalize first, every destroy after;
 *   <li><b>world</b>: the close of the world's communicator (made with the cluster's other ranks in one group) at the cluster's close.
 * </ol>
 * Each round is printed as it is; the first is cold. Where there is no GPU, NCCL or {@code ncclCommSplit}
 * it prints why and exits 0.
 *
 * <p>Run: {@code .device/run dev.commplan.runtime.nccl.NcclCloseProbe [rounds=3]}, and again with {@code
 * NCCL_COMM_SPLIT_SHARE_RESOURCES=1} in the environment to compare.
 */
public final class NcclCloseProbe {
  private static final long[] PAUSES_MS = {0, 125, 250, 375, 600};
  private static final int RAW_SPLITS = 3;
  private static final long FINALIZE_LIMIT_NANOS = 10_000_000_000L;

  private NcclCloseProbe() {}

  public static void main(String[] args) {
    int rounds = args.length > 0 ? Integer.parseInt(args[0]) : 3;
    String unavailable = NcclBackend.unavailableReason(1);
    if (unavailable == null && !NcclCommunicators.hasCommSplit()) {
      unavailable = "this NCCL has no ncclCommSplit";
    }
    if (unavailable != null) {
      System.out.println("# NcclCloseProbe skipped: " + unavailable);
      return;
    }
    System.out.println("# NcclCloseProbe: where closing split communicators spends its time, 1 rank, ms");
    System.out.println("# " + NcclBackend.describeEnvironment());
    System.out.println("# NCCL_COMM_SPLIT_SHARE_RESOURCES=" + System.getenv("NCCL_COMM_SPLIT_SHARE_RESOURCES"));
    NcclCluster cluster = NcclCluster.create(1);
    try {
      cluster.run(world -> {
        NcclCommunicator c = (NcclCommunicator) world;
        ours(c, List.of("dp", "tp"), rounds);
        ours(c, List.of("pp", "dp", "tp"), rounds);
        raw(c);
      });
    } finally {
      long t0 = System.nanoTime();
      cluster.close();
      long t1 = System.nanoTime();
      CloseTimeline w = cluster.communicator(0).state().closeTimeline();
      System.out.printf(Locale.ROOT, "world: cluster.close %.2f; its communicator: %s%n", ms(t1 - t0),
          w == null ? "no close recorded" : parts(w));
    }
  }

  /** A mesh of 1-sized {@code axes} built and closed at once, {@code rounds} times. */
  private static void ours(NcclCommunicator world, List<String> axes, int rounds) {
    System.out.println("# ours: Mesh " + axes + " (each of size 1) built, then closed at once (as mesh-cost)");
    for (int round = 1; round <= rounds; round++) {
      Mesh.Builder builder = Mesh.builder(world);
      axes.forEach(a -> builder.axis(a, 1));
      long t0 = System.nanoTime();
      Mesh mesh = builder.build();
      long built = System.nanoTime();
      List<NcclCommunicator> comms = new ArrayList<>();
      for (String a : axes) {
        comms.add((NcclCommunicator) mesh.axis(a));
      }
      mesh.close();
      long closed = System.nanoTime();
      long inComms = 0;
      StringBuilder line = new StringBuilder();
      for (int i = 0; i < comms.size(); i++) {
        CloseTimeline t = comms.get(i).state().closeTimeline();
        if (t == null) {
          line.append(String.format(Locale.ROOT, "%n  %s: no close recorded", axes.get(i)));
          continue;
        }
        inComms += t.totalNanos();
        line.append(String.format(Locale.ROOT, "%n  %s: age %.1f, %s", axes.get(i), ms(t.started() - built),
            parts(t)));
      }
      System.out.printf(Locale.ROOT, "round %d: build %.2f, Mesh.close %.2f (its communicators %.2f, the rest %.3f)%s%n",
          round, ms(built - t0), ms(closed - built), ms(inComms), ms(closed - built - inComms), line);
    }
  }

  private static String parts(CloseTimeline t) {
    return String.format(Locale.ROOT, "close %.2f = graphs %.3f + ncclCommDestroy %.2f + release %.3f",
        ms(t.totalNanos()), ms(t.graphsNanos()), ms(t.destroyNanos()), ms(t.releaseNanos()));
  }

  /** Raw splits of the world, finalized and destroyed after each pause; then all finalized before any destroy. */
  private static void raw(NcclCommunicator world) {
    boolean finalize = NcclCommunicators.hasCommFinalize();
    System.out.println("# raw: " + RAW_SPLITS + " ncclCommSplit of the world, a pause, then each in turn "
        + (finalize ? "ncclCommFinalize, its wait, " : "(no ncclCommFinalize in this NCCL) ") + "ncclCommDestroy");
    System.out.println("# poll_left = 500 - (age mod 500): what a 500 ms poll begun when the split returned would"
        + " have left; the UDS thread began during the split, so up to split ms less");
    System.out.println("pause comm split age finalize wait destroy poll_left");
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment scratch = arena.allocate(JAVA_INT);
      for (long pause : PAUSES_MS) {
        Split[] splits = split(world);
        try {
          sleep(pause);
          for (int i = 0; i < splits.length; i++) {
            Split one = splits[i];
            long t0 = System.nanoTime();
            long finalized = t0;
            long waited = t0;
            if (finalize) {
              CheckedNccl.nccl("ncclCommFinalize", NcclCommunicators.ncclCommFinalize(one.handle()), one.handle());
              finalized = System.nanoTime();
              awaitFinalized(one.handle(), scratch, "raw split #" + i);
              waited = System.nanoTime();
            }
            splits[i] = null; // destroyed below, whatever it returns: not to be aborted after
            CheckedNccl.ncclCommDestroy(one.handle());
            long destroyed = System.nanoTime();
            double age = ms(t0 - one.made());
            System.out.printf(Locale.ROOT, "%d %d %.2f %.1f %.3f %.3f %.2f %.1f%n", pause, i,
                ms(one.made() - one.started()), age, ms(finalized - t0), ms(waited - finalized),
                ms(destroyed - waited), 500 - age % 500);
          }
        } finally {
          abortLeft(splits);
        }
      }
      if (finalize) {
        Split[] splits = split(world);
        try {
          long t0 = System.nanoTime();
          for (int i = 0; i < splits.length; i++) {
            long h = splits[i].handle();
            CheckedNccl.nccl("ncclCommFinalize", NcclCommunicators.ncclCommFinalize(h), h);
            awaitFinalized(h, scratch, "raw split #" + i);
          }
          long finalized = System.nanoTime();
          long[] each = new long[splits.length];
          for (int i = 0; i < splits.length; i++) {
            long handle = splits[i].handle();
            splits[i] = null;
            long d0 = System.nanoTime();
            CheckedNccl.ncclCommDestroy(handle);
            each[i] = System.nanoTime() - d0;
          }
          long destroyed = System.nanoTime();
          System.out.printf(Locale.ROOT, "every finalize first: finalize+wait %.3f, then destroy %.2f (each: %.2f, %.2f,"
              + " %.2f); total %.2f%n", ms(finalized - t0), ms(destroyed - finalized), ms(each[0]), ms(each[1]),
              ms(each[2]), ms(destroyed - t0));
        } finally {
          abortLeft(splits);
        }
      }
    }
  }

  /** A raw split: its handle, and when {@code ncclCommSplit} began and returned. */
  private record Split(long handle, long started, long made) {}

  private static Split[] split(NcclCommunicator world) {
    world.useDevice();
    Split[] splits = new Split[RAW_SPLITS];
    int[] rc = new int[1];
    for (int i = 0; i < splits.length; i++) {
      long t0 = System.nanoTime();
      long h = CheckedNccl.ncclCommSplitRaw(world.handle(), i, 0, 0, rc);
      if (rc[0] != 0) {
        if (h != 0) {
          CheckedNccl.ncclCommAbortQuietly(h);
        }
        abortLeft(splits);
        throw CheckedNccl.ncclError("ncclCommSplit (raw split #" + i + " of the world)", rc[0], world.handle());
      }
      splits[i] = new Split(h, t0, System.nanoTime());
    }
    return splits;
  }

  /** {@code ncclCommGetAsyncError} until it is not {@code ncclInProgress} (at once for a blocking communicator). */
  private static void awaitFinalized(long comm, MemorySegment scratch, String what) {
    long deadline = System.nanoTime() + FINALIZE_LIMIT_NANOS;
    while (true) {
      int rc = CheckedNccl.ncclCommGetAsyncErrorRaw(comm, scratch);
      if (rc != NcclResult.IN_PROGRESS.code()) {
        if (rc != 0) {
          throw CheckedNccl.ncclError("ncclCommGetAsyncError after ncclCommFinalize of " + what, rc, comm);
        }
        return;
      }
      if (System.nanoTime() - deadline > 0) {
        throw new CommPlanException("NcclCloseProbe: ncclCommFinalize of " + what + " still ncclInProgress after "
            + FINALIZE_LIMIT_NANOS / 1_000_000_000L + " s (ncclCommGetAsyncError)");
      }
      Thread.onSpinWait();
    }
  }

  /** On a failure path: aborts the raw splits not destroyed yet. */
  private static void abortLeft(Split[] splits) {
    for (int i = 0; i < splits.length; i++) {
      if (splits[i] != null) {
        CheckedNccl.ncclCommAbortQuietly(splits[i].handle());
        splits[i] = null;
      }
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommPlanException("NcclCloseProbe interrupted in its pause", e);
    }
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
