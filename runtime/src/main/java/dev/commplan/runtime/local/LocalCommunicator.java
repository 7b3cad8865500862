package dev.commplan.runtime.local;

import dev.commplan.runtime.guard.CallGate;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.PlanRules;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One rank of a {@link LocalCluster}. Collectives are checked ({@link PlanRules}) and enqueued on
 * the rank's {@link LocalStream}; the stream's worker runs them, meeting the other ranks' workers.
 *
 * <p>Groups: {@link #groupStart()} and {@link #groupEnd()} may nest, as in NCCL; the calls inside a group
 * are simply enqueued and run one after the other, in order. That gives the results of a valid NCCL
 * group, whose calls must not depend on one another (the plan processor and {@code PlanBuilder} check
 * that they do not race).
 */
public final class LocalCommunicator extends AbstractCommunicator {
  private final LocalCluster cluster;
  private final int rank;
  private final LocalStream stream;
  private final Set<LocalMemory> openBlocks = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  private int groupDepth;
  /** The number the next collective gets; touched only by the stream's worker, in stream order. */
  private long nextSequenceNumber;

  LocalCommunicator(LocalCluster cluster, int rank) {
    this.cluster = cluster;
    this.rank = rank;
    this.stream = new LocalStream(this, cluster.timeout());
  }

  /** The gate its streams carry ({@link AbstractCommunicator#gate()}). */
  CallGate streamGate() {
    return gate();
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return cluster.size();
  }

  @Override
  public LocalStream stream() {
    return stream;
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
   * Checks {@code schedule} ({@link PlanRules#checkSchedule}) and resolves every call to its
   * work item once; {@link CompiledSchedule#enqueue} then only puts those same items on the stream.
   */
  @Override
  public CompiledSchedule compile(Schedule schedule) {
    PlanRules.checkSchedule(this, schedule);
    List<LocalCollective> work = new ArrayList<>();
    int[] stepStart = new int[schedule.steps().size() + 1]; // step i's calls are [stepStart[i], stepStart[i + 1])
    int index = 0;
    for (Step step : schedule.steps()) {
      stepStart[index++] = work.size();
      for (CollectiveCall call : step.calls()) {
        LocalCollective unlabelled = new LocalCollective(this, call.collective(), call.dataType(), call.op(),
            call.root(), call.count(), local(call.sendMemory()), call.sendByteOffset(), local(call.recvMemory()),
            call.recvByteOffset());
        // The label is made here, once: timeouts and the flight record name the call without building text.
        OperationLabel label =
            new OperationLabel(schedule.planName(), step.number(), unlabelled.describe(), call.fields());
        work.add(new LocalCollective(this, call.collective(), call.dataType(), call.op(), call.root(), call.count(),
            unlabelled.send, unlabelled.sendOffset, unlabelled.recv, unlabelled.recvOffset, label));
      }
    }
    stepStart[index] = work.size();
    LocalCollective[] items = work.toArray(LocalCollective[]::new);
    return (target, fromIndex, toIndex) -> {
      checkOwnStream(target);
      if (fromIndex < 0) {
        throw new IndexOutOfBoundsException(schedule.planName() + ": step index " + fromIndex + " is negative");
      }
      int from = Math.min(fromIndex, stepStart.length - 1);
      int to = Math.min(Math.max(toIndex, from), stepStart.length - 1);
      for (int i = stepStart[from]; i < stepStart[to]; i++) {
        stream.enqueue(items[i]);
      }
    };
  }

  @Override
  protected void enqueueDirect(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op, int root,
      Stream stream) {
    enqueue(collective, op, root, count, send, recv);
  }

  @Override
  protected void ensureUsable() {
    checkOpen();
  }

  private void enqueue(Collective collective, ReduceOp op, int root, long count, Buffer send, Buffer recv) {
    stream.enqueue(new LocalCollective(this, collective, send.dataType(), op, root, count,
        local(send.memory()), send.byteOffset(), local(recv.memory()), recv.byteOffset()));
  }

  /** Opens a group; groups nest. On this backend the group's calls run in order (see the class comment). */
  @Override
  protected void openGroup() {
    groupDepth++;
  }

  /** Closes the innermost group. */
  @Override
  protected void closeGroup() {
    if (groupDepth == 0) {
      throw new IllegalStateException("rank " + rank + ": groupEnd() without a matching groupStart()");
    }
    groupDepth--;
  }

  @Override
  public boolean isClosed() {
    return closed;
  }

  /**
   * Closes this rank: its stream's worker stops (pending work is dropped) and every block it allocated
   * is freed. Idempotent. The cluster closes every rank; closing one rank alone leaves the others
   * waiting at their next collective until the rendezvous timeout.
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    stream.shutDown(cluster.timeout().toMillis());
    for (LocalMemory block : openBlocks) {
      block.closeForOwner();
    }
    openBlocks.clear();
  }

  /**
   * This rank's flight recorder: its last {@value FlightRecorder#DEFAULT_CAPACITY} operations (collectives
   * and host tasks), printed in timeout and abort messages; for debugging.
   */
  public FlightRecorder flightRecorder() {
    return stream.recorder;
  }

  LocalCluster cluster() {
    return cluster;
  }

  long takeSequenceNumber() {
    return nextSequenceNumber++;
  }

  void forget(LocalMemory block) {
    openBlocks.remove(block);
  }

  private void checkOpen() {
    if (closed) {
      throw new IllegalStateException("local communicator of rank " + rank + " is closed");
    }
  }

  private void checkOwnStream(Stream target) {
    Objects.requireNonNull(target, "stream");
    checkOpen();
    if (target != stream) {
      throw new IllegalArgumentException(
          "rank " + rank + ": a schedule compiled for this communicator runs on its own stream, not on "
              + target);
    }
  }

  private LocalMemory local(DeviceMemory memory) {
    if (!(memory instanceof LocalMemory block) || block.owner() != this) {
      throw new IllegalArgumentException(
          "rank " + rank + ": " + memory + " is not memory of this local communicator");
    }
    return block;
  }

  @Override
  public String toString() {
    return "LocalCommunicator[rank " + rank + " of " + size() + (closed ? ", closed" : "") + "]";
  }
}
