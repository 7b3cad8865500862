package dev.commplan.runtime.local;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The arithmetic of the local backend's reductions ({@link LocalKernels}), one chunk at a time: {@link
 * #reduceChunk} reads the chunk of every rank's input, in rank order, into the scratch accumulator of the
 * type's kind and combines it there; {@link #storeChunk} copies the result to a receive buffer, as often as
 * there are receive buffers.
 *
 * <p>Every read and write of the buffers is one bulk {@code MemorySegment.copy} per chunk (a vectorized copy
 * with one bounds check); conversions and arithmetic run on the scratch arrays, in loops the JIT
 * vectorizes, where JDK 25's compiler does not vectorize loops over segments element by element
 * (docs/performance.md, "The local backend's kernels against memcpy").
 *
 * <p>Accumulation and order: element by element, rank 0's value, then rank 1's combined into it, and so
 * on to rank n-1 ({@code ((x0 + x1) + x2) + ...} for SUM), whichever rank computes the chunk, so every rank
 * receives bitwise the same result. F16, BF16, F32 and the two fp8 types accumulate in {@code float} (the
 * narrow types rounded once to the type at the end, fp8 with CUDA's saturation to the largest finite
 * value, as NCCL's fp8 arithmetic does), F64 in {@code double}. Integers accumulate in {@code int} (I32,
 * U32) or {@code long} (I8 and U8 sign-extended, which JDK 25 vectorizes where it does not widen bytes to
 * ints; I64, U64), with two's-complement wrapping, which is exact modulo 2^bits for SUM and PROD, so
 * narrowing at the end gives the type's wrapped result. Unsigned types compare as unsigned (a
 * sign-extended U8 keeps its unsigned order among 64-bit unsigned values). AVG is the sum divided by
 * the rank count: floating-point sum then divide; integers: the sum wrapped to the type, then integer
 * division (unsigned for unsigned types), which is NCCL's SumPostDiv.
 */
final class LocalReductions {
  private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;
  private static final ValueLayout.OfByte BYTE = ValueLayout.JAVA_BYTE;

  /** The values of the 256 fp8 patterns (the buffers' own decoding), so that widening is a lookup. */
  private static final float[] E4M3_VALUES = new float[256];
  private static final float[] E5M2_VALUES = new float[256];

  static {
    for (int bits = 0; bits < 256; bits++) {
      E4M3_VALUES[bits] = F8E4M3Buffer.fromBits((byte) bits);
      E5M2_VALUES[bits] = F8E5M2Buffer.fromBits((byte) bits);
    }
  }

  private LocalReductions() {}

  /**
   * Reduces {@code length} elements (at most {@link KernelScratch#chunkElements}) from byte {@code sendByte}
   * of every rank's send region into {@code s}, ready for {@link #storeChunk}: combined in rank order,
   * divided for AVG, and converted to the type's patterns where the type is narrower than its accumulator.
   * Reads every input before anything is written, so that in-place slices are safe.
   */
  static void reduceChunk(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    switch (calls[0].type) {
      case F16, BF16, F32, F8E4M3, F8E5M2 -> reduceFloats(calls, sendByte, length, s);
      case F64 -> reduceDoubles(calls, sendByte, length, s);
      case I32, U32 -> reduceInts(calls, sendByte, length, s);
      case I8, U8, I64, U64 -> reduceLongs(calls, sendByte, length, s);
    }
  }

  /** {@link #reduceChunk} for the types that accumulate in {@code float}s, narrowed back to their bits at the end. */
  private static void reduceFloats(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    DataType type = calls[0].type;
    ReduceOp op = calls[0].op;
    int ranks = calls.length;
    for (int r = 0; r < ranks; r++) {
      float[] into = r == 0 ? s.floatAccumulator : s.floatInput;
      loadFloats(type, calls[r].send.segment(), calls[r].sendOffset + sendByte, into, length, s);
      if (r > 0) {
        combineFloats(op, s.floatAccumulator, s.floatInput, length);
      }
    }
    if (op == ReduceOp.AVG) {
      float[] acc = s.floatAccumulator;
      for (int i = 0; i < length; i++) {
        acc[i] /= ranks;
      }
    }
    narrowFloats(type, s, length);
  }

