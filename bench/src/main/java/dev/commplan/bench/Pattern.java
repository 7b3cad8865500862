package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The data of a checked run, and its check, as nccl-tests' {@code #wrong}: every rank fills its input
 * with small whole numbers that depend on the rank and the element's index, so that every type (half and
 * bfloat16 included) holds the inputs and the sums, products, minima and maxima exactly; the expected
 * result is computed here element by element, and #wrong counts the elements that differ.
 *
 * <p>Only {@code avg} is not exact in floating point (a sum divided by the number of ranks); its check
 * allows a relative error of one part in 10^2 (half, bfloat16), 10^5 (float) or 10^12 (double).
 */
final class Pattern {
  private static final ValueLayout.OfShort I16 = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfInt I32 = ValueLayout.JAVA_INT_UNALIGNED;
  private static final ValueLayout.OfLong I64 = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfFloat F32 = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfDouble F64 = ValueLayout.JAVA_DOUBLE_UNALIGNED;

  private Pattern() {}

  /**
   * Rank {@code rank}'s input at element {@code index}: 1..11 (never 0, so that a missed write shows);
   * for {@code prod}, 1 or 2, so that products of up to 8 ranks stay exact in every type.
   */
  static long input(ReduceOp op, int rank, long index) {
    if (op == ReduceOp.PROD) {
      return 1 + ((index + rank) & 1);
    }
    return (index * 7 + rank * 3L) % 11 + 1;
  }

  /** Writes {@code count} elements of rank {@code rank}'s input, for indices {@code first..}, at byte 0 of {@code host}. */
  static void fill(MemorySegment host, DataType type, long count, ReduceOp op, int rank, long first) {
    for (long i = 0; i < count; i++) {
      write(host, type, i, input(op, rank, first + i));
    }
  }

  /** Writes the whole number {@code v} as element {@code i} of type {@code type}. */
  static void write(MemorySegment host, DataType type, long i, long v) {
    int size = type.byteSize();
    long at = i * size;
    switch (type) {
      case F16 -> host.set(I16, at, Float.floatToFloat16(v));
      case BF16 -> host.set(I16, at, (short) (Float.floatToRawIntBits(v) >>> 16));
      case F32 -> host.set(F32, at, (float) v);
      case F64 -> host.set(F64, at, (double) v);
      case I8, U8 -> host.set(ValueLayout.JAVA_BYTE, at, (byte) v);
      case I32, U32 -> host.set(I32, at, (int) v);
      case I64, U64 -> host.set(I64, at, v);
      case F8E4M3 -> host.set(ValueLayout.JAVA_BYTE, at, F8E4M3Buffer.toBits(v));
      case F8E5M2 -> host.set(ValueLayout.JAVA_BYTE, at, F8E5M2Buffer.toBits(v));
    }
  }

  /** The reduction over ranks {@code 0..ranks-1} of their inputs at {@code index}, as NCCL computes it. */
  static double expectedReduction(DataType type, ReduceOp op, int ranks, long index) {
    if (type.isFloatingPoint()) {
      double acc = input(op, 0, index);
      for (int r = 1; r < ranks; r++) {
        double v = input(op, r, index);
        acc = switch (op) {
          case SUM, AVG -> acc + v;
          case PROD -> acc * v;
          case MAX -> Math.max(acc, v);
          case MIN -> Math.min(acc, v);
        };
      }
      return op == ReduceOp.AVG ? acc / ranks : acc;
    }
    // Integers wrap at their width, as in C; NCCL's integer avg divides the sum, truncating.
    long acc = input(op, 0, index);
    for (int r = 1; r < ranks; r++) {
      long v = input(op, r, index);
      acc = switch (op) {
        case SUM, AVG -> acc + v;
        case PROD -> acc * v;
        case MAX -> Math.max(acc, v);
        case MIN -> Math.min(acc, v);
      };
    }
    acc = normalize(type, acc);
    return op == ReduceOp.AVG ? normalize(type, acc / ranks) : acc;
  }

  /**
   * Counts the elements of {@code host} (from byte 0, {@code count} of them) that differ from {@code
   * expected.at(i)}.
   */
  static long countWrong(MemorySegment host, DataType type, long count, Expected expected) {
    double tolerance = switch (type) {
      case F16, BF16 -> 1e-2;
      case F8E4M3, F8E5M2 -> 0.25;
      case F32 -> 1e-5;
      case F64 -> 1e-12;
      default -> 0;
    };
    long wrong = 0;
    for (long i = 0; i < count; i++) {
      double want = expected.at(i);
      double got = read(host, type, i);
      if (tolerance == 0 ? got != want : Math.abs(got - want) > tolerance * Math.max(1, Math.abs(want))) {
        wrong++;
      }
    }
    return wrong;
  }

  /** Element {@code i} of type {@code type}, widened to a double (exact for every value a check uses). */
  static double read(MemorySegment host, DataType type, long i) {
    long at = i * type.byteSize();
    return switch (type) {
      case F16 -> Float.float16ToFloat(host.get(I16, at));
      case BF16 -> Float.intBitsToFloat(host.get(I16, at) << 16);
      case F32 -> host.get(F32, at);
      case F64 -> host.get(F64, at);
      case I8 -> host.get(ValueLayout.JAVA_BYTE, at);
      case U8 -> host.get(ValueLayout.JAVA_BYTE, at) & 0xFF;
      case I32 -> host.get(I32, at);
      case U32 -> host.get(I32, at) & 0xFFFF_FFFFL;
      case I64, U64 -> host.get(I64, at);
      case F8E4M3 -> F8E4M3Buffer.fromBits(host.get(ValueLayout.JAVA_BYTE, at));
      case F8E5M2 -> F8E5M2Buffer.fromBits(host.get(ValueLayout.JAVA_BYTE, at));
    };
  }

  private static long normalize(DataType type, long v) {
    return switch (type) {
      case I8 -> (byte) v;
      case U8 -> v & 0xFF;
      case I32 -> (int) v;
      case U32 -> v & 0xFFFF_FFFFL;
      default -> v;
    };
  }

  /** The expected value of element {@code i} of a result. */
  @FunctionalInterface
  interface Expected {
    double at(long i);
  }
}
