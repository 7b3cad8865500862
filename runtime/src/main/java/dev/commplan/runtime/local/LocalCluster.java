package dev.commplan.runtime.local;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.RankFunction;
import dev.commplan.runtime.RankTask;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The local backend: N ranks as threads of this JVM, no GPU needed. Each rank has a {@link
 * LocalCommunicator} and a {@link LocalStream} (one worker thread, asynchronous and in order); device
 * memory is off-heap ({@link LocalMemory}). Collectives have NCCL's meaning for every data type and op,
 * with a reduction order (rank 0 to n-1) that makes every rank's result bitwise identical.
 *
 * <p>Failure never hangs: when a rank's task or a piece of its stream's work throws, the cluster aborts.
 * Every rank waiting at a collective wakes with {@link RankAbortedException} (caused by that failure),
 * every stream fails, the other rank threads are interrupted, and {@link #run} rethrows the first
 * failure wrapped in a {@link CommPlanException} that names its rank (the others' failures suppressed).
 * An aborted cluster stays aborted; make a new one. A rank that waits at a collective for longer than
 * the rendezvous timeout (default {@link #DEFAULT_RENDEZVOUS_TIMEOUT}) fails with a message naming the
 * collective, its sequence number and the ranks that arrived.
 *
 * <p>{@code run} and {@code call} may be called many times, one at a time; communicators, streams and
 * their memory live until {@link #close()}.
 */
public final class LocalCluster implements Cluster {
  /** How long a rank waits at a collective for the others unless told otherwise: 5 minutes. */
  public static final Duration DEFAULT_RENDEZVOUS_TIMEOUT = Duration.ofMinutes(5);

  private final int ranks;
  private final Duration rendezvousTimeout;
  private final LocalRendezvous rendezvous;
  private final LocalCommunicator[] communicators;
  private final Object state = new Object();
  private Thread[] runningRankThreads; // guarded by state
  private Throwable abortCause; // guarded by state
  private int abortingRank = -1; // guarded by state
  private boolean closed; // guarded by state

  /** A cluster of {@code ranks} threads with the default rendezvous timeout (5 minutes). */
  public LocalCluster(int ranks) {
    this(ranks, DEFAULT_RENDEZVOUS_TIMEOUT);
  }

  /**
   * A cluster of {@code ranks} threads.
   *
   * @param rendezvousTimeout how long a rank waits at a collective for the other ranks before failing
   */
  public LocalCluster(int ranks, Duration rendezvousTimeout) {
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
    Objects.requireNonNull(rendezvousTimeout, "rendezvousTimeout");
    if (rendezvousTimeout.isNegative() || rendezvousTimeout.isZero()) {
      throw new IllegalArgumentException("the rendezvous timeout must be positive, was " + rendezvousTimeout);
    }
    this.ranks = ranks;
    this.rendezvousTimeout = rendezvousTimeout;
    this.rendezvous = new LocalRendezvous(ranks, rendezvousTimeout);
    this.communicators = new LocalCommunicator[ranks];
    for (int rank = 0; rank < ranks; rank++) {
      communicators[rank] = new LocalCommunicator(this, rank);
    }
  }

  @Override
  public int size() {
    return ranks;
  }

  @Override
  public String backendName() {
    return "local";
  }

  /** How long a rank waits at a collective for the others. */
  public Duration rendezvousTimeout() {
    return rendezvousTimeout;
  }

  /** Whether a failure has aborted this cluster (it then refuses to run anything more). */
  public boolean isAborted() {
    synchronized (state) {
      return abortCause != null;
    }
  }

  @Override
  public void run(RankTask task) {
    Objects.requireNonNull(task, "task");
    call(comm -> {
      task.run(comm);
      return null;
    });
  }

  @Override
  public <T> List<T> call(RankFunction<T> function) {
    Objects.requireNonNull(function, "function");
    Object[] results = new Object[ranks];
    Throwable[] failures = new Throwable[ranks];
    List<Integer> failureOrder = new ArrayList<>();
    Thread[] threads = new Thread[ranks];
    for (int r = 0; r < ranks; r++) {
      int rank = r;
      threads[r] = Thread.ofPlatform().name("commplan-local-rank-" + rank).daemon(true).unstarted(() -> {
        try {
          results[rank] = function.apply(communicators[rank]);
        } catch (Throwable t) {
          synchronized (failureOrder) {
            failures[rank] = t;
            failureOrder.add(rank);
          }
          abort(rank, t);
        }
      });
    }
    startRun(threads);
    try {
      awaitRankThreads(threads);
    } finally {
      synchronized (state) {
        runningRankThreads = null;
      }
    }
    synchronized (failureOrder) {
      if (!failureOrder.isEmpty()) {
        throw firstFailure(failures, failureOrder);
      }
    }
    @SuppressWarnings("unchecked")
    List<T> list = (List<T>) Arrays.asList(results);
    return list;
  }

  private void startRun(Thread[] threads) {
    synchronized (state) {
      if (closed) {
        throw new IllegalStateException("this local cluster is closed");
      }
      if (abortCause != null) {
        throw new IllegalStateException(
            "this local cluster was aborted when rank " + abortingRank + " failed (" + abortCause.getMessage()
                + "); its ranks' state is lost, make a new cluster", abortCause);
      }
      if (runningRankThreads != null) {
        throw new IllegalStateException("this local cluster is already running a task; run one at a time");
      }
      runningRankThreads = threads;
    }
    for (Thread thread : threads) {
      thread.start();
    }
  }

  /**
   * Waits for every rank thread. After an abort the others get a bounded wait (the rendezvous timeout)
   * to notice; a thread still running then is stuck in user code that ignores interrupts, and is reported
   * rather than waited for forever.
   */
  private void awaitRankThreads(Thread[] threads) {
    try {
      for (Thread thread : threads) {
        while (thread.isAlive()) {
          if (isAborted()) {
            thread.join(rendezvousTimeout);
            if (thread.isAlive()) {
              throw new CommPlanException(
                  thread.getName() + " did not stop within " + rendezvousTimeout + " of the cluster's abort"
                      + " (it is blocked somewhere that ignores interrupts) and was left running",
                  abortCauseOrNull());
            }
          } else {
            thread.join(100); // wake now and then to switch to the bounded wait once aborted
          }
        }
      }
    } catch (InterruptedException e) {
      abort(-1, e);
      Thread.currentThread().interrupt();
      throw new CommPlanException("interrupted while waiting for the ranks; the cluster was aborted", e);
    }
  }

  private CommPlanException firstFailure(Throwable[] failures, List<Integer> failureOrder) {
    // The rank whose failure caused the abort is the first failure; its task may have thrown after
    // others' (they were woken by the abort), so prefer it when it threw at all.
    int first = failureOrder.getFirst();
    synchronized (state) {
      if (abortingRank >= 0 && failures[abortingRank] != null) {
        first = abortingRank;
      }
    }
    Throwable cause = failures[first];
    CommPlanException failure =
        new CommPlanException("rank " + first + " of " + ranks + " failed: " + cause, cause);
    for (int rank : failureOrder) {
      if (rank != first) {
        failure.addSuppressed(failures[rank]);
      }
    }
    return failure;
  }

  /**
   * Aborts the cluster because {@code rank} failed with {@code cause} (rank -1: the caller of run was
   * interrupted): wakes every rendezvous, fails every stream, interrupts the other rank threads and stream
   * workers. Only the first abort counts; later ones do nothing.
   */
  void abort(int rank, Throwable cause) {
    Thread[] rankThreads;
    synchronized (state) {
      if (abortCause != null) {
        return;
      }
      abortCause = cause;
      abortingRank = rank;
      rankThreads = runningRankThreads;
    }
    rendezvous.abort(rank, cause);
    String who = rank >= 0 ? "rank " + rank : "the caller of run";
    for (LocalCommunicator comm : communicators) {
      comm.stream().fail(new RankAbortedException(
          "rank " + comm.rank() + " aborted because " + who + " failed: " + cause, cause));
      if (comm.rank() != rank) {
        comm.stream().interruptWorker();
      }
    }
    if (rankThreads != null) {
      for (int r = 0; r < rankThreads.length; r++) {
        if (r != rank && rankThreads[r] != Thread.currentThread()) {
          rankThreads[r].interrupt();
        }
      }
    }
  }

  /** {@code exception} itself, or, if the cluster has been aborted, a RankAbortedException caused by the abort. */
  RuntimeException abortedOr(RuntimeException exception) {
    Throwable cause = abortCauseOrNull();
    return cause == null
        ? exception
        : new RankAbortedException(exception.getMessage() + " (the cluster was aborted: " + cause + ")", cause);
  }

  private Throwable abortCauseOrNull() {
    synchronized (state) {
      return abortCause;
    }
  }

  LocalRendezvous rendezvous() {
    return rendezvous;
  }

  /**
   * Closes every rank: stops the stream workers (work still pending is dropped, a collective still waiting
   * is woken) and frees all memory allocated through the communicators. Idempotent.
   */
  @Override
  public void close() {
    synchronized (state) {
      if (closed) {
        return;
      }
      closed = true;
    }
    // Wake any worker still waiting at a collective so that shutting it down cannot block.
    rendezvous.abort(-1, new CommPlanException("the local cluster was closed"));
    for (LocalCommunicator comm : communicators) {
      comm.close();
    }
  }

  @Override
  public String toString() {
    return "LocalCluster[" + ranks + " ranks" + (isAborted() ? ", aborted" : "") + "]";
  }
}
