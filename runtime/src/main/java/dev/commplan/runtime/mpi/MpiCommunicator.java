package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.spi.BackendCommunicator;
import dev.commplan.runtime.spi.FlightGroup;
import dev.commplan.runtime.spi.StreamBase;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

/**
 * This process's rank of an MPI communicator (a duplicate of {@code MPI_COMM_WORLD}, with {@code
 * MPI_ERRORS_RETURN} so that errors come back as {@link MpiException}s instead of killing the job). Made
 * by {@link MpiBackend#world()}; one per process and call, on every rank.
 *
 * <p>The asynchronous model, as close to a stream as MPI allows: a collective, a group or a plan's step
 * is started with MPI's non-blocking collectives ({@code MPI_Iallreduce}, {@code MPI_Iallgather}, {@code
 * MPI_Ireduce_scatter_block}, {@code MPI_Ibcast}, {@code MPI_Ireduce}, {@code MPI_Igather}, {@code
 * MPI_Iscatter}, {@code MPI_Ialltoall}) and point-to-point calls ({@code MPI_Isend}, {@code MPI_Irecv})
 * and the call returns with them in flight. The next one
 * (or {@link Stream#synchronize()}) first completes them ({@code MPI_Testall} until all are done), since
 * it may read their results; the calls of one group or one step are in flight together. Open MPI makes
 * progress on them inside MPI calls, so most of the transfer happens while completing.
 *
 * <p>MPI errors never end the job: {@code MPI_ERRORS_RETURN} is set on this communicator and on {@code
 * MPI_COMM_WORLD} (where Open MPI reports errors of non-blocking collectives), and an error, including one
 * a call reports only when it completes, becomes an {@link MpiException} naming the call. A failure ends
 * every communicator of the family on every rank ({@link MpiFamily}).
 *
 * <p>{@link #split} makes a communicator of a group ({@code MPI_Comm_split}) with its own stream, in this
 * one's family; a plan compiled here may run calls over the family's communicators (a mesh's axes).
 *
 * <p>Every wait has a deadline, {@link #timeout()}. MPI cannot cancel a collective, and a rank that gave
 * up on one would leave the others inside it; so when the deadline passes, the rank tells every rank of the
 * family (a notice, {@link MpiFamily}), waits a moment for their answers, and throws a {@link
 * CommTimeoutException} naming what it waited for, its group and the ranks that did not answer; the others
 * end their waits with a {@link RankAbortedException} naming it.
 *
 * <p>Streams: each has its own requests in flight ({@link MpiStreams}).
 *
 * <p>Like the other backends' communicators, it is used by one thread at a time.
 */
public final class MpiCommunicator extends AbstractCommunicator {
  private final MpiCommPair comms; // its calls' MPI_Comm and the agreement check's (MpiCommPair says why)
  private final int rank;
  private final int size;
  private final long timeoutNanos;
  private final Duration timeout;
  private final CommOptions options;
  private final MpiStream stream;
  /** Its streams (the own one first) and what they have in flight. */
  private final MpiStreams streams;
  private final MpiFamily family;
  private final String label;
  private final MpiCommunicator parent; // null for the world
  private final int[] worldRanks; // world rank of each rank here; null for the world
  private final List<MpiCommunicator> children = new ArrayList<>();
  private final Set<MpiMemory> live = ConcurrentHashMap.newKeySet();

  private volatile boolean closed;
  private volatile RuntimeException failure;
  private int groupDepth;
  private final MpiDirectCalls direct = new MpiDirectCalls(this);
  /** Its part of this rank's flight record: its streams' recorders and the group's sequence; closed with it. */
  private final FlightGroup flight;

