package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.model.Peer;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import java.util.List;
import java.util.Objects;

/**
 * One call of a schedule, with the arguments every backend gets (NCCL's, which the DSL's collectives
 * follow): {@code count} is the call's count, the per-rank element count the collective is defined with
 * ({@link dev.commplan.model.CountRule#ncclCount(long, long, long)}: the send count for AllGather and
 * Gather, the receive count for ReduceScatter and Scatter, the count per peer for AllToAll, the element
 * count otherwise). In place means the same memory at the collective's in-place offsets (AllGather:
 * send = recv + rank·count; ReduceScatter: recv = send + rank·count), already applied to the byte offsets
 * here.
 *
 * <p>Why {@code inPlace} is a component: two different regions of one memory block (user-bound buffers
 * that are views of one allocation) are not in place, and from the offsets alone AllGather's and
 * ReduceScatter's in-place arrangement cannot be told apart from two separate regions without knowing the
 * rank, so the plan, which knows, records it.
 *
 * <p>A send or receive has one buffer, which is both sides ({@code inPlace} true), its element count as
 * {@code count}, and its peer resolved for this rank: {@code peer} is the rank it sends to or receives
 * from, or -1 where the peer expression falls outside the ranks on this rank (no transfer: backends skip
 * the call). Every rank's schedule has the call, so that the plans' fingerprints agree.
 *
 * @param collective the collective (or SEND, RECV)
 * @param dataType the element type of both sides
 * @param op the reduction for ALL_REDUCE, REDUCE_SCATTER and REDUCE; null otherwise
 * @param root the root for BROADCAST, REDUCE, GATHER and SCATTER; -1 otherwise
 * @param sendMemory the block the send side lies in
 * @param sendByteOffset where the send side starts in {@code sendMemory}, in bytes
 * @param recvMemory the block the receive side lies in
 * @param recvByteOffset where the receive side starts in {@code recvMemory}, in bytes
 * @param count the call's count (see above): the send count for AllGather and Gather, the receive count for
 *     ReduceScatter and Scatter, the count per peer for AllToAll, the element count otherwise
 * @param fields the plan fields this call covers (their send side), in memory order
 * @param inPlace whether send and receive are one buffer at the collective's in-place offsets (a send or
 *     receive: true, its one buffer)
 * @param peer for SEND and RECV, the peer rank on this rank, or -1 for no transfer; -1 otherwise
 * @param peerExpression for SEND and RECV of a plan, the peer as declared; null otherwise (and for direct
 *     calls)
 * @param group the group the call runs over, an index into {@link Schedule#groups()}: 0 for the plan's own
 *     communicator, else a mesh axis's; {@code root} and {@code peer} are ranks of that group, and the
 *     in-place offsets use this rank's rank there
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
    boolean inPlace,
    int peer,
    Peer peerExpression,
    int group) {

  /**
   * Checks that the collective, data type and memory are given, and copies {@code fields}.
   *
   * @param collective the collective (or SEND, RECV)
   * @param dataType the element type of both sides
   * @param op the reduction for ALL_REDUCE, REDUCE_SCATTER and REDUCE; null otherwise
   * @param root the root for BROADCAST, REDUCE, GATHER and SCATTER; -1 otherwise
   * @param sendMemory the block the send side lies in
   * @param sendByteOffset where the send side starts in {@code sendMemory}, in bytes
   * @param recvMemory the block the receive side lies in
   * @param recvByteOffset where the receive side starts in {@code recvMemory}, in bytes
   * @param count the call's count (see the class comment): the send count for AllGather and Gather, the
   *     receive count for ReduceScatter and Scatter, the count per peer for AllToAll, the element count otherwise
   * @param fields the plan fields this call covers (their send side), in memory order
   * @param inPlace whether send and receive are one buffer at the collective's in-place offsets
   * @param peer the rank this rank sends to or receives from, or -1 for no transfer on this rank
   * @param peerExpression the peer as declared in the plan; null for a direct call
   * @param group the group the call runs over ({@link Schedule#groups()}), {@code >= 0}
   */
  public CollectiveCall {
    if (group < 0) {
      throw new IllegalArgumentException("group " + group + " is negative");
    }
    Objects.requireNonNull(collective, "collective");
    Objects.requireNonNull(dataType, "dataType");
    Objects.requireNonNull(sendMemory, "sendMemory");
    Objects.requireNonNull(recvMemory, "recvMemory");
    fields = List.copyOf(fields);
  }

  /**
   * A call that is not a send or receive (no peer), over the schedule's own communicator (group 0).
   *
   * @param collective the collective; not SEND or RECV ({@link #pointToPoint})
   * @param dataType the element type of both sides
   * @param op the reduction for ALL_REDUCE, REDUCE_SCATTER and REDUCE; null otherwise
   * @param root the root for BROADCAST, REDUCE, GATHER and SCATTER; -1 otherwise
   * @param sendMemory the block the send side lies in
   * @param sendByteOffset where the send side starts in {@code sendMemory}, in bytes
   * @param recvMemory the block the receive side lies in
   * @param recvByteOffset where the receive side starts in {@code recvMemory}, in bytes
   * @param count the call's count (see the class comment): the send count for AllGather and Gather, the
   *     receive count for ReduceScatter and Scatter, the count per peer for AllToAll, the element count otherwise
   * @param fields the plan fields this call covers (their send side), in memory order
   * @param inPlace whether send and receive are one buffer at the collective's in-place offsets
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
      List<String> fields,
      boolean inPlace) {
    this(collective, dataType, op, root, sendMemory, sendByteOffset, recvMemory, recvByteOffset, count, fields,
        inPlace, -1, null, 0);
  }

  /**
   * A send or receive of {@code count} elements of {@code memory} at {@code byteOffset}, to or from {@code
   * peer} (-1: none on this rank), declared with {@code peerExpression} (null for a direct call), over a
   * group of the schedule: {@code peer} is a rank of that group.
   *
   * @param collective {@link Collective#SEND} or {@link Collective#RECV}
   * @param dataType the element type of both sides
   * @param memory the block the one buffer lies in, both sides
   * @param byteOffset where the buffer starts in {@code memory}, in bytes
   * @param count the element count of the buffer
   * @param peer the rank of the group this rank sends to or receives from, or -1 for no transfer here
   * @param peerExpression the peer as declared in the plan; null for a direct call
   * @param fields the plan fields this call covers, in memory order
   * @param group the group ({@link Schedule#groups()}) the transfer runs over
   * @return the call, in place (its one buffer is both sides)
   * @throws IllegalArgumentException if {@code collective} is not point-to-point
   */
  public static CollectiveCall pointToPoint(Collective collective, DataType dataType, DeviceMemory memory,
      long byteOffset, long count, int peer, Peer peerExpression, List<String> fields, int group) {
    if (!collective.pointToPoint()) {
      throw new IllegalArgumentException(collective + " is not point-to-point");
    }
    return new CollectiveCall(collective, dataType, null, -1, memory, byteOffset, memory, byteOffset, count, fields,
        true, peer, peerExpression, group);
  }

  /**
   * Whether this rank moves data in this call: always, but for a send or receive whose peer is none here.
   *
   * @return false only for a send or receive with no peer on this rank
   */
  public boolean transfers() {
    return !collective.pointToPoint() || peer >= 0;
  }

  /**
   * The bytes of the send side: the call's count times the element size, times the ranks where it holds a
   * slice per rank (ReduceScatter, Scatter, AllToAll). (A send's or receive's one buffer for both sides.)
   *
   * @param ranks the communicator size
   * @return the send side's size in bytes
   */
  public long sendBytes(int ranks) {
    return count * collective.counts().sendCounts(ranks) * dataType.byteSize();
  }

  /**
   * The bytes of the receive side: the same, with a slice per rank for AllGather, Gather and AllToAll.
   *
   * @param ranks the communicator size
   * @return the receive side's size in bytes
   */
  public long recvBytes(int ranks) {
    return count * collective.counts().recvCounts(ranks) * dataType.byteSize();
  }
}
