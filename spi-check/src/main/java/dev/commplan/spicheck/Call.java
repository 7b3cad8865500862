package dev.commplan.spicheck;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import java.util.List;

/**
 * One collective as this backend runs it, checked by the runtime already ({@code AbstractCommunicator}
 * checks a direct call's buffers and a schedule's memory before the backend sees them): NCCL's {@code
 * count}, and, for a plan's call, where it comes from (for timeout messages).
 *
 * @param collective the collective; never a send or receive (refused when the call is made)
 * @param type the element type of both sides
 * @param op the reduction, or null
 * @param root the root, or -1
 * @param count NCCL's count ({@link dev.commplan.model.CountRule#ncclCount(long, long, long)})
 * @param planName the plan, or null for a direct call
 * @param step the plan's step number, or -1
 * @param fields the plan's fields of the call; empty for a direct call
 */
record Call(Collective collective, DataType type, ReduceOp op, int root, long count, String planName, int step,
    List<String> fields) {
  private static final List<DataType> REDUCIBLE = List.of(DataType.I32, DataType.I64, DataType.F32, DataType.F64);

  Call {
    if (collective.pointToPoint()) {
      throw new UnsupportedOperationException("the spi-check backend has no point-to-point (" + collective.label()
          + (planName == null ? "" : " in plan " + planName + ", step " + step + " of " + fields) + ")");
    }
    if (collective.hasOp() && !REDUCIBLE.contains(type)) {
      throw new UnsupportedOperationException("the spi-check backend reduces only " + REDUCIBLE + ", not " + type
          + " (" + collective.label() + (planName == null ? "" : " in plan " + planName + " of " + fields) + ")");
    }
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

  /** What messages call it: {@code all-reduce I64 SUM of 4 (plan p.X, step 0, [sums])}. */
  String label() {
    return collective.label() + " " + type + (op == null ? "" : " " + op) + (root < 0 ? "" : " root " + root)
        + " of " + count + (planName == null ? " (called directly)" : " (plan " + planName + ", step " + step + ", "
        + fields + ")");
  }
}
