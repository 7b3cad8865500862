package dev.commplan.spicheck;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.spi.BackendCommunicator;
import dev.commplan.runtime.spi.StreamBase;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * One rank of a {@code spi-check} cluster. What every backend owes its users (one thread at a time, the
 * rules with their ids, the agreement check, a schedule checked before it is compiled) is {@link
 * AbstractCommunicator}'s; this class says what a checked call means here: the collective runs at once,
 * on the calling thread, meeting the other ranks ({@link Meeting}). No splits, no point-to-point.
 */
public final class SpiCheckCommunicator extends AbstractCommunicator {
  private final Meeting meeting;
  private final int rank;
  private final SpiCheckStream stream;
  private final Set<SpiCheckMemory> live = ConcurrentHashMap.newKeySet();
  private final CommOptions options;
  private volatile boolean closed;
  /** How deep the groups are nested; the collectives of a group run as they are called (all ranks call them in one order). */
  private int groupDepth;

  SpiCheckCommunicator(Meeting meeting, int rank, CommOptions options) {
    super(options.agreementCheck());
    this.meeting = meeting;
    this.rank = rank;
    this.options = options;
    this.stream = new SpiCheckStream(this, options.timeout());
  }

  @Override
  public int rank() {
    return rank;
  }

  @Override
  public int size() {
    return meeting.ranks();
  }

  @Override
  public Stream stream() {
    return stream;
  }

  @Override
  public String backendName() {
    return SpiCheckBackend.NAME;
  }

  /** {@inheritDoc} Here also once the cluster was aborted: it cannot run anything any more. */
  @Override
  public boolean isClosed() {
    return closed || meeting.isBroken();
  }

  @Override
  public DeviceMemory allocate(long bytes) {
    ensureUsable();
    if (bytes < 0) {
      throw new IllegalArgumentException("cannot allocate " + bytes + " bytes");
    }
    SpiCheckMemory block = new SpiCheckMemory(this, bytes);
    live.add(block);
    return block;
  }

  void forget(SpiCheckMemory block) {
    live.remove(block);
  }

  /** {@inheritDoc} Here: another stream of this rank; work on it runs at once too, so nothing is ever in flight. */
  @Override
  protected StreamBase openStream() {
    return new SpiCheckStream(this, options.timeout());
  }

  /** Frees the memory allocated through it; idempotent. */
  @Override
  public void close() {
    closed = true;
    closeMadeStreams(null); // nothing to release: they only say the communicator is closed
    for (SpiCheckMemory block : List.copyOf(live)) {
      block.closeForOwner();
    }
    live.clear();
  }

  @Override
  protected void ensureUsable() {
    if (closed) {
      throw new IllegalStateException(this + " is closed");
    }
    meeting.ensureNotBroken(rank);
  }

  @Override
  protected void enqueueDirect(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op, int root,
      Stream stream) {
    Call call = new Call(collective, send.dataType(), op, root, count, null, -1, List.of());
    run(call, region(send.memory(), send.byteOffset(), send.byteSize()),
        region(recv.memory(), recv.byteOffset(), recv.byteSize()));
  }

  /** Runs one checked call with the other ranks. */
  void run(Call call, MemorySegment send, MemorySegment recv) {
    meeting.run(rank, call, send, recv);
  }

  /** The bytes of {@code memory}, this rank's (the runtime checked that it is), at {@code offset}. */
  static MemorySegment region(DeviceMemory memory, long offset, long bytes) {
    return ((SpiCheckMemory) memory).region(offset, bytes);
  }

  @Override
  protected CompiledSchedule compileChecked(Schedule schedule) {
    return new SpiCheckSchedule(this, schedule);
  }

  @Override
  protected BackendCommunicator splitGroup(int color, int key, String label) {
    throw new UnsupportedOperationException("the spi-check backend has no splits (" + label + ")");
  }

  @Override
  protected void openGroup() {
    groupDepth++;
  }

  @Override
  protected void closeGroup() {
    if (groupDepth == 0) {
      throw new IllegalStateException(this + ": groupEnd() without groupStart()");
    }
    groupDepth--;
  }

  @Override
  public String toString() {
    return "SpiCheckCommunicator[rank " + rank + " of " + size() + (closed ? ", closed" : "") + "]";
  }
}
