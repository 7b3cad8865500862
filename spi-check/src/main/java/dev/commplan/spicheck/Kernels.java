package dev.commplan.spicheck;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * What a collective computes, NCCL's meaning, from every rank's send side, for every data type: reductions
 * in rank order (0 to n-1, so every rank's result is the same bits), AVG as the sum divided by the ranks
 * (integers truncated).
 */
final class Kernels {
  private Kernels() {}

  /**
   * This rank's receive side after {@code call}, in a new block; null where the collective leaves it untouched
   * (a Reduce's or Gather's non-root ranks).
   *
   * @param sends every rank's send side, {@link Call#sendBytes} each
   */
  static MemorySegment result(Call call, int rank, MemorySegment[] sends) {
    long slice = call.count() * call.type().byteSize(); // the call's count, in bytes
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
      case SEND, RECV -> throw new AssertionError(call); // a Meeting's mailboxes carry these
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

  /**
   * The reduction of every rank's {@code count} elements at byte {@code offset}, in rank order: integers in a
   * long that wraps as the type does (MAX and MIN unsigned for the unsigned types), floating-point types in
   * {@code float} (F64: {@code double}) rounded to the type once at the end; AVG is the sum divided by the ranks
   * (integers: the wrapped sum, truncated toward zero, unsigned for the unsigned types).
   */
  private static MemorySegment reduce(Call call, MemorySegment[] sends, long offset) {
    DataType type = call.type();
    long n = call.count();
    int size = type.byteSize();
    MemorySegment out = Arena.ofAuto().allocate(Math.max(1, n * size)).asSlice(0, n * size);
    ReduceOp op = call.op();
    int ranks = sends.length;
    for (long i = 0; i < n; i++) {
      long at = offset + i * size;
      if (type.isFloatingPoint()) {
        double acc = loadFloat(type, sends[0], at);
        for (int r = 1; r < ranks; r++) {
          acc = narrow(type, combine(op, acc, loadFloat(type, sends[r], at)));
        }
        storeFloat(type, out, i * size, op == ReduceOp.AVG ? narrow(type, acc / ranks) : acc);
      } else {
        long acc = loadInteger(type, sends[0], at);
        for (int r = 1; r < ranks; r++) {
          acc = combine(op, type.isUnsigned(), acc, loadInteger(type, sends[r], at));
        }
        if (op == ReduceOp.AVG) {
          long sum = widen(type, acc);
          acc = type.isUnsigned() ? Long.divideUnsigned(sum, ranks) : sum / ranks;
        }
        storeInteger(type, out, i * size, acc);
      }
    }
    return out;
  }

  /** The value at byte {@code at}: signed types sign-extended, unsigned ones zero-extended. */
  private static long loadInteger(DataType type, MemorySegment from, long at) {
    return widen(type, switch (type.byteSize()) {
      case 1 -> from.get(ValueLayout.JAVA_BYTE, at);
      case 4 -> from.get(ValueLayout.JAVA_INT_UNALIGNED, at);
      default -> from.get(ValueLayout.JAVA_LONG_UNALIGNED, at);
    });
  }

  /** {@code value} wrapped to the type's width, sign- or zero-extended back to a long. */
  private static long widen(DataType type, long value) {
    return switch (type.byteSize()) {
      case 1 -> type.isUnsigned() ? value & 0xFF : (byte) value;
      case 4 -> type.isUnsigned() ? value & 0xFFFF_FFFFL : (int) value;
      default -> value;
    };
  }

  private static void storeInteger(DataType type, MemorySegment to, long at, long value) {
    switch (type.byteSize()) {
      case 1 -> to.set(ValueLayout.JAVA_BYTE, at, (byte) value);
      case 4 -> to.set(ValueLayout.JAVA_INT_UNALIGNED, at, (int) value);
      default -> to.set(ValueLayout.JAVA_LONG_UNALIGNED, at, value);
    }
  }

  private static double loadFloat(DataType type, MemorySegment from, long at) {
    return switch (type) {
      case F16 -> Float.float16ToFloat(from.get(ValueLayout.JAVA_SHORT_UNALIGNED, at));
      case BF16 -> BF16Buffer.fromBits(from.get(ValueLayout.JAVA_SHORT_UNALIGNED, at));
      case F32 -> from.get(ValueLayout.JAVA_FLOAT_UNALIGNED, at);
      case F64 -> from.get(ValueLayout.JAVA_DOUBLE_UNALIGNED, at);
      case F8E4M3 -> F8E4M3Buffer.fromBits(from.get(ValueLayout.JAVA_BYTE, at));
      case F8E5M2 -> F8E5M2Buffer.fromBits(from.get(ValueLayout.JAVA_BYTE, at));
      default -> throw new AssertionError(type);
    };
  }

  /** {@code value} rounded to the accumulator's precision: {@code float}, but for F64. */
  private static double narrow(DataType type, double value) {
    return type == DataType.F64 ? value : (float) value;
  }

  /** Rounds {@code value} to the type once (fp8 saturating, as NCCL's fp8 reductions do). */
  private static void storeFloat(DataType type, MemorySegment to, long at, double value) {
    switch (type) {
      case F16 -> to.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, Float.floatToFloat16((float) value));
      case BF16 -> to.set(ValueLayout.JAVA_SHORT_UNALIGNED, at, BF16Buffer.toBits((float) value));
      case F32 -> to.set(ValueLayout.JAVA_FLOAT_UNALIGNED, at, (float) value);
      case F64 -> to.set(ValueLayout.JAVA_DOUBLE_UNALIGNED, at, value);
      case F8E4M3 -> to.set(ValueLayout.JAVA_BYTE, at, F8E4M3Buffer.toBitsSaturated((float) value));
      case F8E5M2 -> to.set(ValueLayout.JAVA_BYTE, at, F8E5M2Buffer.toBitsSaturated((float) value));
      default -> throw new AssertionError(type);
    }
  }

  /** {@code a op b} for integers (wrapping, as the type does once narrowed); AVG sums here. */
  private static long combine(ReduceOp op, boolean unsigned, long a, long b) {
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MAX -> (unsigned ? Long.compareUnsigned(a, b) : Long.compare(a, b)) >= 0 ? a : b;
      case MIN -> (unsigned ? Long.compareUnsigned(a, b) : Long.compare(a, b)) <= 0 ? a : b;
    };
  }

  /** {@code a op b} for floats; AVG sums here. */
  private static double combine(ReduceOp op, double a, double b) {
    return switch (op) {
      case SUM, AVG -> a + b;
      case PROD -> a * b;
      case MAX -> Math.max(a, b);
      case MIN -> Math.min(a, b);
    };
  }
}