  private MpiCommunicator(MpiCommPair comms, int rank, int size, CommOptions options, MpiFamily family, String label,
      MpiCommunicator parent, int[] worldRanks) {
    super(options.agreementCheck());
    this.options = options;
    Duration timeout = options.timeout();
    this.comms = comms;
    this.rank = rank;
    this.size = size;
    this.timeout = timeout;
    this.timeoutNanos = timeout.toNanos();
    this.family = family;
    this.label = label;
    this.parent = parent;
    this.worldRanks = worldRanks;
    this.flight = family.flightLog().group(label, rank, size,
        worldRanks != null ? worldRanks : IntStream.range(0, size).toArray(), null);
    this.stream = new MpiStream(this, timeout, 0);
    this.streams = new MpiStreams(stream);
    family.join(this);
  }

  /** Duplicates {@code MPI_COMM_WORLD} (collective: every rank calls it) and sets {@code MPI_ERRORS_RETURN}. */
  static MpiCommunicator dupWorld(CommOptions options) {
    Objects.requireNonNull(options, "options");
    MpiRuntime.ensureInitialized();
    MpiRuntime.LOCK.lock();
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment value = arena.allocate(JAVA_INT);
      long comm = MpiRuntime.dup(Mpi.Handles.COMM_WORLD, "the world's communicator (a duplicate of MPI_COMM_WORLD)");
      MpiRuntime.check("MPI_Comm_rank", Mpi.MPI_Comm_rank(comm, value.address()), "reading the rank");
      int rank = value.get(JAVA_INT, 0);
      MpiRuntime.check("MPI_Comm_size", Mpi.MPI_Comm_size(comm, value.address()), "reading the size");
      int size = value.get(JAVA_INT, 0);
      MpiFamily family = MpiFamily.open(comm, rank, size, options.flightRecordDir());
      MpiCommunicator c = new MpiCommunicator(MpiCommPair.of(comm, family, "world"), rank, size, options, family,
          "world", null, null);
      MpiRuntime.register(c);
      return c;
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /**
   * This rank's communicator of a group split from this one ({@link MpiSplits}; collective over the group: it
   * duplicates {@code childHandle} for the agreement check, {@link MpiCommPair}); holding the MPI lock.
   */
  MpiCommunicator child(long childHandle, int childRank, int childSize, String childLabel, int[] childWorldRanks) {
    MpiCommunicator child = new MpiCommunicator(MpiCommPair.of(childHandle, family, childLabel), childRank, childSize,
        options, family, childLabel, this, childWorldRanks);
    children.add(child);
    MpiRuntime.register(child);
    return child;
  }

  /** {@return the world rank of rank {@code groupRank} here} */
  int worldRank(int groupRank) {
    return worldRanks == null ? groupRank : worldRanks[groupRank];
  }

  /** The {@code MPI_Comm} handle, for MPI calls. */
  long handle() {
    return comms.calls().value();
  }

  /** The {@code MPI_Comm} of calls with its live calls, for call tables; the agreement check's own if {@code check}. */
  MpiCommHandle commHandle(boolean check) {
    return check ? comms.check() : comms.calls();
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return size;
  }

  @Override
  public Stream stream() {
    if (closed) {
      if (MpiRuntime.endingReason() != null) {
        ensureUsable(); // says that the process is being ended, not that the user closed it
      }
      throw closedStreamRefusal();
    }
    return stream;
  }

  @Override
  public String backendName() {
    return "mpi";
  }

  /** {@inheritDoc} {@code world} for {@link MpiBackend#world()}'s communicator. */
  @Override
  public String groupLabel() {
    return label;
  }

  /** {@code rank 3}, or {@code rank 1 of axis tp of mesh [dp=2, tp=4]} for a split communicator. */
  String rankText() {
    return parent == null ? "rank " + rank : "rank " + rank + " of " + label;
  }

  MpiFamily family() {
    return family;
  }

  /** {@inheritDoc} Here: made with the communicator, in its family's record; its streams' recorders in it. */
  @Override
  protected FlightGroup flightGroup() {
    return flight;
  }

  /** {@inheritDoc} Memory of any communicator of this one's family: they are one process's host memory. */
  @Override
  public boolean sharesMemoryWith(Communicator owner) {
    return owner instanceof MpiCommunicator other && other.family == family;
  }

  /** {@return how long a wait for collectives may take before the job is aborted (see the class comment)} */
  public Duration timeout() {
    return timeout;
  }

  // ---------------------------------------------------------------- memory, schedules

  /** {@inheritDoc} Native host memory, zeroed, 256-byte aligned; freed on close or when this communicator closes. */
  @Override
  public DeviceMemory allocate(long bytes) {
    ensureUsable();
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot allocate " + bytes + " bytes");
    }
    MpiMemory memory = new MpiMemory(this, bytes);
    live.add(memory);
    return memory;
  }

