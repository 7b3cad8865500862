package dev.commplan.runtime.local;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.NonFiniteScan;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.spi.FlightGroup;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import dev.commplan.runtime.spi.StreamBase;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One rank of a {@link LocalCluster}. Collectives are checked ({@code rules.CallRules}) and enqueued on
 * the rank's {@link LocalStream}; the stream's worker runs them, meeting the other ranks' workers.
 *
 * <p>Groups: {@link #groupStart()} and {@link #groupEnd()} may nest, as in NCCL; the collectives inside a
 * group are simply enqueued and run one after the other, in order. That gives the results of a valid NCCL
 * group, whose calls must not depend on one another (the plan processor and {@code PlanBuilder} check
 * that they do not race). The group's sends and receives are enqueued together when it closes, as one
 * {@link LocalTransfers} (so that a ring exchange in one group does not deadlock, as on NCCL).
 */
public final class LocalCommunicator extends AbstractCommunicator {
  private final LocalCluster cluster;
  /** The group this communicator is a rank of: the world, or a split of it. */
  private final LocalGroup group;
  private final int rank;
  /** This rank's rank in the world (the cluster's thread it belongs to). */
  private final int worldRank;
  private final LocalStream stream;
  /** The communicator this one was split from; null for the world's. */
  private final LocalCommunicator parent;
  /** The communicators split from this one and still open; closed with it at the latest. */
  private final List<LocalCommunicator> children = new CopyOnWriteArrayList<>();
  /** The number of this rank's next split of its group; only its user thread splits. */
  private long nextSplit;
  private final Set<LocalMemory> openBlocks = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  private int groupDepth;
  /** The sends and receives of the open group, issued together when it closes. */
  private final List<LocalMailboxes.Transfer> groupSends = new ArrayList<>();
  private final List<LocalMailboxes.Transfer> groupRecvs = new ArrayList<>();
  /** The stream of the open group's first send or receive: the group's transfers are enqueued there. */
  private LocalStream groupStream;
  /** Streams closed by their user whose worker still runs what they had. */
  private final List<LocalStream> draining = new CopyOnWriteArrayList<>();
  /** How many streams {@code newStream()} has made (their numbers, for names). */
  private int madeCount;
  /**
   * The number the next collective gets, taken when it is enqueued (on any stream of this communicator, or
   * of the world for a plan's calls over this group), so that ranks meet in the order their hosts enqueued.
   */
  private final AtomicLong nextSequenceNumber = new AtomicLong();
  /**
   * This communicator's part of its rank's flight record: its streams' recorders, and the group's sequence of
   * collectives and checks, which equals {@link #takeSequenceNumber}'s unless a plan of this communicator ran
   * calls over another group (they meet there, with that group's number, and are recorded here).
   */
  private final FlightGroup flight;

  LocalCommunicator(LocalCluster cluster, LocalGroup group, int rank, int worldRank, LocalCommunicator parent) {
    super(cluster.options().agreementCheck());
    this.cluster = cluster;
    this.group = group;
    this.parent = parent;
    this.rank = rank;
    this.worldRank = worldRank;
    this.flight = cluster.flightJob().log(worldRank).group(group.label, rank, group.size, group.worldRanks(), null);
    this.stream = new LocalStream(this, cluster.timeout(), 0);
  }

  /** This rank's communicator of {@code child}, a group just split from this one's, with rank {@code rank} there. */
  LocalCommunicator child(LocalGroup child, int rank) {
    LocalCommunicator comm = new LocalCommunicator(cluster, child, rank, worldRank, this);
    children.add(comm);
    cluster.joined(comm);
    return comm;
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return group.size;
  }

  @Override
  public String groupLabel() {
    return group.label;
  }

  /**
   * {@inheritDoc} Here: ranks meet at the group's own rendezvous, through this rank's thread; the new
   * communicator has its own stream (a worker thread) and belongs to the cluster, whose abort ends it too.
   */
  @Override
  protected LocalCommunicator splitGroup(int color, int key, String label) {
    checkOpen();
    return group.splits.split(this, nextSplit++, color, key, label);
  }

  /** {@inheritDoc} Here: memory of any communicator of this rank's thread in this cluster (the world's, a split's). */
  @Override
  public boolean sharesMemoryWith(Communicator owner) {
    return owner instanceof LocalCommunicator other && other.cluster == cluster && other.worldRank == worldRank;
  }

  /** {@inheritDoc} Here: the rank's first worker; {@link IllegalStateException} once this communicator is closed. */
  @Override
  public LocalStream stream() {
    if (closed) {
      throw closedStreamRefusal();
    }
    return stream;
  }

  /** {@inheritDoc} Here: another worker of this rank, with its own flight record. */
  @Override
  protected StreamBase openStream() {
    checkOpen();
    return new LocalStream(this, cluster.timeout(), ++madeCount);
  }

  /**
   * This communicator's own stream, those {@code newStream()} made that are open, and those closed by their
   * user whose worker still runs what they had: an abort fails them all, a close stops them all.
   */
  List<LocalStream> streams() {
    List<LocalStream> all = new ArrayList<>();
    all.add(stream);
    madeStreams().forEach(s -> all.add((LocalStream) s));
    all.removeAll(draining); // one closing is in both for a moment (it drains before its user's close ends)
    all.addAll(draining);
    return all;
  }

  /** {@code s} was closed by its user: its worker runs what it has, then ends ({@link #drained}). */
  void draining(LocalStream s) {
    draining.add(s);
  }

  /** The worker of {@code s}, closed by its user, ran everything and ended. */
  void drained(LocalStream s) {
    draining.remove(s);
  }

  @Override
  public String backendName() {
    return "local";
  }

  /** {@inheritDoc} Off-heap, zeroed, 256-byte aligned; freed on close or when this communicator closes. */
  @Override
  public DeviceMemory allocate(long bytes) {
    checkOpen();
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot allocate " + bytes + " bytes");
    }
    LocalMemory block = new LocalMemory(this, bytes);
    openBlocks.add(block);
    return block;
  }

  /**
   * Resolves every call of the checked {@code schedule} to its work item once; {@link
   * CompiledSchedule#enqueue} then only puts those same items on the stream.
   */
  @Override
  protected CompiledSchedule compileChecked(Schedule schedule) {
    List<LocalStream.Work> work = new ArrayList<>();
    int[] stepStart = new int[schedule.steps().size() + 1]; // step i's calls are [stepStart[i], stepStart[i + 1])
    int index = 0;
    for (Step step : schedule.steps()) {
      stepStart[index++] = work.size();
      List<LocalMailboxes.Transfer> sends = new ArrayList<>();
      List<LocalMailboxes.Transfer> recvs = new ArrayList<>();
      List<OperationLabel.Call> transferCalls = new ArrayList<>();
      for (CollectiveCall call : step.calls()) {
        LocalCommunicator over = (LocalCommunicator) schedule.communicatorOf(call, this); // checked above
        // The label is made here, once: timeouts and the flight record name the call without building text.
        OperationLabel.Call described = OperationLabel.Call.of(call.collective(), call.dataType(), call.op(),
            call.count(), call.collective().pointToPoint() ? call.peer() : call.root(), schedule.axisOf(call),
            call.fields());
        if (call.collective().pointToPoint()) {
          if (call.peer() >= 0) { // a peer outside the ranks: nothing to do on this rank
            LocalCollective labelled = over.transfer(call.collective(), call.dataType(), call.peer(), call.count(),
                call.sendMemory(), call.sendByteOffset(),
                OperationLabel.ofCalls(schedule.planName(), step.number(), step.bucket(), List.of(described)));
            (call.collective() == Collective.SEND ? sends : recvs)
                .add(new LocalMailboxes.Transfer(labelled, call.peer()));
            transferCalls.add(described);
          }
          continue;
        }
        OperationLabel label = OperationLabel.ofCalls(schedule.planName(), step.number(), step.bucket(),
            List.of(described));
        work.add(new LocalCollective(over, call.collective(), call.dataType(), call.op(), call.root(), call.count(),
            local(call.sendMemory()), call.sendByteOffset(), local(call.recvMemory()), call.recvByteOffset(), label));
      }
      if (!sends.isEmpty() || !recvs.isEmpty()) { // the step's transfers, one group, after its collectives
        work.add(new LocalTransfers(sends, recvs,
            OperationLabel.ofCalls(schedule.planName(), step.number(), step.bucket(), transferCalls)));
      }
    }
    stepStart[index] = work.size();
    return new Compiled(schedule.planName(), work.toArray(LocalStream.Work[]::new), stepStart);
  }

  /**
   * A schedule resolved to its work items ({@link #compileChecked}); the finite check's search reads the memory in
   * place, once the stream is done with the work before it ({@link NonFiniteScan#onHost}).
   */
  private final class Compiled implements CompiledSchedule {
    private final String planName;
    private final LocalStream.Work[] items;
    /** Step i's items are [stepStart[i], stepStart[i + 1]). */
    private final int[] stepStart;

    Compiled(String planName, LocalStream.Work[] items, int[] stepStart) {
      this.planName = planName;
      this.items = items;
      this.stepStart = stepStart;
    }

    @Override
    public void enqueueSteps(Stream target, int fromIndex, int toIndex) {
      LocalStream on = streamOf(target);
      if (fromIndex < 0) {
        throw new IndexOutOfBoundsException(planName + ": step index " + fromIndex + " is negative");
      }
      int from = Math.min(fromIndex, stepStart.length - 1);
      int to = Math.min(Math.max(toIndex, from), stepStart.length - 1);
      for (int i = stepStart[from]; i < stepStart[to]; i++) {
        on.enqueue(items[i]);
      }
    }

    @Override
    public NonFiniteScan nonFiniteScan(List<NonFiniteScan.Region> regions, U64Buffer findings) {
      return NonFiniteScan.onHost(regions, findings, memory -> memory instanceof LocalMemory m ? m.segment() : null);
    }
  }

  @Override
  protected void enqueueDirect(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op, int root,
      Stream target) {
    LocalStream on = streamOf(target);
    if (collective.pointToPoint()) {
      LocalMailboxes.Transfer t = new LocalMailboxes.Transfer(transfer(collective, send.dataType(), root, count,
          send.memory(), send.byteOffset(), checkLabel(collective, send.dataType(), null, root, count)), root);
      if (groupDepth > 0) { // issued together at the end of the group, as NCCL does
        (collective == Collective.SEND ? groupSends : groupRecvs).add(t);
        if (groupStream == null) {
          groupStream = on;
        }
      } else {
        List<LocalMailboxes.Transfer> one = List.of(t);
        List<LocalMailboxes.Transfer> none = List.of();
        on.enqueue(new LocalTransfers(collective == Collective.SEND ? one : none,
            collective == Collective.SEND ? none : one, t.call.label));
      }
      return;
    }
    on.enqueue(new LocalCollective(this, collective, send.dataType(), op, root, count, local(send.memory()),
        send.byteOffset(), local(recv.memory()), recv.byteOffset(), checkLabel(collective, send.dataType(), op, root,
        count)));
  }

  /**
   * A send or receive of {@code count} elements at {@code offset} of {@code memory}; {@code peer} is kept as its
   * root.
   */
  private LocalCollective transfer(Collective collective, DataType type, int peer, long count,
      DeviceMemory memory, long offset, OperationLabel label) {
    LocalMemory block = local(memory);
    return new LocalCollective(this, collective, type, null, peer, count, block, offset, block, offset, label);
  }

  @Override
  protected void ensureUsable() {
    checkOpen();
  }

  /** The agreement check's label for its own calls; null (the direct call's label) for the user's. */
  private OperationLabel checkLabel(Collective collective, DataType type, ReduceOp op, int root,
      long count) {
    return issuingAgreementCheck()
        ? OperationLabel.agreementCheck(OperationLabel.Call.of(collective, type, op, count, root, null, List.of()))
        : null;
  }

  /** Opens a group; groups nest. On this backend the group's calls run in order (see the class comment). */
  @Override
  protected void openGroup() {
    groupDepth++;
  }

  /** Closes the innermost group; the outermost enqueues the group's sends and receives, together. */
  @Override
  protected void closeGroup() {
    if (groupDepth == 0) {
      throw new IllegalStateException("rank " + rank + ": groupEnd() without a matching groupStart()");
    }
    groupDepth--;
    if (groupDepth == 0 && (!groupSends.isEmpty() || !groupRecvs.isEmpty())) {
      List<LocalMailboxes.Transfer> sends = List.copyOf(groupSends);
      List<LocalMailboxes.Transfer> recvs = List.copyOf(groupRecvs);
      groupSends.clear();
      groupRecvs.clear();
      LocalStream on = groupStream;
      groupStream = null;
      on.enqueue(new LocalTransfers(sends, recvs, LocalTransfers.groupLabel(sends, recvs)));
    }
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  /**
   * Closes this rank: its stream's worker stops (pending work is dropped) and every block it allocated
   * is freed. Idempotent. The cluster closes every rank; closing one rank alone leaves the others
   * waiting at their next collective until the rendezvous timeout. A split communicator is then forgotten by
   * its parent and the cluster (and its group, once every member closed), so that a long-lived cluster holds
   * only what is open.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    for (LocalCommunicator child : children) { // closed with their parent at the latest
      child.close();
    }
    RuntimeException failure = closeMadeStreams(null); // they see this communicator closed: stopped at once
    for (LocalStream s : draining) { // closed by their user, still running what they had: stopped too
      s.shutDown(cluster.timeout().toMillis());
    }
    draining.clear();
    stream.shutDown(cluster.timeout().toMillis());
    for (LocalMemory block : openBlocks) {
      block.closeForOwner();
    }
    openBlocks.clear();
    flight.close();
    if (parent != null) {
      parent.children.remove(this);
      cluster.left(this);
    }
    if (failure != null) {
      throw failure;
    }
  }

  /**
   * This rank's flight recorder: its last {@value FlightRecorder#DEFAULT_CAPACITY} operations (collectives
   * and host tasks), printed in timeout and abort messages; for debugging.
   *
   * @return the recorder, owned by this communicator
   */
  public FlightRecorder flightRecorder() {
    return stream.recorder;
  }

  /** {@inheritDoc} Here: made with the communicator, its streams' recorders in it; closed with it. */
  @Override
  protected FlightGroup flightGroup() {
    return flight;
  }

  LocalCluster cluster() {
    return cluster;
  }

  LocalGroup group() {
    return group;
  }

  /** This rank's rank in the world: the cluster's rank thread this communicator belongs to. */
  int worldRank() {
    return worldRank;
  }

  long takeSequenceNumber() {
    return nextSequenceNumber.getAndIncrement();
  }

  void forget(LocalMemory block) {
    openBlocks.remove(block);
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("local communicator of " + group.rankText(rank) + " is closed");
    }
  }

  /** {@code target}, a stream of this communicator (its own or one {@code newStream()} made). */
  private LocalStream streamOf(Stream target) {
    Objects.requireNonNull(target, "stream");
    checkOpen();
    if (target instanceof LocalStream s && s.communicator() == this) {
      return s;
    }
    throw new IllegalArgumentException("rank " + rank + ": a schedule compiled for this communicator runs on a stream"
        + " of it (stream() or one newStream() made), not on " + target);
  }

  private LocalMemory local(DeviceMemory memory) {
    if (!(memory instanceof LocalMemory block) || !sharesMemoryWith(block.owner())) {
      throw new IllegalArgumentException(
          "rank " + rank + ": " + memory + " is not memory of this local communicator");
    }
    return block;
  }

  @Override
  public String toString() {
    return "LocalCommunicator[" + (group.isWorld() ? "" : group.label + ", ") + "rank " + rank + " of " + size()
        + (closed ? ", closed" : "") + "]";
  }
}
