package dev.commplan.spicheck;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.spi.AbstractCommunicator;
import dev.commplan.runtime.spi.BackendCommunicator;
import dev.commplan.runtime.spi.StreamBase;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * One rank of a {@code spi-check} group: the world's, or a split's. What every backend owes its users (one
 * thread at a time, the rules with their ids, the agreement check, a schedule checked before it is compiled)
 * is {@link AbstractCommunicator}'s; this class says what a checked call means here: a collective runs at
 * once, on the calling thread, meeting the other ranks of its group ({@link Meeting}); a send leaves a copy
 * for its peer at once, and a receive waits for it, except in a group, where the receives wait at {@code
 * groupEnd()}, after every send of the group was made (a group's calls must not wait for each other).
 *
 * <p>A split ({@link #splitGroup}) is a new group of its own meeting, in the world's {@link Family}: closed
 * with its parent at the latest, and failed with every other group of the cluster.
 */
public final class SpiCheckCommunicator extends AbstractCommunicator {
  private final Meeting meeting;
  private final int rank;
  private final SpiCheckStream stream;
  private final Set<SpiCheckMemory> live = ConcurrentHashMap.newKeySet();
  /** Splits made from this communicator, closed with it at the latest. */
  private final List<SpiCheckCommunicator> children = new CopyOnWriteArrayList<>();
  private final CommOptions options;
  private volatile boolean closed;
  /** How deep the groups are nested; the collectives of a group run as they are called (all ranks call them in one order). */
  private int groupDepth;
  /** The receives of the open group, run when the outermost group closes. */
  private final List<Runnable> receivesOfTheGroup = new ArrayList<>();

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

  /** {@inheritDoc} Here: {@code closedStreamRefusal()} once the communicator is closed. */
  @Override
  public Stream stream() {
    if (closed) {
      throw closedStreamRefusal();
    }
    return stream;
  }

  @Override
  public String backendName() {
    return SpiCheckBackend.NAME;
  }

  /** {@inheritDoc} Here: {@code world}, or the label of the split that made this group. */
  @Override
  public String groupLabel() {
    return meeting.label();
  }

  /** {@inheritDoc} Here also once the cluster was aborted: it cannot run anything any more. */
  @Override
  public boolean isClosed() {
    return closed || meeting.family().isBroken();
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

  /**
   * {@inheritDoc} Here: memory of any communicator of this rank's thread in this cluster (the world's, a
   * split's), since every rank's memory is this host's.
   */
  @Override
  public boolean sharesMemoryWith(Communicator owner) {
    return owner instanceof SpiCheckCommunicator other && other.meeting.family() == meeting.family()
        && other.worldRank() == worldRank();
  }

  int worldRank() {
    return meeting.worldRank(rank);
  }

  /** {@inheritDoc} Here: another stream of this rank; work on it runs at once too, so nothing is ever in flight. */
  @Override
  protected StreamBase openStream() {
    return new SpiCheckStream(this, options.timeout());
  }

  /** Closes the splits made from it, then frees the memory allocated through it; idempotent. */
  @Override
  public void close() {
    for (SpiCheckCommunicator child : children) {
      child.close();
    }
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

  /**
   * Runs one checked call with the other ranks of this group: a collective at once; a send at once (it never
   * waits); a receive at once, or, inside a group, when the outermost group closes.
   */
  void run(Call call, MemorySegment send, MemorySegment recv) {
    switch (call.collective()) {
      case SEND -> meeting.send(rank, call.root(), send);
      case RECV -> {
        if (groupDepth > 0) {
          receivesOfTheGroup.add(() -> meeting.receive(rank, call.root(), recv, call));
        } else {
          meeting.receive(rank, call.root(), recv, call);
        }
      }
      default -> meeting.run(rank, call, send, recv);
    }
  }

  /** The bytes of {@code memory}, this rank's (the runtime checked that it is), at {@code offset}. */
  static MemorySegment region(DeviceMemory memory, long offset, long bytes) {
    return ((SpiCheckMemory) memory).region(offset, bytes);
  }

  @Override
  protected CompiledSchedule compileChecked(Schedule schedule) {
    return new SpiCheckSchedule(this, schedule);
  }

  /** {@inheritDoc} Here: every rank of this group meets in {@link Meeting#split}, which makes the new groups. */
  @Override
  protected BackendCommunicator splitGroup(int color, int key, String label) {
    Meeting.Place place = meeting.split(rank, color, key, label);
    SpiCheckCommunicator child = new SpiCheckCommunicator(place.meeting(), place.rank(), options);
    children.add(child);
    return child;
  }

  @Override
  protected void openGroup() {
    groupDepth++;
  }

  /** {@inheritDoc} Here, for the outermost group: its receives, in the order they were called. */
  @Override
  protected void closeGroup() {
    if (groupDepth == 0) {
      throw new IllegalStateException(this + ": groupEnd() without groupStart()");
    }
    if (--groupDepth == 0 && !receivesOfTheGroup.isEmpty()) {
      List<Runnable> receives = List.copyOf(receivesOfTheGroup);
      receivesOfTheGroup.clear();
      receives.forEach(Runnable::run);
    }
  }

  @Override
  public String toString() {
    return "SpiCheckCommunicator[rank " + rank + " of " + groupLabel() + " (" + size() + " ranks)"
        + (closed ? ", closed" : "") + "]";
  }
}
