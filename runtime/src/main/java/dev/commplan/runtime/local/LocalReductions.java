package dev.commplan.runtime.local;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The arithmetic of the local backend's reductions ({@link LocalKernels}): a chunk of every rank's input
 * read in rank order into the scratch accumulator of the type's kind, combined there, and stored.
 * Accumulation: F16, BF16, F32 and the two fp8 types in {@code float} (the narrow types rounded once to
 * the type at the end, fp8 with CUDA's saturation to the largest finite value, as NCCL's fp8 arithmetic
 * does), F64 in {@code double}, integers in a {@code long} and narrowed at the end, which is exact
 * two's-complement wrapping for SUM and PROD. Unsigned types compare as unsigned. AVG is the sum divided
 * by the rank count: floating-point sum then divide; integers: the sum wrapped to the type, then integer
 * division (unsigned for unsigned types), which is NCCL's SumPostDiv.
 */
final class LocalReductions {
  private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;

  private LocalReductions() {}

  // ---- Reduction of one chunk: every rank's input at {@code sendByte} is read, in rank order, into the
  // ---- scratch accumulator of the type's kind; nothing is written until storeChunk.

  static void reduceChunk(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    DataType type = calls[0].type;
    ReduceOp op = calls[0].op;
    int ranks = calls.length;
    switch (type) {
      case F16, BF16, F32, F8E4M3, F8E5M2 -> {
        for (int r = 0; r < ranks; r++) {
          float[] into = r == 0 ? s.floatAccumulator : s.floatInput;
          loadFloats(type, calls[r].send.segment(), calls[r].sendOffset + sendByte, into, length);
          if (r > 0) {
            combineFloats(op, s.floatAccumulator, s.floatInput, length);
          }
        }
        if (op == ReduceOp.AVG) {
          for (int i = 0; i < length; i++) {
            s.floatAccumulator[i] /= ranks;
          }
        }
      }
      case F64 -> {
        for (int r = 0; r < ranks; r++) {
          double[] into = r == 0 ? s.doubleAccumulator : s.doubleInput;
          MemorySegment.copy(calls[r].send.segment(), DOUBLE, calls[r].sendOffset + sendByte, into, 0, length);
          if (r > 0) {
            combineDoubles(op, s.doubleAccumulator, s.doubleInput, length);
          }
        }
        if (op == ReduceOp.AVG) {
          for (int i = 0; i < length; i++) {
            s.doubleAccumulator[i] /= ranks;
          }
        }
      }
      case I8, U8, I32, U32, I64, U64 -> {
        for (int r = 0; r < ranks; r++) {
          long[] into = r == 0 ? s.longAccumulator : s.longInput;
          loadLongs(type, calls[r].send.segment(), calls[r].sendOffset + sendByte, into, length);
          if (r > 0) {
            combineLongs(op, type.isUnsigned(), s.longAccumulator, s.longInput, length);
          }
        }
        if (op == ReduceOp.AVG) {
          for (int i = 0; i < length; i++) {
            long sum = narrow(type, s.longAccumulator[i]);
            s.longAccumulator[i] = type.isUnsigned() ? Long.divideUnsigned(sum, ranks) : sum / ranks;
          }
        }
      }
    }
  }

  private static void loadFloats(DataType type, MemorySegment from, long offset, float[] into, int length) {
    switch (type) {
      case F16 -> {
        for (int i = 0; i < length; i++) {
          into[i] = Float.float16ToFloat(from.get(SHORT, offset + 2L * i));
        }
      }
      case BF16 -> {
        for (int i = 0; i < length; i++) {
          into[i] = BF16Buffer.fromBits(from.get(SHORT, offset + 2L * i));
        }
      }
      case F32 -> MemorySegment.copy(from, FLOAT, offset, into, 0, length);
      case F8E4M3 -> {
        for (int i = 0; i < length; i++) {
          into[i] = F8E4M3Buffer.fromBits(from.get(ValueLayout.JAVA_BYTE, offset + i));
        }
      }
      case F8E5M2 -> {
        for (int i = 0; i < length; i++) {
          into[i] = F8E5M2Buffer.fromBits(from.get(ValueLayout.JAVA_BYTE, offset + i));
        }
      }
      default -> throw new AssertionError(type);
    }
  }

  /** Loads integers widened to long: sign-extended for signed types, zero-extended for unsigned ones. */
  private static void loadLongs(DataType type, MemorySegment from, long offset, long[] into, int length) {
    switch (type) {
      case I8 -> {
        for (int i = 0; i < length; i++) {
          into[i] = from.get(ValueLayout.JAVA_BYTE, offset + i);
        }
      }
      case U8 -> {
        for (int i = 0; i < length; i++) {
          into[i] = Byte.toUnsignedLong(from.get(ValueLayout.JAVA_BYTE, offset + i));
        }
      }
      case I32 -> {
        for (int i = 0; i < length; i++) {
          into[i] = from.get(INT, offset + 4L * i);
        }
      }
      case U32 -> {
        for (int i = 0; i < length; i++) {
          into[i] = Integer.toUnsignedLong(from.get(INT, offset + 4L * i));
        }
      }
      case I64, U64 -> MemorySegment.copy(from, LONG, offset, into, 0, length);
      default -> throw new AssertionError(type);
    }
  }

