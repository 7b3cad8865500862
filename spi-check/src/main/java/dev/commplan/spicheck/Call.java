package dev.commplan.spicheck;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import java.util.List;

/**
 * One call as this backend runs it, checked by the runtime already ({@code AbstractCommunicator} checks a
 * direct call's buffers and a schedule's memory before the backend sees them): the call's count, and, for a
 * plan's call, where it comes from (for timeout messages).
 *
 * @param collective the collective, or a send or receive
 * @param type the element type of both sides
 * @param op the reduction, or null
 * @param root the root, the peer of a send or receive (a rank of the call's group), or -1
 * @param count the call's count ({@link dev.commplan.model.CountRule#ncclCount(long, long, long)}: the elements
 *     a rank sends, but ReduceScatter's and Scatter's, which a rank receives, and AllToAll's, per peer; a send's
 *     or receive's elements)
 * @param planName the plan, or null for a direct call
 * @param step the plan's step number, or -1
 * @param fields the plan's fields of the call; empty for a direct call
 */
record Call(Collective collective, DataType type, ReduceOp op, int root, long count, String planName, int step,
    List<String> fields) {
  Call {
    fields = List.copyOf(fields);
  }

  /** The bytes of this rank's send side on {@code ranks} ranks. */
  long sendBytes(int ranks) {
    return count * collective.counts().sendCounts(ranks) * type.byteSize();
  }

  /** The bytes of this rank's receive side on {@code ranks} ranks. */
  long recvBytes(int ranks) {
    return count * collective.counts().recvCounts(ranks) * type.byteSize();
  }

  /** What messages call it: {@code all-reduce I64 SUM of 4 (plan p.X, step 0, [sums])}, {@code send F32 to rank 2 of 8 ...}. */
  String label() {
    String peer = collective == Collective.SEND ? " to rank " + root : " from rank " + root;
    return collective.label() + " " + type + (op == null ? "" : " " + op)
        + (collective.pointToPoint() ? peer : root < 0 ? "" : " root " + root)
        + " of " + count + (planName == null ? " (called directly)" : " (plan " + planName + ", step " + step + ", "
        + fields + ")");
  }
}