  /** {@link #reduceChunk} for F64. */
  private static void reduceDoubles(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    ReduceOp op = calls[0].op;
    int ranks = calls.length;
    for (int r = 0; r < ranks; r++) {
      double[] into = r == 0 ? s.doubleAccumulator : s.doubleInput;
      MemorySegment.copy(calls[r].send.segment(), DOUBLE, calls[r].sendOffset + sendByte, into, 0, length);
      if (r > 0) {
        combineDoubles(op, s.doubleAccumulator, s.doubleInput, length);
      }
    }
    if (op == ReduceOp.AVG) {
      double[] acc = s.doubleAccumulator;
      for (int i = 0; i < length; i++) {
        acc[i] /= ranks;
      }
    }
  }

  /** {@link #reduceChunk} for I32 and U32, in {@code int}s. */
  private static void reduceInts(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    DataType type = calls[0].type;
    ReduceOp op = calls[0].op;
    int ranks = calls.length;
    for (int r = 0; r < ranks; r++) {
      int[] into = r == 0 ? s.intAccumulator : s.intInput;
      MemorySegment.copy(calls[r].send.segment(), INT, calls[r].sendOffset + sendByte, into, 0, length);
      if (r > 0) {
        combineInts(op, type == DataType.U32, s.intAccumulator, s.intInput, length);
      }
    }
    if (op == ReduceOp.AVG) {
      int[] acc = s.intAccumulator;
      for (int i = 0; i < length; i++) {
        acc[i] = type == DataType.U32 ? Integer.divideUnsigned(acc[i], ranks) : acc[i] / ranks;
      }
    }
  }

  /** {@link #reduceChunk} for the types that accumulate in {@code long}s; the 8-bit ones keep their byte patterns. */
  private static void reduceLongs(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    DataType type = calls[0].type;
    ReduceOp op = calls[0].op;
    int ranks = calls.length;
    for (int r = 0; r < ranks; r++) {
      long[] into = r == 0 ? s.longAccumulator : s.longInput;
      loadLongs(type, calls[r].send.segment(), calls[r].sendOffset + sendByte, into, length, s);
      if (r > 0) {
        combineLongs(op, type.isUnsigned(), s.longAccumulator, s.longInput, length);
      }
    }
    if (op == ReduceOp.AVG) {
      averageLongs(type, s.longAccumulator, length, ranks);
    }
    if (type == DataType.I8 || type == DataType.U8) {
      long[] acc = s.longAccumulator;
      byte[] patterns = s.bytePatterns;
      for (int i = 0; i < length; i++) {
        patterns[i] = (byte) acc[i];
      }
    }
  }


  /** Copies the chunk {@link #reduceChunk} left in {@code s} to {@code length} elements at {@code offset} of {@code to}. */
  static void storeChunk(DataType type, KernelScratch s, MemorySegment to, long offset, int length) {
    switch (type) {
      case F32 -> MemorySegment.copy(s.floatAccumulator, 0, to, FLOAT, offset, length);
      case F64 -> MemorySegment.copy(s.doubleAccumulator, 0, to, DOUBLE, offset, length);
      case I32, U32 -> MemorySegment.copy(s.intAccumulator, 0, to, INT, offset, length);
      case I64, U64 -> MemorySegment.copy(s.longAccumulator, 0, to, LONG, offset, length);
      case F16, BF16 -> MemorySegment.copy(s.shortPatterns, 0, to, SHORT, offset, length);
      case I8, U8, F8E4M3, F8E5M2 -> MemorySegment.copy(s.bytePatterns, 0, to, BYTE, offset, length);
    }
  }

  /** Widens {@code length} elements at {@code offset} of {@code from} into {@code into}, exactly. */
  private static void loadFloats(DataType type, MemorySegment from, long offset, float[] into, int length,
      KernelScratch s) {
    switch (type) {
      case F32 -> MemorySegment.copy(from, FLOAT, offset, into, 0, length);
      case F16 -> {
        short[] patterns = s.shortPatterns;
        MemorySegment.copy(from, SHORT, offset, patterns, 0, length);
        for (int i = 0; i < length; i++) {
          into[i] = Float.float16ToFloat(patterns[i]);
        }
      }
      case BF16 -> {
        short[] patterns = s.shortPatterns;
        MemorySegment.copy(from, SHORT, offset, patterns, 0, length);
        for (int i = 0; i < length; i++) {
          into[i] = BF16Buffer.fromBits(patterns[i]);
        }
      }
      case F8E4M3, F8E5M2 -> {
        byte[] patterns = s.bytePatterns;
        float[] values = type == DataType.F8E4M3 ? E4M3_VALUES : E5M2_VALUES;
        MemorySegment.copy(from, BYTE, offset, patterns, 0, length);
        for (int i = 0; i < length; i++) {
          into[i] = values[patterns[i] & 0xFF];
        }
      }
      default -> throw new AssertionError(type);
    }
  }

