package dev.commplan.spicheck;

import dev.commplan.annotations.ReduceOp;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a collective computes, NCCL's meaning, from every rank's send side: reductions in rank order (0 to
 * n-1, so every rank's result is the same bits), AVG as the sum divided by the ranks (integers truncated).
 */
final class Kernels {
  private Kernels() {}

  /**
   * This rank's receive side after {@code call}, in a new block; null where NCCL leaves it untouched (a
   * Reduce's or Gather's non-root ranks).
   *
   * @param sends every rank's send side, {@link Call#sendBytes} each
   */
  static MemorySegment result(Call call, int rank, MemorySegment[] sends) {
    long slice = call.count() * call.type().byteSize(); // NCCL's count in bytes
    boolean isRoot = rank == call.root();
    return switch (call.collective()) {
      case ALL_REDUCE -> reduce(call, sends, 0);
      case REDUCE -> isRoot ? reduce(call, sends, 0) : null;
      case REDUCE_SCATTER -> reduce(call, sends, rank * slice);
      case BROADCAST -> copy(sends[call.root()], 0, slice);
      case SCATTER -> copy(sends[call.root()], rank * slice, slice);
      case ALL_GATHER -> concat(sends, 0, slice);
      case GATHER -> isRoot ? concat(sends, 0, slice) : null;
      case ALL_TO_ALL -> concat(sends, rank * slice, slice);
      case SEND, RECV -> throw new AssertionError(call); // refused by Call
    };
  }

  private static MemorySegment copy(MemorySegment from, long offset, long bytes) {
    MemorySegment out = Arena.ofAuto().allocate(bytes);
    MemorySegment.copy(from, offset, out, 0, bytes);
    return out;
  }

  /** Rank i's bytes {@code [offset, offset + slice)} at {@code i * slice}, for every rank i. */
  private static MemorySegment concat(MemorySegment[] sends, long offset, long slice) {
    MemorySegment out = Arena.ofAuto().allocate(sends.length * slice);
    for (int i = 0; i < sends.length; i++) {
      MemorySegment.copy(sends[i], offset, out, i * slice, slice);
    }
    return out;
  }

  /** The reduction of every rank's {@code count} elements at byte {@code offset}, in rank order. */
  private static MemorySegment reduce(Call call, MemorySegment[] sends, long offset) {
    long n = call.count();
    MemorySegment out = copy(sends[0], offset, n * call.type().byteSize());
    ReduceOp op = call.op();
    for (int r = 1; r < sends.length; r++) {
      MemorySegment in = sends[r].asSlice(offset);
      for (long i = 0; i < n; i++) {
        switch (call.type()) {
          case I32 -> out.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, (int) combine(op,
              out.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i), in.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i)));
          case I64 -> out.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, combine(op,
              out.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i), in.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i)));
          case F32 -> out.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, (float) combine(op,
              out.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i), in.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i)));
          case F64 -> out.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, combine(op,
              out.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i), in.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i)));
          default -> throw new AssertionError(call); // refused by Call
        }
      }
    }
    if (op == ReduceOp.AVG) {
      int ranks = sends.length;
      for (long i = 0; i < n; i++) {
        switch (call.type()) {
          case I32 -> out.setAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i, out.getAtIndex(ValueLayout.JAVA_INT_UNALIGNED, i) / ranks);
          case I64 -> out.setAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i, out.getAtIndex(ValueLayout.JAVA_LONG_UNALIGNED, i) / ranks);
          case F32 -> out.setAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i, out.getAtIndex(ValueLayout.JAVA_FLOAT_UNALIGNED, i) / ranks);
          case F64 -> out.setAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i, out.getAtIndex(ValueLayout.JAVA_DOUBLE_UNALIGNED, i) / ranks);
          default -> throw new AssertionError(call);
        }
      }
    }
    return out;
  }

  /** {@code a op b} for integers (wrapping, as the type does once narrowed); AVG sums here. */
  private static long combine(ReduceOp op, long a, long b) {
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MAX -> Math.max(a, b);
      case MIN -> Math.min(a, b);
    };
  }

  /** {@code a op b} for floats; a float's sum is rounded to float by the caller's cast, each step. */
  private static double combine(ReduceOp op, double a, double b) {
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MAX -> Math.max(a, b);
      case MIN -> Math.min(a, b);
    };
  }
}
