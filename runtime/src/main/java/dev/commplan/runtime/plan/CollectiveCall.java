package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import java.util.List;
import java.util.Objects;

/**
 * One NCCL call of a schedule, with NCCL's arguments: {@code count} is NCCL's count (the send count for
 * AllGather, the receive count for ReduceScatter, the element count otherwise). In place means the same
 * memory with NCCL's offsets (AllGather: send = recv + rank·count; ReduceScatter: recv = send +
 * rank·count), already applied to the byte offsets here.
 *
 * <p>Why {@code inPlace} is a component: two different regions of one memory block (user-bound buffers
 * that are views of one allocation) are not in place, and from the offsets alone AllGather's and
 * ReduceScatter's in-place arrangement cannot be told apart from two separate regions without knowing the
 * rank, so the plan, which knows, records it. The older ten-argument constructor is kept and derives it
 * as before.
 *
 * @param op the reduction for ALL_REDUCE and REDUCE_SCATTER; null otherwise
 * @param root the root for BROADCAST; -1 otherwise
 * @param fields the plan fields this call covers (their send side), in memory order
 * @param inPlace whether send and receive are one buffer at NCCL's in-place offsets
 */
public record CollectiveCall(
    Collective collective,
    DataType dataType,
    ReduceOp op,
    int root,
    DeviceMemory sendMemory,
    long sendByteOffset,
    DeviceMemory recvMemory,
    long recvByteOffset,
    long count,
    List<String> fields,
    boolean inPlace) {

  public CollectiveCall {
    Objects.requireNonNull(collective, "collective");
    Objects.requireNonNull(dataType, "dataType");
    Objects.requireNonNull(sendMemory, "sendMemory");
    Objects.requireNonNull(recvMemory, "recvMemory");
    fields = List.copyOf(fields);
  }

  /**
   * A call whose in-place-ness is taken to be "send and receive are the same memory block" (the original
   * meaning of {@link #inPlace()}); prefer the canonical constructor, which states it.
   */
  public CollectiveCall(
      Collective collective,
      DataType dataType,
      ReduceOp op,
      int root,
      DeviceMemory sendMemory,
      long sendByteOffset,
      DeviceMemory recvMemory,
      long recvByteOffset,
      long count,
      List<String> fields) {
    this(collective, dataType, op, root, sendMemory, sendByteOffset, recvMemory, recvByteOffset, count,
        fields, sendMemory == recvMemory);
  }

  /** Bytes this rank sends: NCCL's count times the element size (AllGather: its slice; ReduceScatter: all). */
  public long sendBytes(int ranks) {
    long n = collective == Collective.REDUCE_SCATTER ? count * ranks : count;
    return n * dataType.byteSize();
  }

  /** Bytes this rank receives: NCCL's count times the element size (AllGather: every slice). */
  public long recvBytes(int ranks) {
    long n = collective == Collective.ALL_GATHER ? count * ranks : count;
    return n * dataType.byteSize();
  }
}
