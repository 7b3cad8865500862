package dev.commplan.runtime.local;

import dev.commplan.runtime.DataType;

/**
 * One stream's scratch arrays for the reduction kernels ({@link LocalReductions}): per accumulator kind an
 * accumulator and an input array of one chunk, and the raw patterns of the types narrower than their
 * accumulator. Only the stream's worker uses them. Each kind's arrays are made on the first reduction of
 * that kind and kept, so that a stream holds only the kinds it reduces and running a collective allocates
 * nothing after the first of its kind.
 */
final class KernelScratch {
  /**
   * Bytes of one chunk of the accumulator: a chunk of one input, of the accumulator and of the raw
   * patterns fit a core's L2 cache together, and a chunk is long enough that the per-copy costs of
   * {@code MemorySegment.copy} (checks, stub call) vanish beside the copy (docs/performance.md, "The local
   * backend's kernels against memcpy").
   */
  static final int CHUNK_BYTES = 128 * 1024;

  /** The longest chunk of any kind, in elements: that of the 4-byte accumulators. */
  private static final int MOST_ELEMENTS = CHUNK_BYTES / 4;

  float[] floatAccumulator;
  float[] floatInput;
  double[] doubleAccumulator;
  double[] doubleInput;
  int[] intAccumulator;
  int[] intInput;
  long[] longAccumulator;
  long[] longInput;
  /** F16's and BF16's patterns, read and written in bulk. */
  short[] shortPatterns;
  /** I8's, U8's and the fp8 types' patterns, read and written in bulk. */
  byte[] bytePatterns;

  /** Elements of {@code type} per chunk: {@link #CHUNK_BYTES} of its accumulator. */
  static int chunkElements(DataType type) {
    return CHUNK_BYTES / accumulatorBytes(type);
  }

  /** The width of the accumulator of {@code type}'s kind: float and int 4 bytes, double and long 8. */
  static int accumulatorBytes(DataType type) {
    return switch (type) {
      case F16, BF16, F32, F8E4M3, F8E5M2, I32, U32 -> 4;
      case F64, I8, U8, I64, U64 -> 8;
    };
  }

  /** Makes the arrays {@code type}'s reductions use, if this stream has not made them yet. */
  void prepare(DataType type) {
    int chunk = chunkElements(type);
    switch (type) {
      case F16, BF16, F32, F8E4M3, F8E5M2 -> {
        if (floatAccumulator == null) {
          floatAccumulator = new float[chunk];
          floatInput = new float[chunk];
        }
      }
      case F64 -> {
        if (doubleAccumulator == null) {
          doubleAccumulator = new double[chunk];
          doubleInput = new double[chunk];
        }
      }
      case I32, U32 -> {
        if (intAccumulator == null) {
          intAccumulator = new int[chunk];
          intInput = new int[chunk];
        }
      }
      case I8, U8, I64, U64 -> {
        if (longAccumulator == null) {
          longAccumulator = new long[chunk];
          longInput = new long[chunk];
        }
      }
    }
    // The pattern arrays serve kinds of different chunk lengths (I8 a long chunk, fp8 a float chunk):
    // they hold the longest, a chunk of a 4-byte kind.
    switch (type) {
      case F16, BF16 -> {
        if (shortPatterns == null) {
          shortPatterns = new short[MOST_ELEMENTS];
        }
      }
      case I8, U8, F8E4M3, F8E5M2 -> {
        if (bytePatterns == null) {
          bytePatterns = new byte[MOST_ELEMENTS];
        }
      }
      default -> {}
    }
  }
}