  private static void combineFloats(ReduceOp op, float[] acc, float[] in, int length) {
    switch (op) {
      case SUM, AVG -> {
        for (int i = 0; i < length; i++) {
          acc[i] += in[i];
        }
      }
      case PROD -> {
        for (int i = 0; i < length; i++) {
          acc[i] *= in[i];
        }
      }
      case MAX -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Math.max(acc[i], in[i]);
        }
      }
      case MIN -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Math.min(acc[i], in[i]);
        }
      }
    }
  }

  private static void combineDoubles(ReduceOp op, double[] acc, double[] in, int length) {
    switch (op) {
      case SUM, AVG -> {
        for (int i = 0; i < length; i++) {
          acc[i] += in[i];
        }
      }
      case PROD -> {
        for (int i = 0; i < length; i++) {
          acc[i] *= in[i];
        }
      }
      case MAX -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Math.max(acc[i], in[i]);
        }
      }
      case MIN -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Math.min(acc[i], in[i]);
        }
      }
    }
  }

  /** 64-bit wrapping SUM and PROD are exact modulo 2^bits for every narrower type, so narrowing later is enough. */
  private static void combineLongs(ReduceOp op, boolean unsigned, long[] acc, long[] in, int length) {
    switch (op) {
      case SUM, AVG -> {
        for (int i = 0; i < length; i++) {
          acc[i] += in[i];
        }
      }
      case PROD -> {
        for (int i = 0; i < length; i++) {
          acc[i] *= in[i];
        }
      }
      case MAX -> {
        for (int i = 0; i < length; i++) {
          boolean larger = unsigned ? Long.compareUnsigned(in[i], acc[i]) > 0 : in[i] > acc[i];
          acc[i] = larger ? in[i] : acc[i];
        }
      }
      case MIN -> {
        for (int i = 0; i < length; i++) {
          boolean smaller = unsigned ? Long.compareUnsigned(in[i], acc[i]) < 0 : in[i] < acc[i];
          acc[i] = smaller ? in[i] : acc[i];
        }
      }
    }
  }

  /** Wraps a long to the type's width: sign-extended for signed types, zero-extended for unsigned. */
  private static long narrow(DataType type, long value) {
    return switch (type) {
      case I8 -> (byte) value;
      case U8 -> value & 0xFFL;
      case I32 -> (int) value;
      case U32 -> value & 0xFFFF_FFFFL;
      default -> value;
    };
  }

  /** Writes the accumulator of the type's kind to {@code length} elements at {@code offset} of {@code to}. */
  static void storeChunk(DataType type, KernelScratch s, MemorySegment to, long offset, int length) {
    switch (type) {
      case F16 -> {
        for (int i = 0; i < length; i++) {
          to.set(SHORT, offset + 2L * i, Float.floatToFloat16(s.floatAccumulator[i]));
        }
      }
      case BF16 -> {
        for (int i = 0; i < length; i++) {
          to.set(SHORT, offset + 2L * i, BF16Buffer.toBits(s.floatAccumulator[i]));
        }
      }
      case F32 -> MemorySegment.copy(s.floatAccumulator, 0, to, FLOAT, offset, length);
      case F64 -> MemorySegment.copy(s.doubleAccumulator, 0, to, DOUBLE, offset, length);
      case I8, U8 -> {
        for (int i = 0; i < length; i++) {
          to.set(ValueLayout.JAVA_BYTE, offset + i, (byte) s.longAccumulator[i]);
        }
      }
      case I32, U32 -> {
        for (int i = 0; i < length; i++) {
          to.set(INT, offset + 4L * i, (int) s.longAccumulator[i]);
        }
      }
      case I64, U64 -> MemorySegment.copy(s.longAccumulator, 0, to, LONG, offset, length);
      case F8E4M3 -> {
        for (int i = 0; i < length; i++) {
          to.set(ValueLayout.JAVA_BYTE, offset + i, F8E4M3Buffer.toBitsSaturated(s.floatAccumulator[i]));
        }
      }
      case F8E5M2 -> {
        for (int i = 0; i < length; i++) {
          to.set(ValueLayout.JAVA_BYTE, offset + i, F8E5M2Buffer.toBitsSaturated(s.floatAccumulator[i]));
        }
      }
    }
  }
}
