package dev.commplan.bench;

import dev.commplan.bench.Args.UsageException;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The four collectives with nccl-tests' sizes and bandwidth formulas, so that our columns compare one to
 * one with theirs.
 *
 * <p>From NVIDIA/nccl-tests doc/PERFORMANCE.md:
 *
 * <pre>
 *   algbw = S/t
 *   AllReduce:     B = S/t * (2*(n-1)/n) = algbw * (2*(n-1)/n)
 *   ReduceScatter: B = S/t * (n-1)/n = algbw * (n-1)/n
 *                  "S is the size in bytes of the total array, which for NCCL is equal to
 *                   recvcount*sizeof(datatype)*n as the recvcount argument is the count per rank."
 *   AllGather:     B = S/t * (n-1)/n = algbw * (n-1)/n
 *                  "S is the size in bytes of the total array, which for NCCL is equal to
 *                   sendcount*sizeof(datatype)*n as the sendcount argument is the count per rank."
 *   Broadcast:     B = S/t
 * </pre>
 *
 * and from src/*.cu ({@code *GetCollByteCount}, {@code *GetBw}; GB/s are 10^9 bytes a second): for a
 * size {@code size} (bytes) the total element count is {@code count = size / wordSize}; AllGather sends
 * {@code count/n} and receives {@code (count/n)*n}, ReduceScatter sends {@code (count/n)*n} and receives
 * {@code count/n}; NCCL's count argument ("paramcount", the table's count column) is the per-rank count
 * for those two and {@code count} otherwise; the size column is {@code max(sendBytes, recvBytes)}.
 */
enum Coll {
  ALL_REDUCE("all-reduce", "AllReduce"),
  ALL_GATHER("all-gather", "AllGather"),
  REDUCE_SCATTER("reduce-scatter", "ReduceScatter"),
  BROADCAST("broadcast", "Broadcast");

  final String label;
  final String ncclName;

  Coll(String label, String ncclName) {
    this.label = label;
    this.ncclName = ncclName;
  }

  /** NCCL's count argument for a sweep size of {@code totalCount} elements on {@code n} ranks. */
  long paramCount(long totalCount, int n) {
    return switch (this) {
      case ALL_GATHER, REDUCE_SCATTER -> totalCount / n;
      case ALL_REDUCE, BROADCAST -> totalCount;
    };
  }

  /** Elements each rank sends, given NCCL's count. */
  long sendCount(long paramCount, int n) {
    return this == REDUCE_SCATTER ? paramCount * n : paramCount;
  }

  /** Elements each rank receives, given NCCL's count. */
  long recvCount(long paramCount, int n) {
    return this == ALL_GATHER ? paramCount * n : paramCount;
  }

  /** S of PERFORMANCE.md: the bytes algbw counts (the whole array for AllGather and ReduceScatter). */
  long algBytes(long paramCount, int wordSize, int n) {
    long bytes = paramCount * wordSize;
    return this == ALL_GATHER || this == REDUCE_SCATTER ? bytes * n : bytes;
  }

  /** busbw / algbw. */
  double busFactor(int n) {
    return switch (this) {
      case ALL_REDUCE -> 2.0 * (n - 1) / n;
      case ALL_GATHER, REDUCE_SCATTER -> (double) (n - 1) / n;
      case BROADCAST -> 1.0;
    };
  }

  /** algbw in GB/s (10^9 bytes per second), as nccl-tests prints it. */
  double algbw(long paramCount, int wordSize, int n, double seconds) {
    return algBytes(paramCount, wordSize, n) / 1.0e9 / seconds;
  }

  boolean reduces() {
    return this == ALL_REDUCE || this == REDUCE_SCATTER;
  }

  static List<Coll> parseList(String spec) {
    if (spec.equalsIgnoreCase("all")) {
      return List.of(values());
    }
    return Arrays.stream(spec.split(",")).map(s -> parse(s.trim())).toList();
  }

  static Coll parse(String name) {
    String n = name.toLowerCase(Locale.ROOT).replace("_", "-");
    for (Coll c : values()) {
      if (c.label.equals(n) || c.label.replace("-", "").equals(n) || c.ncclName.toLowerCase(Locale.ROOT).equals(n)) {
        return c;
      }
    }
    throw new UsageException(
        "--coll is all or a comma-separated list of all-reduce, all-gather, reduce-scatter, broadcast,"
            + " not '" + name + "'");
  }
}
