package dev.commplan.runtime.nccl;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.guard.Failures;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.NcclDispatch;
import dev.commplan.runtime.nccl.calls.NcclDirectCalls;
import dev.commplan.runtime.nccl.calls.NcclScheduleCalls;
import dev.commplan.runtime.nccl.memory.CudaCopyDevice;
import dev.commplan.runtime.nccl.memory.DeviceAllocator;
import dev.commplan.runtime.nccl.memory.HostCopies;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.runtime.nccl.memory.RankMemory;
import dev.commplan.runtime.nccl.rank.NcclFamily;
import dev.commplan.runtime.nccl.rank.NcclRank;
import dev.commplan.runtime.nccl.rank.NcclRankState;
import dev.commplan.runtime.nccl.rank.NcclSplit;
import dev.commplan.runtime.nccl.rank.Seat;
import dev.commplan.runtime.nccl.rank.NcclWatchdog;
import dev.commplan.runtime.nccl.rank.StepEvents;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import dev.commplan.runtime.nccl.sharing.SharedContextFences;
import dev.commplan.runtime.nccl.streams.NcclEvents;
import dev.commplan.runtime.nccl.streams.NcclStream;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.spi.FlightGroup;
import dev.commplan.runtime.spi.FlightJob;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.StreamBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.IntStream;

/**
 * One rank of an NCCL communicator ({@code ncclComm_t}) on one GPU, with its own non-blocking CUDA
 * stream. Made by {@link NcclBackend#cluster} (one per GPU of this process) or {@link
 * NcclBackend#initRank} (one rank of a group spread over processes).
 *
 * <p>Like the {@code ncclComm_t} under it, a communicator is used by one thread at a time. Collectives
 * check their arguments with the shared rules ({@code rules.CallRules}; the local backend rejects the same
 * calls with the same messages), then enqueue through {@link NcclDirectCalls} and {@link NcclDispatch}
 * without allocating on the Java heap. Every CUDA call is made after {@code cudaSetDevice} to this rank's
 * device, on whatever thread calls.
 *
 * <p>It is the API's object over the parts the backend's layers are made of: its {@link NcclRank} (the
 * {@code ncclComm_t}, its state, flight record and graphs, which its streams, calls and compiled schedules
 * ask instead of it), its streams ({@link NcclStream}), its memory ({@link RankMemory}), its direct calls and
 * groups ({@link NcclDirectCalls}) and its compiled schedules ({@link NcclCompiledSchedule}); what it keeps
 * itself is the tree of its splits, and the order in which closing and aborting free all of them.
 *
 * <p>Its lifecycle and failures (OPEN, ABORTED, CLOSED; timeouts, asynchronous errors, a cluster's
 * request to give up) live in one {@link NcclRankState}, which its streams and compiled schedules ask
 * too; every step it enqueues is in its flight record ({@link StepEvents}). {@link #close()} destroys the
 * communicator ({@code ncclCommDestroy}), frees the memory allocated through it and destroys its
 * streams; {@link #abort()} does the same with {@code ncclCommAbort}, which also stops work still
 * running on the device.
 *
 * <p><b>Splits.</b> {@link #split(int, int, String)} makes a child on {@code ncclCommSplit} ({@link
 * NcclSplit}): its own streams and flight record, the same device, and the same {@link NcclFamily}, so
 * that one failure ends them all. Memory of any communicator of the family serves every other ({@link
 * #sharesMemoryWith}): a plan over a mesh's axes runs each call on its axis's communicator with the
 * world's memory. A parent closes its children first, then itself.
 */
public final class NcclCommunicator extends AbstractCommunicator {
  /** The system property that turns on a CUDA event per enqueued step (see {@link StepEvents}). */
  public static final String STEP_EVENTS_PROPERTY = StepEvents.PROPERTY;

  private final int rank;
  private final int size;
  private final int device;
  private final CommOptions options;
  /** The {@code ncclComm_t} and what every layer under this one asks of it: its state, flight record, graphs. */
  private final NcclRank ncclRank;
  /** Its lifecycle and failure state ({@link NcclRank#state()}). */
  private final NcclRankState state;
  private final NcclStream stream;
  /** The stream host copies run on (see {@link HostCopies}). */
  private final long copyStream;
  /** The memory allocated or wrapped through this communicator and not freed yet: freed with it at the latest. */
  private final RankMemory memory;
  /** The CUDA events behind this communicator's {@code Event}s. */
  private final NcclEvents eventPool;
  /** The communicators split from this one and still open; closed before it. */
  private final List<NcclCommunicator> children = new CopyOnWriteArrayList<>();
  /** Direct collectives and the user's groups. */
  private final NcclDirectCalls direct;
  /** The communicator this one was split from, or null; it forgets this one when this one closes. */
  private volatile NcclCommunicator parent;
  /**
   * Its part of this rank's flight record ({@link NcclFamily#flightLog()}): one recorder over all of its streams
   * ({@link StepEvents}); closed with it. A split's members are named by its lineage, the same on every rank of
   * this process, so the records of a cluster of this process list them; in other processes they are not known.
   */
  private final FlightGroup flight;

