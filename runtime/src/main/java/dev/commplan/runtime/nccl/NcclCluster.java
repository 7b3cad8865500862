package dev.commplan.runtime.nccl;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.RankFunction;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.NcclEnvironment;
import dev.commplan.runtime.nccl.rank.NcclFamily;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import dev.commplan.runtime.nccl.sharing.GpuSharingRules;
import dev.commplan.runtime.spi.FlightJob;
import dev.commplan.runtime.spi.RankSupervisor;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.IntPredicate;

/**
 * One process driving N ranks: rank {@code r} on CUDA device {@code r % devices}, all made at once as
 * {@code ncclCommInitAll} makes them ({@code CheckedNccl.ncclCommInitGroup}), and one platform thread per rank
 * that has {@code cudaSetDevice}'d to its GPU and runs that rank's tasks. More ranks than devices share
 * GPUs where {@link GpuSharingRules} allows it (NCCL 2.30 and the opt-in), with the CTA limit it chooses.
 *
 * <p>Failures follow {@link RankSupervisor}'s rules, shared with every backend; here aborting a rank
 * means asking its communicator to give up: it sees that at its next call, or while waiting in {@code
 * Stream.synchronize()} (which polls), calls {@code ncclCommAbort} on its own thread and throws {@code
 * RankAbortedException}. A rank that has not given up after {@value #GRACE_MILLIS} ms (blocked inside
 * NCCL or CUDA) is aborted from outside, as NCCL documents for a hung call. The cluster refuses further
 * work once a communicator was aborted.
 *
 * <p>Timeouts ({@link CommOptions#timeout()}): each rank's {@code synchronize()} has its own (see {@link
 * NcclCommunicator}). While a task runs, the calling thread is the cluster's watchdog: every millisecond
 * it checks whether a rank has been blocked in a host call that waits for its peers ({@code ncclGroupEnd}
 * of a blocking communicator) for longer than the timeout, and every 100 ms it polls each communicator's
 * {@code ncclCommGetAsyncError}; either aborts that communicator from outside, which returns the blocked
 * call, and the rank fails with {@code CommTimeoutException} or {@link NcclException}. No extra thread
 * is started.
 *
 * <p>A rank's communicators are its world's {@link NcclFamily}: the world and every split of it. The
 * watchdog watches each of them, a request to give up reaches each of them (the rank gives up in
 * whichever it waits), and aborting one aborts them all.
 */
final class NcclCluster implements Cluster {
  static final long GRACE_MILLIS = 5_000;
  /** How often the watchdog polls ncclCommGetAsyncError while a task runs. */
  static final long ASYNC_POLL_NANOS = 100_000_000L;

  private final int size;
  /** How many devices the ranks use: rank r is on device {@code r % devices}. */
  private final int devices;
  private final GpuSharing sharing;
  private final NcclCommunicator[] comms;
  private final RankSupervisor supervisor;
  private volatile boolean closed;

  private NcclCluster(int size, int devices, GpuSharing sharing) {
    this.size = size;
    this.devices = devices;
    this.sharing = sharing;
    this.comms = new NcclCommunicator[size];
    this.supervisor = new RankSupervisor("nccl", size, Duration.ofMillis(GRACE_MILLIS));
  }

  static NcclCluster create(int ranks) {
    return create(ranks, CommOptions.defaults());
  }

  static NcclCluster create(int ranks, CommOptions options) {
    Objects.requireNonNull(options, "options");
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
    int devices = NcclEnvironment.deviceCount();
    NcclVersion version = NcclEnvironment.requireNccl();
    GpuSharing sharing = GpuSharingRules.prepare(GpuSharingRules.ranksPerGpu(ranks, devices),
        GpuSharingRules.clusterText(ranks, devices), GpuSharingRules.fewerRanks(devices), version).inOneContext();
    if (sharing.oneContext()) {
      GpuSharingRules.prepareSharedContext();
    }
    int[] deviceOf = new int[ranks];
    for (int r = 0; r < ranks; r++) {
      deviceOf[r] = r % devices;
    }
    GpuSharingRules.beforeInit();
    long[] handles;
    try {
      handles = CheckedNccl.ncclCommInitGroup(deviceOf, sharing.maxCtas());
    } catch (NcclException e) {
      throw GpuSharingRules.explainInitFailure(e, version);
    }
    NcclCluster cluster = new NcclCluster(ranks, Math.min(ranks, devices), sharing);
    // The flight records: one job for the cluster; every rank writes its file when a run fails
    FlightJob job = new FlightJob(FlightJob.newId("nccl"), "nccl", ranks, options.flightRecordDir());
    cluster.supervisor.flightRecords(job);
    try {
      List<Future<NcclCommunicator>> made = cluster.supervisor.submitToEachRank(rank -> {
        CheckedCuda.cudaSetDevice(deviceOf[rank]); // this thread's device from now on
        return new NcclCommunicator(handles[rank], version, options, sharing, job);
      });
      for (int r = 0; r < ranks; r++) {
        cluster.comms[r] = get(made.get(r));
      }
    } catch (RuntimeException | Error e) {
      for (int r = 0; r < ranks; r++) {
        if (cluster.comms[r] != null) {
          try {
            cluster.comms[r].abort();
          } catch (RuntimeException suppressed) {
            e.addSuppressed(suppressed);
          }
        } else {
          CheckedNccl.ncclCommAbortQuietly(handles[r]);
        }
      }
      cluster.supervisor.close();
      throw e;
    }
    cluster.supervisor.control(cluster.new Control());
    return cluster;
  }