  void forget(MpiMemory memory) {
    live.remove(memory);
  }

  /**
   * Before a block is freed: completes what is in flight, as {@code cudaFree} waits for the device, since
   * MPI may still read or write the block. Returns false when that is not possible (the communicator
   * failed with calls in flight); the block is then left allocated rather than freed under MPI.
   */
  boolean quiesceBeforeFree() {
    for (MpiCommunicator member : family.members()) { // a plan over a mesh's axes uses its world's memory
      if (!member.streams.idle()) {
        if (member.closed || member.failure != null || family.failure() != null || !MpiRuntime.isInitialized()) {
          return false;
        }
        member.completeInFlight();
      }
    }
    return !family.busy(); // a closed member's abandoned calls may still use it
  }

  /** {@inheritDoc} Here: another stream with requests in flight of its own (see the class comment). */
  @Override
  protected StreamBase openStream() {
    return streams.open(timeout);
  }

  /** A stream {@code newStream()} made is being closed: what it has in flight is completed, where MPI still can. */
  void closing(MpiStream s) {
    streams.close(s, !closed && failure == null && family.failure() == null && MpiRuntime.isInitialized(),
        timeoutNanos);
  }

  @Override
  protected CompiledSchedule compileChecked(Schedule schedule) {
    return new MpiCompiledSchedule(this, new MpiCallTable(this, schedule));
  }

  // ---------------------------------------------------------------- collectives

  @Override
  protected void enqueueDirect(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op, int root,
      Stream stream) {
    direct.start(collective, send, recv, op, root, count, issuingAgreementCheck(), streamOf(stream));
  }

  /** Its calls outside plans; {@link MpiSplits} labels its own, {@link #close} its comparison of the last calls. */
  MpiDirectCalls directCalls() {
    return direct;
  }

  /**
   * Opens a group: what is in flight on every stream is completed first (the group's calls may go to any);
   * they are then started as they come and are in flight together, until something after the group completes
   * them. Groups nest.
   */
  @Override
  protected void openGroup() {
    if (groupDepth == 0) {
      completeInFlight();
    }
    groupDepth++;
  }

  @Override
  protected void closeGroup() {
    if (groupDepth == 0) {
      throw new IllegalStateException(rankText() + ": groupEnd() without a matching groupStart()");
    }
    groupDepth--;
  }

  // ---------------------------------------------------------------- in flight

