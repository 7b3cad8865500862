package dev.commplan.runtime.spi;

import dev.commplan.runtime.DeviceMemory;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import java.util.Objects;

/**
 * The argument checks every backend makes before it enqueues a collective, shared so that the local and
 * NCCL backends reject the same calls with the same messages. Each method either returns normally or
 * throws; none has side effects.
 *
 * <ul>
 *   <li>{@link NullPointerException} for a null argument;
 *   <li>{@link IllegalStateException} for a closed communicator;
 *   <li>{@link BufferBindingException} for a buffer that is closed, of another communicator, of the
 *       other side's data type, of the wrong count, or overlapping the other side other than in NCCL's
 *       in-place arrangement;
 *   <li>{@link IllegalArgumentException} for a stream of another communicator or a root out of range.
 * </ul>
 */
public final class CollectiveChecks {
  private CollectiveChecks() {}

  /**
   * Checks an {@code ncclAllReduce}: equal counts and types; in place means the same region.
   *
   * @return NCCL's count (the element count)
   */
  public static long checkAllReduce(Communicator comm, Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    Objects.requireNonNull(op, "op");
    checkCommon(Collective.ALL_REDUCE, comm, send, recv, stream);
    if (send.length() != recv.length()) {
      throw new BufferBindingException(
          where(Collective.ALL_REDUCE, comm) + ": send has " + send.length() + " elements and recv has "
              + recv.length() + "; they must be equal");
    }
    checkOverlap(Collective.ALL_REDUCE, comm, send, recv);
    return send.length();
  }

  /**
   * Checks an {@code ncclBroadcast}: equal counts and types, {@code 0 <= root < comm.size()}.
   *
   * @return NCCL's count (the element count)
   */
  public static long checkBroadcast(Communicator comm, Buffer send, Buffer recv, int root, Stream stream) {
    checkCommon(Collective.BROADCAST, comm, send, recv, stream);
    checkRoot(comm, root);
    if (send.length() != recv.length()) {
      throw new BufferBindingException(
          where(Collective.BROADCAST, comm) + ": send has " + send.length() + " elements and recv has "
              + recv.length() + "; they must be equal");
    }
    checkOverlap(Collective.BROADCAST, comm, send, recv);
    return send.length();
  }

  /**
   * Checks an {@code ncclAllGather}: {@code recv.length() == comm.size() * send.length()}; in place
   * means {@code send} is the rank-th slice of {@code recv}.
   *
   * @return NCCL's count (the send count)
   */
  public static long checkAllGather(Communicator comm, Buffer send, Buffer recv, Stream stream) {
    checkCommon(Collective.ALL_GATHER, comm, send, recv, stream);
    long required = Math.multiplyExact((long) comm.size(), send.length());
    if (recv.length() != required) {
      throw new BufferBindingException(
          where(Collective.ALL_GATHER, comm) + ": recv has " + recv.length() + " elements but must have size × send = "
              + comm.size() + " × " + send.length() + " = " + required);
    }
    checkOverlap(Collective.ALL_GATHER, comm, send, recv);
    return send.length();
  }

  /**
   * Checks an {@code ncclReduceScatter}: {@code send.length() == comm.size() * recv.length()}; in place
   * means {@code recv} is the rank-th slice of {@code send}.
   *
   * @return NCCL's count (the receive count)
   */
  public static long checkReduceScatter(
      Communicator comm, Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    Objects.requireNonNull(op, "op");
    checkCommon(Collective.REDUCE_SCATTER, comm, send, recv, stream);
    long required = Math.multiplyExact((long) comm.size(), recv.length());
    if (send.length() != required) {
      throw new BufferBindingException(
          where(Collective.REDUCE_SCATTER, comm) + ": send has " + send.length()
              + " elements but must have size × recv = " + comm.size() + " × " + recv.length() + " = " + required);
    }
    checkOverlap(Collective.REDUCE_SCATTER, comm, send, recv);
    return recv.length();
  }

  /**
   * Whether {@code send} and {@code recv} are NCCL's in-place arrangement for {@code collective} on
   * {@code rank}: the same region (AllReduce, Broadcast), send the rank-th slice of recv (AllGather),
   * recv the rank-th slice of send (ReduceScatter).
   */
  public static boolean isInPlace(Collective collective, Buffer send, Buffer recv, int rank) {
    if (send.memory() != recv.memory()) {
      return false;
    }
    return switch (collective) {
      case ALL_REDUCE, BROADCAST -> send.byteOffset() == recv.byteOffset() && send.length() == recv.length();
      case ALL_GATHER -> send.byteOffset() == recv.byteOffset() + rank * send.byteSize();
      case REDUCE_SCATTER -> recv.byteOffset() == send.byteOffset() + rank * recv.byteSize();
    };
  }