  /**
   * Why {@link #create} cannot make a cluster of {@code ranks} here, or null when it can: the same checks and
   * messages, without throwing or changing anything (more ranks than devices are fine where {@link
   * GpuSharingRules#refusal} finds nothing).
   */
  static String unavailableReason(int ranks) {
    try {
      int devices = NcclEnvironment.deviceCount();
      NcclVersion v = NcclEnvironment.requireNccl();
      return GpuSharingRules.refusal(GpuSharingRules.ranksPerGpu(ranks, devices),
          GpuSharingRules.clusterText(ranks, devices), GpuSharingRules.fewerRanks(devices), v, GpuSharingRules.optIn());
    } catch (BackendUnavailableException | IllegalArgumentException e) {
      return e.getMessage();
    }
  }

  /** What aborting means on this backend: each communicator gives up at its next call, or is aborted from outside. */
  private final class Control implements RankSupervisor.RankControl {
    private long lastAsyncPoll = System.nanoTime();

    @Override
    public Communicator communicator(int rank) {
      return comms[rank];
    }

    @Override
    public void abortRanks(int failedRank, Throwable cause, IntPredicate stillRunning) {
      String reason = (failedRank >= 0 ? "rank " + failedRank : "the caller of run") + " failed: " + cause;
      for (int r = 0; r < size; r++) {
        if (stillRunning.test(r)) {
          comms[r].requestAbort(reason, cause);
        }
      }
    }

    @Override
    public void forceAbort(int rank) {
      comms[rank].abortFromOutside();
    }

    /** The watchdog: host calls blocked on peers, and every 100 ms the communicators' async errors. */
    @Override
    public void watch(long now) {
      boolean pollAsync = now - lastAsyncPoll > ASYNC_POLL_NANOS;
      if (pollAsync) {
        lastAsyncPoll = now;
      }
      for (NcclCommunicator c : comms) {
        c.watch(now, pollAsync);
      }
    }

    /** Usable unless a communicator was aborted (by itself, by another rank's failure, or from outside). */
    @Override
    public boolean usableAfterFailure() {
      for (NcclCommunicator c : comms) {
        if (c.isAborted()) {
          return false;
        }
      }
      return true;
    }
  }

  private static <T> T get(Future<T> future) {
    try {
      return future.get();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CommPlanException("interrupted while setting up the NCCL cluster", e);
    } catch (ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new CommPlanException("setting up a rank failed: " + cause, cause);
    }
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public String backendName() {
    return "nccl";
  }

  /** Rank {@code r}'s communicator (for this package's tests and probes). */
  NcclCommunicator communicator(int rank) {
    return comms[rank];
  }

  @Override
  public <T> List<T> call(RankFunction<T> function) {
    if (closed) {
      throw new IllegalStateException("this NCCL cluster is closed");
    }
    return supervisor.call(function);
  }

  /**
   * Destroys every rank's communicator on its own thread, all at once ({@code ncclCommDestroy} of one rank
   * may wait for its peers); after a failure that aborted some ranks, the others are aborted too rather
   * than destroyed, since a destroy could wait for a peer that is gone. Idempotent.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    boolean broken = supervisor.isBroken();
    List<Future<Void>> closing = supervisor.submitToEachRank(rank -> {
      try {
        if (broken) {
          comms[rank].abort();
        }
      } finally {
        comms[rank].close();
      }
      return null;
    });
    Throwable[] failures = new Throwable[size];
    if (!awaitAll(closing, failures, 6 * GRACE_MILLIS)) {
      for (int r = 0; r < size; r++) {
        if (!closing.get(r).isDone()) {
          comms[r].abortFromOutside();
        }
      }
      awaitAll(closing, failures, GRACE_MILLIS);
    }
    supervisor.close();
    List<Throwable> thrown = new ArrayList<>();
    for (Throwable t : failures) {
      if (t != null) {
        thrown.add(t);
      }
    }
    if (!thrown.isEmpty()) {
      CommPlanException e = new CommPlanException("closing the NCCL cluster failed: " + thrown.getFirst().getMessage(),
          thrown.getFirst());
      thrown.subList(1, thrown.size()).forEach(e::addSuppressed);
      throw e;
    }
  }

  /** Waits up to {@code millis} for every future, recording failures; true when all are done. */
  private static boolean awaitAll(List<Future<Void>> futures, Throwable[] failures, long millis) {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    boolean all = true;
    for (int r = 0; r < futures.size(); r++) {
      try {
        futures.get(r).get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      } catch (TimeoutException e) {
        all = false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      } catch (ExecutionException e) {
        failures[r] = e.getCause();
      } catch (CancellationException e) {
        failures[r] = e;
      }
    }
    return all;
  }

  /**
   * {@code NcclCluster[2 ranks, devices 0..1]}; where ranks share a GPU, also how many and the CTA limit:
   * {@code NcclCluster[8 ranks, devices 0..0, 8 ranks share each GPU, at most 2 CTAs a rank (...); ...]}.
   */
  @Override
  public String toString() {
    return "NcclCluster[" + size + " ranks, devices 0.." + (devices - 1) + sharing.describe() + "]";
  }
}