  /**
   * Wraps an initialized {@code ncclComm_t} of a world whose GPUs are shared as {@code sharing} says: reads
   * its rank, size and device, creates its streams and the flight recorder's events.
   */
  NcclCommunicator(long comm, NcclVersion version, CommOptions options, GpuSharing sharing, FlightJob job) {
    this(comm, version, options, "world", new NcclFamily(sharing, job.log(Seat.of(comm).rank())),
        SharedContextFences.Lineage.world());
  }

  /**
   * Wraps an initialized {@code ncclComm_t} of {@code family} (a split's: {@link NcclSplit}), whose group
   * messages call {@code label}; joins the family (and is aborted at once if the family failed already).
   */
  NcclCommunicator(long comm, NcclVersion version, CommOptions options, String label, NcclFamily family,
      SharedContextFences.Lineage lineage) {
    super(options.agreementCheck());
    Objects.requireNonNull(label, "label");
    Objects.requireNonNull(family, "family");
    this.options = Objects.requireNonNull(options, "options");
    Seat seat = Seat.of(comm);
    this.rank = seat.rank();
    this.size = seat.size();
    this.device = seat.device();
    CheckedCuda.cudaSetDevice(device);
    long s = CheckedCuda.cudaStreamCreateNonBlocking();
    long copies = 0;
    StepEvents made;
    boolean world = "world".equals(lineage.toString());
    this.flight = family.flightLog().group(label, rank, size, world ? IntStream.range(0, size).toArray() : null,
        lineage.toString());
    try {
      copies = CheckedCuda.cudaStreamCreateNonBlocking();
      made = new StepEvents(flight.recorder(FlightRecorder.OWN_STREAM), s);
    } catch (RuntimeException e) {
      flight.close();
      CheckedCuda.cudaStreamDestroyQuietly(s);
      if (copies != 0) {
        CheckedCuda.cudaStreamDestroyQuietly(copies);
      }
      throw e;
    }
    this.eventPool = new NcclEvents(device);
    this.copyStream = copies;
    this.memory = new RankMemory(this, new HostCopies(CudaCopyDevice.INSTANCE, device, copies),
        DeviceAllocator.choose(family.sharing(), copies, this::orderAfterRankWork));
    this.ncclRank = new NcclRank(comm, seat, version, options.timeout(), label, family, lineage, made, this::release);
    this.state = ncclRank.state();
    this.stream = new NcclStream(this, ncclRank, eventPool, s, NcclStream.Kind.OWN);
    this.direct = new NcclDirectCalls(ncclRank);
    family.join(state);
  }

  /** {@return the options (the timeout) this communicator was made with} */
  public CommOptions options() {
    return options;
  }

  /**
   * This rank's flight recorder: the last {@value FlightRecorder#DEFAULT_CAPACITY} steps and direct
   * collectives it enqueued, printed in timeout messages; for debugging. On this backend an entry stays
   * {@code ENQUEUED} until a {@code synchronize()} of the communicator's own stream has seen it finish
   * (or a timeout asked the step's CUDA event).
   *
   * @return the recorder, owned by this communicator
   */
  public FlightRecorder flightRecorder() {
    return ncclRank.events().recorder();
  }

  /** {@inheritDoc} Here: made with the communicator, in its family's record; its recorder over all its streams. */
  @Override
  protected FlightGroup flightGroup() {
    return flight;
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return size;
  }

  /** {@return the CUDA device this rank runs on} */
  public int device() {
    return device;
  }

  /** {@return the NCCL library's version} */
  public NcclVersion ncclVersion() {
    return ncclRank.version();
  }

  @Override
  public Stream stream() {
    if (state.isClosedByUser()) {
      throw closedStreamRefusal();
    }
    return stream;
  }

  @Override
  public String backendName() {
    return "nccl";
  }

  /** {@return the {@code ncclComm_t} and what the layers under this one ask of it} */
  NcclRank ncclRank() {
    return ncclRank;
  }

  /** {@return the rank of {@code comm} if it is an NCCL communicator, else null} */
  static NcclRank rankOf(Communicator comm) {
    return comm instanceof NcclCommunicator nc ? nc.ncclRank : null;
  }

  /** {@return the {@code ncclComm_t}} */
  long handle() {
    return ncclRank.comm();
  }

  /** {@return the rank's lifecycle and failure state} */
  NcclRankState state() {
    return ncclRank.state();
  }