  /**
   * Starts step {@code step} of {@code table} on stream {@code on}: outside a group, after completing the
   * events {@code on} waits for and what is in flight on it.
   */
  void run(MpiCallTable table, int step, MpiStream on) {
    ensureUsable();
    if (groupDepth == 0) {
      MpiStreams.complete(on, timeoutNanos);
    }
    if (table.inFlight(step)) {
      throw new IllegalStateException(table.planName + ", step " + table.stepNumber(step)
          + " is already in flight in this group; a step runs at most once per group");
    }
    int failed;
    MpiRuntime.LOCK.lock();
    try {
      requireMpiAlive();
      failed = table.start(step);
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    on.inFlight.add(table, step); // also after a failure: earlier calls of the step may be in flight
    if (failed >= 0) {
      on.inFlight.lastFailed();
      MpiException e = MpiRuntime.error(table.function(failed), table.failedCode,
          "starting " + table.describe(failed) + " on " + rankText());
      MpiRuntime.LOCK.lock();
      try {
        family.fail(this, MpiNotice.FAILED, e);
      } finally {
        MpiRuntime.LOCK.unlock();
      }
      throw e;
    }
  }

  /**
   * A stream's wait: completes the events it waits for, then everything in flight on it, within {@code
   * timeout} ({@link MpiInFlight#complete}).
   */
  void synchronize(MpiStream s, Duration timeout) {
    ensureUsable();
    // the comparison a close makes waits as long as a close waits, longer than the calls before it
    MpiStreams.complete(s, direct.checkingAtClose() ? MpiFamily.closeWaitNanos(timeout.toNanos()) : timeout.toNanos());
  }

  private void completeInFlight() {
    streams.completeAll(timeoutNanos);
  }

  /** A call table's step completed: a direct call's table goes back to the pool. */
  void completed(MpiCallTable table) {
    if (table.planName == null) {
      direct.release(table);
    }
  }

  /** The deadline passed with {@code pending} in flight: the family fails ({@link MpiFamily#timedOut}). */
  void timedOut(long waitedNanos, String pending, MpiCallTable first, int step) {
    throw family.timedOut(this, waitedNanos, timeout, pending, first, step);
  }

  /** The family failed with {@code cause} (this rank's own failure, or another rank's notice). */
  void failedBy(RuntimeException cause) {
    if (failure == null) {
      failure = cause;
    }
  }

  void requireMpiAlive() {
    if (!MpiRuntime.isInitialized()) {
      throw new IllegalStateException("MPI was finalized (MpiBackend.finalizeMpi() or JVM shutdown); " + rankText()
          + "'s communicator cannot be used any more");
    }
  }

  @Override
  protected void ensureUsable() {
    if (closed) {
      String ending = MpiRuntime.endingReason();
      throw new IllegalStateException("mpi communicator of " + rankText() + (ending != null ? " " + ending
          : " is closed"));
    }
    RuntimeException f = failure != null ? failure : family.failure();
    if (f != null) {
      throw new RankAbortedException(rankText() + "'s MPI communicator failed earlier and cannot be used: "
          + f.getMessage(), f);
    }
  }

  /** {@code target}, checked to be an open stream of this communicator (its own, or one {@code newStream()} made). */
  MpiStream streamOf(Stream target) {
    ensureUsable();
    return streams.of(this, target);
  }

  // ---------------------------------------------------------------- lifecycle

  @Override
  public boolean isClosed() {
    return closed;
  }

  /**
   * {@inheritDoc} Here the family fails with it, so that the ranks waiting in the split end at once with a
   * {@code RankAbortedException} naming this rank and the refusal, instead of at their timeout.
   */
  @Override
  protected void splitRefused(IllegalArgumentException refusal) {
    failFamily(refusal);
  }

  /**
   * Fails this communicator's family on every rank with {@code failure}, found on this rank alone (a refused
   * split, ranks that disagree): the others learn it through the family's messages, as of an MPI error.
   */
  void failFamily(RuntimeException failure) {
    MpiRuntime.LOCK.lock();
    try {
      if (MpiRuntime.isInitialized() && !isClosed()) {
        family.fail(this, MpiNotice.FAILED, failure);
      }
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /**
   * Completes what is in flight (within the timeout), then compares the calls no agreement check compared yet
   * with one last check over the check's own communicator ({@link MpiCommPair}), where this rank closes normally
   * (not once the family failed, nobody else would come, nor where {@link MpiBackend#finalizeMpi()} or the
   * JVM's exit closes what the program left open), frees both communicators ({@code MPI_Comm_free}; when a
   * call over one is still in flight elsewhere, such as a plan's call over a mesh axis on the world's stream,
   * once that call completes, see {@link MpiCommHandle}) and every block allocated through it (unless calls of
   * the family that failed may still use them). Closing {@link MpiBackend#world()}'s communicator also waits, at
   * most twice the timeout, until every rank closes it ({@link MpiFamily#closeWorld}), and throws if another rank
   * of the family failed: a rank whose own calls all succeeded learns there, at the latest, that a peer's did not.
   * Idempotent. MPI itself stays initialized until {@link MpiBackend#finalizeMpi()} or the JVM exits.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    RuntimeException error = closeChildren();
    RuntimeException lastCheck = completeAndCompareLastCalls();
    error = lastCheck != null ? lastCheck : error;
    error = firstOf(error, parent == null ? closeWorld() : null);
    closed = true;
    error = firstOf(error, closeMadeStreams(null)); // a stream with requests still in flight stays in `streams`
    MpiRuntime.forget(this);
    family.leave(this);
    flight.close();
    if (parent != null) {
      parent.children.remove(this);
    }
    error = firstOf(error, releaseComms());
    // Unless MPI may still write into them (a call over any communicator of the family): then they are left
    // to the process's end.
    if (!family.busy()) {
      for (MpiMemory memory : new ArrayList<>(live)) {
        memory.closeForOwner();
      }
      live.clear();
    }
    if (error != null) {
      throw error;
    }
  }

  private static RuntimeException firstOf(RuntimeException first, RuntimeException next) {
    return first != null ? first : next;
  }

  /**
   * Closes the communicators split from this one (closed with it at the latest); returns the first failure, or
   * null.
   */
  private RuntimeException closeChildren() {
    RuntimeException error = null;
    for (MpiCommunicator child : new ArrayList<>(children)) {
      try {
        child.close();
      } catch (RuntimeException e) {
        error = firstOf(error, e);
      }
    }
    return error;
  }

  /**
   * Where this rank closes normally, completes what is in flight, then compares the calls no check compared yet
   * on every rank closing normally (not what finalizeMpi, or the JVM's exit, closes for the program). Returns
   * the failure, or null.
   */
  private RuntimeException completeAndCompareLastCalls() {
    if (failure != null || family.failure() != null || !MpiRuntime.isInitialized()) {
      return null;
    }
    try {
      completeInFlight(); // first: a rank waiting in the comparison below then waits for the check alone
      if (!MpiRuntime.closingAll()) {
        direct.checkAtClose(this::compareLastCalls);
      }
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /** Waits at the world's close barrier ({@link MpiFamily#closeWorld}); returns its failure, or null. */
  private RuntimeException closeWorld() {
    if (!MpiRuntime.isInitialized()) {
      return null;
    }
    try {
      family.closeWorld(this, timeoutNanos);
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /**
   * Frees both communicators, each now or when the last call over it completes ({@link MpiCommPair#release});
   * what may still be in flight keeps this communicator reachable until MPI is finalized. Returns the failure
   * to free, or null.
   */
  private RuntimeException releaseComms() {
    MpiRuntime.LOCK.lock();
    try {
      int rc = comms.release();
      if (comms.busy() || !streams.idle()) {
        MpiRuntime.keepUntilFinalized(this); // its calls' tables (scratch blocks MPI may write) stay reachable
      }
      return rc == Mpi.SUCCESS ? null
          : MpiRuntime.error("MPI_Comm_free", rc, "freeing " + rankText() + "'s communicator");
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /**
   * {@inheritDoc} {@code MPI_Comm_split}, after an all-gather of every rank's color and key over this
   * communicator, waited for with the timeout ({@link MpiSplits}): the new communicator has its own stream and
   * belongs to this one's family.
   */
  @Override
  protected BackendCommunicator splitGroup(int color, int key, String groupLabel) {
    if (groupDepth > 0) {
      throw new IllegalStateException(rankText() + ": split() inside a group (groupStart() .. groupEnd()); split"
          + " outside groups, as NCCL requires");
    }
    return MpiSplits.split(this, color, key, groupLabel);
  }

  @Override
  public String toString() {
    return "MpiCommunicator[rank " + rank + " of " + size + (parent == null ? "" : " in " + label)
        + (closed ? ", closed" : "") + "]";
  }
}
