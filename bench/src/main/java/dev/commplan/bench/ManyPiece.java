package dev.commplan.bench;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.plan.CollectiveCall;

/**
 * A contiguous range all-reduced by one call: what to fill and what to check. The call runs over a group of
 * {@code ranks} ranks where this rank is {@code rank}, whose inputs start at element {@code seed} of the
 * {@link Pattern} (the group's index along its axis; 0 on the world).
 */
record ManyPiece(DeviceMemory sendMemory, long sendOffset, DeviceMemory recvMemory, long recvOffset, long count,
    int rank, int ranks, long seed) {
  long bytes(DataType type) {
    return count * type.byteSize();
  }

  static ManyPiece of(Buffer send, Buffer recv, Communicator group, long seed) {
    return new ManyPiece(send.memory(), send.byteOffset(), recv.memory(), recv.byteOffset(), send.length(),
        group.rank(), group.size(), seed);
  }

  static ManyPiece of(CollectiveCall call, Communicator group, long seed) {
    return new ManyPiece(call.sendMemory(), call.sendByteOffset(), call.recvMemory(), call.recvByteOffset(), call.count(),
        group.rank(), group.size(), seed);
  }
}