  @Override
  public String groupLabel() {
    return ncclRank.label();
  }

  /**
   * {@inheritDoc} Here: {@code ncclCommSplit} ({@link NcclSplit}), blocking until every rank of this
   * communicator has called it, timed out after {@link CommOptions#timeout()}. The new communicator is
   * on the same device, with its own streams, in this one's family, and is closed with it at the latest.
   *
   * @throws BackendUnavailableException on an NCCL older than 2.18.1, which has no {@code ncclCommSplit}
   */
  @Override
  protected NcclCommunicator splitGroup(int color, int key, String label) {
    NcclCommunicator child = makeChild(color, key, label);
    child.parent = this;
    children.add(child);
    if (state.isClosedOrAborted()) { // closed or aborted by another thread meanwhile: the child goes too
      RuntimeException e = state.notUsable();
      child.close();
      throw e;
    }
    return child;
  }

  /**
   * This rank's communicator of its group ({@code color}, ranked by {@code key}): {@code ncclCommSplit} of this
   * one ({@link NcclSplit}), then the communicator on it, in this one's family; called holding the gate, after
   * {@code ensureUsable}.
   */
  private NcclCommunicator makeChild(int color, int key, String label) {
    RuntimeException unavailable = NcclSplit.unavailable(CheckedNccl.hasCommSplit(), ncclVersion());
    if (unavailable != null) {
      throw unavailable;
    }
    if (inGroup()) {
      throw new IllegalStateException(this + ": split(color " + color + ", key " + key + ") between groupStart()"
          + " and groupEnd(): the new communicator would only exist after groupEnd(); split outside the group");
    }
    NcclSplit.Child child = NcclSplit.split(ncclRank, color, key, label);
    NcclCommunicator made;
    try {
      made = new NcclCommunicator(child.comm(), ncclVersion(), options, label, ncclRank.family(), child.lineage());
    } catch (RuntimeException e) {
      CheckedNccl.ncclCommAbortQuietly(child.comm());
      throw e;
    }
    if (!made.state.isOpen()) { // the family failed while the child was being made: it was aborted on joining
      RuntimeException e = made.state.notUsable();
      made.close();
      throw e;
    }
    return made;
  }

  /**
   * {@inheritDoc} Here: memory of any communicator of this rank's family (the world's and its splits',
   * all on this device), so that a plan over a mesh's axes uses the world's memory on each axis.
   */
  @Override
  public boolean sharesMemoryWith(Communicator owner) {
    return owner == this || owner instanceof NcclCommunicator other && ncclRank.sharesMemoryWith(other.ncclRank);
  }

  // ---------------------------------------------------------------- memory, schedules

  @Override
  public DeviceMemory allocate(long bytes) {
    state.ensureUsable();
    return memory.allocate(bytes);
  }

  NcclMemory wrap(long address, long bytes) {
    state.ensureUsable();
    return memory.wrap(address, bytes);
  }

  /** How this rank's family shares its GPUs (NcclInterop's refusal of the legacy stream reads it). */
  GpuSharing sharing() {
    return ncclRank.family().sharing();
  }

  NcclStream wrapStream(long cudaStream) {
    state.ensureUsable();
    return new NcclStream(this, ncclRank, eventPool, cudaStream, NcclStream.Kind.WRAPPED);
  }

  /** {@inheritDoc} Here: a non-blocking CUDA stream on this rank's device, destroyed when it is closed. */
  @Override
  protected StreamBase openStream() {
    state.ensureUsable();
    useDevice();
    return new NcclStream(this, ncclRank, eventPool, CheckedCuda.cudaStreamCreateNonBlocking(), NcclStream.Kind.MADE);
  }

  /** Makes {@code waiter} wait on the device for the work so far on this rank's stream and those it made. */
  private void orderAfterRankWork(long waiter) {
    List<Long> streams = new ArrayList<>(List.of(stream.handle()));
    for (var made : madeStreams()) {
      if (!((NcclStream) made).isDestroyed()) { // one being closed by its user is still listed for a moment
        streams.add(((NcclStream) made).handle());
      }
    }
    eventPool.makeWait(waiter, streams);
  }

  @Override
  protected CompiledSchedule compileChecked(Schedule schedule) {
    return new NcclCompiledSchedule(ncclRank, direct, NcclScheduleCalls.of(this, schedule, NcclCommunicator::rankOf));
  }

  // ---------------------------------------------------------------- collectives

  /** {@inheritDoc} Here: through {@link NcclDirectCalls}, on the stream's {@code cudaStream_t}. */
  @Override
  protected void enqueueDirect(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op, int root,
      Stream stream) {
    direct.enqueue(collective, send, recv, count, op, root, streamHandle(stream), issuingAgreementCheck());
  }