  /**
   * Checks a schedule before a backend compiles it: built for {@code comm}'s size, every call's memory
   * open and owned by {@code comm}, every region inside its block, ops and roots present and in range.
   *
   * @throws IllegalArgumentException naming the step, the call's fields and what is wrong
   */
  public static void checkSchedule(Communicator comm, Schedule schedule) {
    Objects.requireNonNull(schedule, "schedule");
    checkOpen(comm);
    if (schedule.ranks() != comm.size()) {
      throw new IllegalArgumentException(
          "schedule of plan " + schedule.planName() + " was built for " + schedule.ranks()
              + " ranks, but this communicator has " + comm.size());
    }
    for (Step step : schedule.steps()) {
      for (CollectiveCall call : step.calls()) {
        String where = "plan " + schedule.planName() + ", step " + step.number() + ", " + call.collective().label()
            + " of " + call.fields();
        if (call.count() <= 0) {
          throw new IllegalArgumentException(where + ": count must be > 0, was " + call.count());
        }
        boolean reduces = call.collective() == Collective.ALL_REDUCE || call.collective() == Collective.REDUCE_SCATTER;
        if (reduces != (call.op() != null)) {
          throw new IllegalArgumentException(where + ": op must be " + (reduces ? "set" : "null") + ", was " + call.op());
        }
        if (call.collective() == Collective.BROADCAST) {
          checkRoot(comm, call.root());
        }
        checkRegion(where + ", send side", comm, call.sendMemory(), call.sendByteOffset(), call.sendBytes(comm.size()));
        checkRegion(where + ", receive side", comm, call.recvMemory(), call.recvByteOffset(), call.recvBytes(comm.size()));
      }
    }
  }

  private static void checkRegion(String where, Communicator comm, DeviceMemory memory, long offset, long bytes) {
    if (memory.owner() != comm) {
      throw new IllegalArgumentException(
          where + ": the memory belongs to " + memory.owner().backendName() + " rank " + memory.owner().rank()
              + ", not to this communicator (" + comm.backendName() + " rank " + comm.rank() + ")");
    }
    if (memory.isClosed()) {
      throw new IllegalArgumentException(where + ": the memory has been freed");
    }
    if (offset < 0 || offset > memory.byteSize() - bytes) {
      throw new IllegalArgumentException(
          where + ": bytes [" + offset + ", " + (offset + bytes) + ") do not fit in a block of " + memory.byteSize());
    }
  }

  private static void checkCommon(Collective collective, Communicator comm, Buffer send, Buffer recv, Stream stream) {
    Objects.requireNonNull(comm, "comm");
    Objects.requireNonNull(send, "send");
    Objects.requireNonNull(recv, "recv");
    Objects.requireNonNull(stream, "stream");
    checkOpen(comm);
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException(
          where(collective, comm) + ": the stream belongs to rank " + stream.communicator().rank()
              + "'s communicator; use this communicator's stream()");
    }
    checkBuffer(collective, comm, "send", send);
    checkBuffer(collective, comm, "recv", recv);
    if (send.dataType() != recv.dataType()) {
      throw new BufferBindingException(
          where(collective, comm) + ": send is " + send.dataType() + " (" + send.length() + " elements) but recv is "
              + recv.dataType() + " (" + recv.length() + " elements); both must have the same data type");
    }
  }

  private static void checkBuffer(Collective collective, Communicator comm, String side, Buffer buffer) {
    if (buffer.isClosed()) {
      throw new BufferBindingException(where(collective, comm) + ": " + side + " (" + buffer + ") is closed");
    }
    if (buffer.communicator() != comm) {
      throw new BufferBindingException(
          where(collective, comm) + ": " + side + " (" + buffer.length() + " elements) belongs to "
              + buffer.communicator().backendName() + " rank " + buffer.communicator().rank()
              + "'s communicator, not this one");
    }
  }

  private static void checkOverlap(Collective collective, Communicator comm, Buffer send, Buffer recv) {
    boolean overlap = send.memory() == recv.memory()
        && send.byteOffset() < recv.byteOffset() + recv.byteSize()
        && recv.byteOffset() < send.byteOffset() + send.byteSize();
    if (overlap && !isInPlace(collective, send, recv, comm.rank())) {
      String inPlace = switch (collective) {
        case ALL_REDUCE, BROADCAST -> "send and recv the same buffer";
        case ALL_GATHER -> "send the rank-th slice of recv (byte " + (recv.byteOffset() + comm.rank() * send.byteSize())
            + " of the block on rank " + comm.rank() + ")";
        case REDUCE_SCATTER -> "recv the rank-th slice of send (byte "
            + (send.byteOffset() + comm.rank() * recv.byteSize()) + " of the block on rank " + comm.rank() + ")";
      };
      throw new BufferBindingException(
          where(collective, comm) + ": send (bytes " + send.byteOffset() + ".." + (send.byteOffset() + send.byteSize())
              + ") and recv (bytes " + recv.byteOffset() + ".." + (recv.byteOffset() + recv.byteSize())
              + ") overlap but are not NCCL's in-place arrangement: " + inPlace);
    }
  }

  private static void checkRoot(Communicator comm, int root) {
    if (root < 0 || root >= comm.size()) {
      throw new IllegalArgumentException(
          "broadcast on rank " + comm.rank() + ": root " + root + " is not a rank of this " + comm.size()
              + "-rank communicator; it must be in [0, " + comm.size() + ")");
    }
  }

  private static void checkOpen(Communicator comm) {
    if (comm.isClosed()) {
      throw new IllegalStateException(comm.backendName() + " communicator of rank " + comm.rank() + " is closed");
    }
  }

  private static String where(Collective collective, Communicator comm) {
    return collective.label() + " on rank " + comm.rank();
  }
}
