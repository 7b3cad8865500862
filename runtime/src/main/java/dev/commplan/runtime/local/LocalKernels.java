package dev.commplan.runtime.local;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.DataType;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The element work of the four collectives, NCCL's meaning, run by every participating rank's stream
 * worker on its own slice of the elements once all ranks have arrived.
 *
 * <p>Reductions combine the ranks' values in rank order 0, 1, ..., n-1, whoever computes the slice, so
 * every rank receives bitwise the same result. Accumulation: F16, BF16 and F32 in {@code float} (16-bit
 * types rounded once to the type at the end), F64 in {@code double}, integers in a {@code long} and
 * narrowed at the end, which is exact two's-complement wrapping for SUM and PROD. Unsigned types compare
 * as unsigned. AVG is the sum divided by the rank count: floating-point sum then divide; integers: the
 * sum wrapped to the type, then integer division (unsigned for unsigned types), which is NCCL's
 * SumPostDiv.
 *
 * <p>Aliasing (in place, NCCL's offsets): every element position of a receive buffer that is also a
 * send position is written only by the rank whose slice it belongs to, which reads the whole chunk of
 * every input before writing any of it. Copies whose source and destination are the same bytes (the
 * in-place rank's own slice) are skipped.
 */
final class LocalKernels {
  private static final ValueLayout.OfShort SHORT = ValueLayout.JAVA_SHORT_UNALIGNED;
  private static final ValueLayout.OfInt INT = ValueLayout.JAVA_INT_UNALIGNED;
  private static final ValueLayout.OfLong LONG = ValueLayout.JAVA_LONG_UNALIGNED;
  private static final ValueLayout.OfFloat FLOAT = ValueLayout.JAVA_FLOAT_UNALIGNED;
  private static final ValueLayout.OfDouble DOUBLE = ValueLayout.JAVA_DOUBLE_UNALIGNED;

  private LocalKernels() {}

  /** Runs {@code rank}'s share of the collective described by {@code calls} (one per rank, all matching). */
  static void run(LocalCollective[] calls, int rank, KernelScratch scratch) {
    LocalCollective first = calls[0];
    int ranks = calls.length;
    long elements = switch (first.collective) {
      case ALL_REDUCE, BROADCAST -> first.count;
      case ALL_GATHER, REDUCE_SCATTER -> first.count * ranks;
    };
    // An even split of the element range; the slices of consecutive ranks touch, so all of it is covered.
    long from = sliceStart(elements, rank, ranks);
    long to = sliceStart(elements, rank + 1, ranks);
    switch (first.collective) {
      case ALL_REDUCE -> allReduce(calls, from, to, scratch);
      case REDUCE_SCATTER -> reduceScatter(calls, from, to, scratch);
      case ALL_GATHER -> allGather(calls, from, to);
      case BROADCAST -> broadcast(calls, from, to);
    }
  }

  /** floor(elements · rank / ranks), computed without overflowing for any element count. */
  static long sliceStart(long elements, int rank, int ranks) {
    return elements / ranks * rank + elements % ranks * rank / ranks;
  }

  private static void allReduce(LocalCollective[] calls, long from, long to, KernelScratch scratch) {
    int size = calls[0].type.byteSize();
    for (long at = from; at < to; at += KernelScratch.CHUNK) {
      int length = (int) Math.min(KernelScratch.CHUNK, to - at);
      reduceChunk(calls, at * size, length, scratch);
      for (LocalCollective call : calls) {
        storeChunk(call.type, scratch, call.recv.segment(), call.recvOffset + at * size, length);
      }
    }
  }

  private static void reduceScatter(LocalCollective[] calls, long from, long to, KernelScratch scratch) {
    long count = calls[0].count;
    int size = calls[0].type.byteSize();
    long at = from;
    while (at < to) {
      // Element `at` of every send buffer reduces into element at % count of rank (at / count)'s recv.
      int target = (int) (at / count);
      long inTarget = at % count;
      int length = (int) Math.min(KernelScratch.CHUNK, Math.min(to - at, count - inTarget));
      reduceChunk(calls, at * size, length, scratch);
      LocalCollective out = calls[target];
      storeChunk(out.type, scratch, out.recv.segment(), out.recvOffset + inTarget * size, length);
      at += length;
    }
  }

  private static void allGather(LocalCollective[] calls, long from, long to) {
    long count = calls[0].count;
    int size = calls[0].type.byteSize();
    long at = from;
    while (at < to) {
      // Element `at` of every recv buffer is element at % count of rank (at / count)'s send buffer.
      LocalCollective source = calls[(int) (at / count)];
      long inSource = at % count;
      long length = Math.min(to - at, count - inSource);
      copyToAll(calls, source.send.segment(), source.sendOffset + inSource * size, at * size, length * size);
      at += length;
    }
  }

  private static void broadcast(LocalCollective[] calls, long from, long to) {
    if (from == to) {
      return;
    }
    LocalCollective source = calls[calls[0].root];
    int size = calls[0].type.byteSize();
    copyToAll(calls, source.send.segment(), source.sendOffset + from * size, from * size, (to - from) * size);
  }

  /** Copies {@code bytes} from {@code src} to byte {@code recvByte} of every rank's receive region. */
  private static void copyToAll(LocalCollective[] calls, MemorySegment src, long srcOffset, long recvByte, long bytes) {
    for (LocalCollective call : calls) {
      MemorySegment dst = call.recv.segment();
      long dstOffset = call.recvOffset + recvByte;
      if (dst != src || dstOffset != srcOffset) {
        MemorySegment.copy(src, srcOffset, dst, dstOffset, bytes);
      }
    }
  }

  // ---- Reduction of one chunk: every rank's input at {@code sendByte} is read, in rank order, into the
  // ---- scratch accumulator of the type's kind; nothing is written until storeChunk.

  private static void reduceChunk(LocalCollective[] calls, long sendByte, int length, KernelScratch s) {
    DataType type = calls[0].type;
    ReduceOp op = calls[0].op;
    int ranks = calls.length;
    switch (type) {
      case F16, BF16, F32 -> {
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
  private static void storeChunk(DataType type, KernelScratch s, MemorySegment to, long offset, int length) {
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
    }
  }
}