  /** {@inheritDoc} Here: one {@code cudaStreamIsCapturing}, asked only when an agreement check is due. */
  @Override
  protected boolean isCapturing(Stream stream) {
    return ncclRank.graphs().isStreamCapturing(streamHandle(stream));
  }

  @Override
  protected void openGroup() {
    direct.openGroup();
  }

  @Override
  protected void closeGroup() {
    direct.closeGroup();
  }

  /** Whether a group opened by {@link #groupStart()} is open. */
  boolean inGroup() {
    return direct.inGroup();
  }

  // ---------------------------------------------------------------- failures

  /** The exception for NCCL's {@code function} returning {@code rc} (see {@link NcclRankState#failed}). */
  RuntimeException failed(String function, int rc) {
    return state.failed(function, rc);
  }

  /** For the cluster's watchdog: every communicator of this rank's family (see {@link NcclWatchdog#watch}). */
  void watch(long now, boolean pollAsync) {
    for (NcclFamily.Member m : ncclRank.family().members()) {
      ((NcclRankState) m).watchdog().watch(now, pollAsync);
    }
  }

  /** Asks every communicator of this rank's family to give up at its next call (another rank failed); any thread. */
  void requestAbort(String reason, Throwable cause) {
    for (NcclFamily.Member m : ncclRank.family().members()) {
      ((NcclRankState) m).requestAbort(reason, cause);
    }
  }

  /** {@code ncclCommAbort} only, from another thread, for a rank blocked inside NCCL or CUDA. */
  void abortFromOutside() {
    state.abortFromOutside();
  }

  // ---------------------------------------------------------------- helpers for this package

  /** The {@code cudaStream_t} of {@code stream}, which must be a stream of this communicator. */
  long streamHandle(Stream stream) {
    return NcclStream.handleOf(stream, ncclRank);
  }

  void useDevice() {
    CheckedCuda.cudaSetDevice(device);
  }

  /** Where ranks share this process's GPU, waits for the group's other ranks ({@link SharedContextFences}). */
  void meetGroup() {
    ncclRank.meetGroup();
  }

  /** Throws if this communicator was closed or aborted; gives up if the cluster asked it to. */
  @Override
  protected void ensureUsable() {
    state.ensureUsable();
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Aborts this rank: {@code ncclCommAbort} (which also stops its work running on the device), then frees
   * the memory allocated through it and destroys its streams. Its whole family fails with it: the
   * communicators split from it (and the one it was split from, and theirs) are aborted too, and say why
   * when used; those split from it are freed here as well. Idempotent; a no-op after {@link #close()}.
   * Call it from the rank's own thread, or when no other thread uses the communicator.
   */
  public void abort() {
    RuntimeException failure = null;
    try {
      state.abort();
    } catch (RuntimeException e) {
      failure = e;
    }
    for (NcclCommunicator child : children) { // aborted with the family just now: free what they hold
      try {
        child.abort();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** {@return whether {@link #abort()} (or the cluster) aborted this communicator} */
  public boolean isAborted() {
    return state.isAborted();
  }

  @Override
  public boolean isClosed() {
    return state.isClosedOrAborted();
  }

  /**
   * Closes the communicators split from this one (each its own first), then this one: its graphs, {@code
   * ncclCommDestroy}, its memory and streams. Idempotent.
   */
  @Override
  public void close() {
    RuntimeException failure = null;
    for (NcclCommunicator child : children) {
      try {
        child.close();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    boolean destroys = state.isOpen(); // not when closed already, nor aborted (its kernels were stopped)
    try {
      state.close();
    } catch (RuntimeException e) {
      failure = Failures.add(failure, e);
    }
    NcclCommunicator from = parent;
    if (destroys && from != null) {
      from.meetGroup(); // sharing a GPU: no rank goes on while NCCL may still free this split's memory
    }
    ncclRank.family().leave(state);
    flight.close();
    if (parent != null) {
      parent.children.remove(this);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Frees the memory allocated through this communicator and destroys its streams and events (once, by the state). */
  private RuntimeException release(RuntimeException failure) {
    ncclRank.leaveGroup();
    failure = memory.closeAll(failure);
    failure = closeMadeStreams(failure);
    try {
      stream.destroy();
    } catch (RuntimeException e) {
      failure = Failures.add(failure, e);
    }
    eventPool.destroyAll();
    try {
      CheckedCuda.cudaStreamDestroy(copyStream);
    } catch (RuntimeException e) {
      failure = Failures.add(failure, e);
    }
    ncclRank.events().destroy();
    return failure;
  }

  /** The live allocations, for tests. */
  List<NcclMemory> liveMemory() {
    return memory.live();
  }

  @Override
  public String toString() {
    return state != null ? state.describe() : "NcclCommunicator[rank " + rank + " of " + size + ", being made]";
  }
}
