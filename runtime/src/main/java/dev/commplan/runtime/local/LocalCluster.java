package dev.commplan.runtime.local;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.RankFunction;
import dev.commplan.runtime.spi.FlightJob;
import dev.commplan.runtime.spi.RankSupervisor;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.IntPredicate;
import java.util.stream.IntStream;

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
 * An aborted cluster stays aborted; make a new one.
 *
 * <p>Timeouts ({@link CommOptions#timeout()}, default {@link CommOptions#DEFAULT_TIMEOUT}, 5 minutes, or
 * the system property {@value CommOptions#TIMEOUT_PROPERTY}): a rank that waits at a collective for
 * longer fails with {@link CommTimeoutException} naming the plan, step, collective, fields, the
 * collective's sequence number and the ranks that did and did not arrive, with its flight record; the
 * cluster is aborted, so every rank fails (those waiting at that collective with the timeout, the others
 * with {@link RankAbortedException}). A rank that throws or stops (returns without issuing its
 * collectives, or blocks) thus makes every other rank fail within the timeout. Each rank keeps a flight
 * record of its last operations ({@link LocalCommunicator#flightRecorder()}), printed in these messages.
 *
 * <p>{@code run} and {@code call} may be called many times, one at a time; communicators, streams and
 * their memory live until {@link #close()}.
 */
public final class LocalCluster implements Cluster {
  /**
   * How long a rank waits at a collective for the others unless told otherwise: 5 minutes, {@link
   * CommOptions#DEFAULT_TIMEOUT} (the no-argument constructor also honours the system property {@value
   * CommOptions#TIMEOUT_PROPERTY}).
   */
  public static final Duration DEFAULT_RENDEZVOUS_TIMEOUT = CommOptions.DEFAULT_TIMEOUT;

  private final int ranks;
  private final CommOptions options;
  private final Duration rendezvousTimeout;
  /** The world's group, first of {@link #groups}. */
  private final LocalGroup world;
  /** Every group of the family (the world and every split of it), so that one abort wakes them all. */
  private final List<LocalGroup> groups = new CopyOnWriteArrayList<>();
  private final LocalCommunicator[] communicators;
  /** Every communicator of every rank, the world's and the splits', so that an abort fails every stream. */
  private final List<LocalCommunicator> family = new CopyOnWriteArrayList<>();
  /** The rank threads and the failure rules every backend shares; aborting means what {@link Control} says. */
  private final RankSupervisor supervisor;
  /** The flight records of every rank: one job id for the cluster, and the folder they go to when a rank fails. */
  private final FlightJob flightJob;
  private final Object state = new Object();
  private boolean closed; // guarded by state
  /** Allocation accounting, for leak tests: this cluster's blocks (and bytes) not yet freed. */
  private final AtomicLong openBlocks = new AtomicLong();
  private final AtomicLong openBytes = new AtomicLong();

  /**
   * A cluster of {@code ranks} threads with the default options ({@link CommOptions#defaults()}: a
   * 5-minute timeout unless the system property {@value CommOptions#TIMEOUT_PROPERTY} says otherwise).
   *
   * @param ranks the number of ranks (threads), at least 1
   */
  public LocalCluster(int ranks) {
    this(ranks, CommOptions.defaults());
  }

  /**
   * A cluster of {@code ranks} threads.
   *
   * @param ranks the number of ranks (threads), at least 1
   * @param rendezvousTimeout how long a rank waits at a collective for the other ranks before failing
   */
  public LocalCluster(int ranks, Duration rendezvousTimeout) {
    this(ranks, checkedOptions(rendezvousTimeout));
  }

  /**
   * A cluster of {@code ranks} threads with {@code options} (the timeout, see the class comment).
   *
   * @param ranks the number of ranks (threads), at least 1
   * @param options the timeout every rank gets
   */
  public LocalCluster(int ranks, CommOptions options) {
    if (ranks < 1) {
      throw new IllegalArgumentException("a cluster needs at least 1 rank, not " + ranks);
    }
    Objects.requireNonNull(options, "options");
    this.ranks = ranks;
    this.options = options;
    this.rendezvousTimeout = options.timeout();
    this.flightJob = new FlightJob(FlightJob.newId("local"), "local", ranks, options.flightRecordDir());
    this.world = new LocalGroup(this, "world", IntStream.range(0, ranks).toArray(), rendezvousTimeout);
    groups.add(world);
    this.communicators = new LocalCommunicator[ranks];
    for (int rank = 0; rank < ranks; rank++) {
      communicators[rank] = new LocalCommunicator(this, world, rank, rank, null);
      family.add(communicators[rank]);
    }
    // After an abort, ranks get the timeout to stop: a rank waiting at a collective wakes at once, one in
    // code of its own is interrupted.
    this.supervisor = new RankSupervisor("local", ranks, rendezvousTimeout);
    supervisor.control(new Control());
    supervisor.flightRecords(flightJob);
  }

  /** What aborting means here: wake every collective, fail every stream, interrupt the stream workers. */
  private final class Control implements RankSupervisor.RankControl {
    @Override
    public Communicator communicator(int rank) {
      return communicators[rank];
    }

    @Override
    public void abortRanks(int failedRank, Throwable cause, IntPredicate stillRunning) {
      for (LocalGroup group : groups) {
        group.abort(failedRank, cause);
      }
      String who = failedRank >= 0 ? "rank " + failedRank : "the caller of run";
      String why = brief(cause);
      long now = System.nanoTime();
      for (LocalCommunicator comm : family) {
        for (LocalStream stream : comm.streams()) {
          // Streams that already failed (the rank that failed; ranks given their own timeout) keep that failure.
          if (!stream.hasFailed()) {
            stream.fail(new RankAbortedException(stream.who() + " (world rank " + comm.worldRank()
                + ") aborted because " + who + " failed: " + why + "\n" + stream.recorder.format(now), cause));
          }
          stream.interruptWorker(); // also the failing rank's: after a stall it is what hangs
        }
      }
    }

    /** Never: every stream keeps the abort's error, so the ranks' state is lost. */
    @Override
    public boolean usableAfterFailure() {
      return false;
    }
  }

  @Override
  public int size() {
    return ranks;
  }

  void allocated(long bytes) {
    openBlocks.incrementAndGet();
    openBytes.addAndGet(bytes);
  }

  void freed(long bytes) {
    openBlocks.decrementAndGet();
    openBytes.addAndGet(-bytes);
  }

  /** The blocks of this cluster's ranks not yet freed (0 once the cluster is closed); for leak tests. */
  long openBlocks() {
    return openBlocks.get();
  }

  /** Their bytes. */
  long openBytes() {
    return openBytes.get();
  }

  @Override
  public String backendName() {
    return "local";
  }

  private static CommOptions checkedOptions(Duration rendezvousTimeout) {
    Objects.requireNonNull(rendezvousTimeout, "rendezvousTimeout");
    if (rendezvousTimeout.isNegative() || rendezvousTimeout.isZero()) {
      throw new IllegalArgumentException("the rendezvous timeout must be positive, was " + rendezvousTimeout);
    }
    return new CommOptions(rendezvousTimeout);
  }

  /** {@return how long a rank waits at a collective for the others; the same as {@link #timeout()}} */
  public Duration rendezvousTimeout() {
    return rendezvousTimeout;
  }

  /** {@return the timeout ({@link CommOptions#timeout()})} */
  public Duration timeout() {
    return rendezvousTimeout;
  }

  /** The flight records of this cluster's ranks (one job: the cluster). */
  FlightJob flightJob() {
    return flightJob;
  }

  /** {@return the options the cluster was made with} */
  public CommOptions options() {
    return options;
  }

  /**
   * Rank {@code rank}'s communicator (for its flight recorder, say); run tasks with {@link #run}.
   *
   * @param rank the rank, in {@code [0, size())}
   * @return its communicator, owned by the cluster
   */
  public LocalCommunicator communicator(int rank) {
    Objects.checkIndex(rank, ranks);
    return communicators[rank];
  }

  /**
   * Every rank's flight record, rank 0 first: what each rank did last. For debugging.
   *
   * @return the records, one block per rank
   */
  public String flightRecords() {
    StringBuilder sb = new StringBuilder();
    long now = System.nanoTime();
    for (LocalCommunicator comm : communicators) {
      sb.append(comm.flightRecorder().format(now)).append('\n');
    }
    return sb.toString();
  }

  /** {@return whether a failure has aborted this cluster (it then refuses to run anything more)} */
  public boolean isAborted() {
    return supervisor.abortCauseOrNull() != null;
  }

  /** Runs {@code function} on every rank; the failure rules are {@link RankSupervisor}'s. */
  @Override
  public <T> List<T> call(RankFunction<T> function) {
    synchronized (state) {
      if (closed) {
        throw new IllegalStateException("this local cluster is closed");
      }
    }
    return supervisor.call(function);
  }

  /**
   * Aborts the cluster because {@code rank} failed with {@code cause} (a stream's work, a stall): every
   * rank waiting at a collective wakes, every stream fails, the other rank threads are interrupted. Only
   * the first abort counts.
   */
  void abort(int rank, Throwable cause) {
    supervisor.abort(rank, cause);
  }

  /** A failure in one line for other ranks' messages: a timeout's summary (no flight record), else toString. */
  static String brief(Throwable cause) {
    return cause instanceof CommTimeoutException t ? t.summary() : String.valueOf(cause);
  }

  /** {@code exception} itself, or, if the cluster has been aborted, a RankAbortedException caused by the abort. */
  RuntimeException abortedOr(RuntimeException exception) {
    Throwable cause = supervisor.abortCauseOrNull();
    return cause == null
        ? exception
        : new RankAbortedException(exception.getMessage() + " (the cluster was aborted: " + brief(cause) + ")", cause);
  }

  /**
   * A new group of this cluster's ranks {@code worldRanks} (a split's; rank i there is world rank {@code
   * worldRanks[i]}), part of the family: an abort wakes it too, and one made after an abort starts aborted.
   */
  LocalGroup newGroup(String label, int[] worldRanks) {
    LocalGroup group = new LocalGroup(this, label, worldRanks, rendezvousTimeout);
    groups.add(group);
    Throwable cause = supervisor.abortCauseOrNull();
    if (cause != null) {
      group.abort(-1, cause);
    }
    return group;
  }

  /** Registers a communicator of a split group, so that an abort fails its stream too. */
  void joined(LocalCommunicator comm) {
    family.add(comm);
  }

  /**
   * A split group's communicator closed: the cluster forgets it, and its group once every member of the group
   * closed (nothing waits there any more but, at most, a plan's call on a world stream, which an abort reaches
   * through that stream's interrupt).
   */
  void left(LocalCommunicator comm) {
    family.remove(comm);
    if (comm.group().memberClosed()) {
      groups.remove(comm.group());
    }
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
    CommPlanException closedCause = new CommPlanException("the local cluster was closed");
    for (LocalGroup group : groups) {
      group.abort(-1, closedCause);
    }
    for (LocalCommunicator comm : communicators) { // each closes its splits first
      comm.close();
    }
    supervisor.close();
  }

  @Override
  public String toString() {
    return "LocalCluster[" + ranks + " ranks" + (isAborted() ? ", aborted" : "") + "]";
  }
}