  /** Rounds the float accumulator to the patterns of the narrow float types, once per chunk. */
  private static void narrowFloats(DataType type, KernelScratch s, int length) {
    float[] acc = s.floatAccumulator;
    switch (type) {
      case F16 -> {
        short[] patterns = s.shortPatterns;
        for (int i = 0; i < length; i++) {
          patterns[i] = Float.floatToFloat16(acc[i]);
        }
      }
      case BF16 -> {
        short[] patterns = s.shortPatterns;
        for (int i = 0; i < length; i++) {
          patterns[i] = BF16Buffer.toBits(acc[i]);
        }
      }
      case F8E4M3 -> {
        byte[] patterns = s.bytePatterns;
        for (int i = 0; i < length; i++) {
          patterns[i] = F8E4M3Buffer.toBitsSaturated(acc[i]);
        }
      }
      case F8E5M2 -> {
        byte[] patterns = s.bytePatterns;
        for (int i = 0; i < length; i++) {
          patterns[i] = F8E5M2Buffer.toBitsSaturated(acc[i]);
        }
      }
      default -> {} // F32: the accumulator is the result
    }
  }

  /** Loads integers into longs: I8 and U8 sign-extended (see the class comment), I64 and U64 as they are. */
  private static void loadLongs(DataType type, MemorySegment from, long offset, long[] into, int length,
      KernelScratch s) {
    switch (type) {
      case I64, U64 -> MemorySegment.copy(from, LONG, offset, into, 0, length);
      case I8, U8 -> {
        byte[] patterns = s.bytePatterns;
        MemorySegment.copy(from, BYTE, offset, patterns, 0, length);
        for (int i = 0; i < length; i++) {
          into[i] = patterns[i];
        }
      }
      default -> throw new AssertionError(type);
    }
  }

  /** AVG of the long kind: the sum wrapped to the type, then divided (unsigned for U8 and U64). */
  private static void averageLongs(DataType type, long[] acc, int length, int ranks) {
    switch (type) {
      case I8 -> {
        for (int i = 0; i < length; i++) {
          acc[i] = (byte) acc[i] / ranks;
        }
      }
      case U8 -> {
        for (int i = 0; i < length; i++) {
          acc[i] = (acc[i] & 0xFF) / ranks;
        }
      }
      case I64 -> {
        for (int i = 0; i < length; i++) {
          acc[i] /= ranks;
        }
      }
      case U64 -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Long.divideUnsigned(acc[i], ranks);
        }
      }
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

  /**
   * Wrapping SUM and PROD are exact modulo 2^32, so narrowing later is enough. Unsigned order is the signed
   * order of the values with the top bit flipped, which keeps MAX and MIN branch-free loops.
   */
  private static void combineInts(ReduceOp op, boolean unsigned, int[] acc, int[] in, int length) {
    int flip = unsigned ? Integer.MIN_VALUE : 0;
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
          acc[i] = Math.max(acc[i] ^ flip, in[i] ^ flip) ^ flip;
        }
      }
      case MIN -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Math.min(acc[i] ^ flip, in[i] ^ flip) ^ flip;
        }
      }
    }
  }

  /** As {@link #combineInts}, modulo 2^64. */
  private static void combineLongs(ReduceOp op, boolean unsigned, long[] acc, long[] in, int length) {
    long flip = unsigned ? Long.MIN_VALUE : 0;
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
          acc[i] = Math.max(acc[i] ^ flip, in[i] ^ flip) ^ flip;
        }
      }
      case MIN -> {
        for (int i = 0; i < length; i++) {
          acc[i] = Math.min(acc[i] ^ flip, in[i] ^ flip) ^ flip;
        }
      }
    }
  }
}
