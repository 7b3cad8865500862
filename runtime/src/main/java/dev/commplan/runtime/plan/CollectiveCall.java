package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.spi.DeviceMemory;
import java.util.List;

/**
 * One NCCL call of a schedule, with NCCL's arguments: {@code count} is NCCL's count (the send count for
 * AllGather, the receive count for ReduceScatter, the element count otherwise). In place means the same
 * memory with NCCL's offsets (AllGather: send = recv + rank·count; ReduceScatter: recv = send +
 * rank·count), already applied to the byte offsets here.
 *
 * @param op the reduction for ALL_REDUCE and REDUCE_SCATTER; null otherwise
 * @param root the root for BROADCAST; -1 otherwise
 * @param fields the plan fields this call covers, in memory order
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
    List<String> fields) {

  public CollectiveCall {
    fields = List.copyOf(fields);
  }

  /** Whether send and receive are the same memory at NCCL's in-place offsets. */
  public boolean inPlace() {
    return sendMemory == recvMemory;
  }

  /** Bytes this rank sends: NCCL's count times the element size (AllGather: its slice; ReduceScatter: all). */
  public long sendBytes(int ranks) {
    long n = collective == Collective.REDUCE_SCATTER ? count * ranks : count;
    return n * dataType.byteSize();
  }
}
