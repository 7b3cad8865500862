package dev.commplan.bench;

import dev.commplan.bench.Args.UsageException;
import dev.commplan.model.Collective;
import dev.commplan.model.CountRule;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * A collective of the sweep with nccl-tests' sizes and bandwidth formulas, so that our columns compare one
 * to one with theirs. The collectives are {@link Collective}'s (no list of its own here); Send and Recv
 * are swept together, as nccl-tests' {@code sendrecv_perf} does (a ring: every rank sends to the next
 * and receives from the previous in one group), under the name {@code sendrecv}.
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
 *   Reduce:        B = S/t
 *   AlltoAll:      (n-1)/n
 * </pre>
 *
 * and from src/*.cu ({@code *GetCollByteCount}, {@code *GetBw}; GB/s are 10^9 bytes a second): for a
 * size {@code size} (bytes) the total element count is {@code count = size / wordSize}; AllGather, Gather,
 * ReduceScatter, Scatter and AlltoAll use a per-rank count {@code (count/n) & ~(16/wordSize - 1)} (a
 * multiple of 16 bytes), their NCCL count argument ("paramcount", the table's count column), and S =
 * paramcount·n·wordSize with the factor (n-1)/n (gather.cu, scatter.cu and alltoall.cu as all_gather.cu);
 * AllReduce, Broadcast, Reduce and SendRecv use {@code count}, S = count·wordSize, and the factors 2(n-1)/n,
 * 1, 1 and 1 (sendrecv.cu: {@code factor = 1}); the size column is {@code max(sendBytes, recvBytes)}.
 */
final class Coll {
  static final Coll ALL_REDUCE = new Coll(Collective.ALL_REDUCE);
  static final Coll BROADCAST = new Coll(Collective.BROADCAST);
  static final Coll ALL_GATHER = new Coll(Collective.ALL_GATHER);
  static final Coll REDUCE_SCATTER = new Coll(Collective.REDUCE_SCATTER);
  /** Send and Recv together: nccl-tests' sendrecv. */
  static final Coll SEND_RECV = new Coll(Collective.SEND);

  private static final List<Coll> ALL;

  static {
    List<Coll> all = new ArrayList<>();
    for (Collective c : Collective.values()) {
      if (c == Collective.RECV) {
        continue; // swept with Send, as sendrecv
      }
      all.add(switch (c) {
        case ALL_REDUCE -> ALL_REDUCE;
        case BROADCAST -> BROADCAST;
        case ALL_GATHER -> ALL_GATHER;
        case REDUCE_SCATTER -> REDUCE_SCATTER;
        case SEND -> SEND_RECV;
        default -> new Coll(c);
      });
    }
    ALL = List.copyOf(all);
  }

  /** The model's collective (Send stands for sendrecv). */
  final Collective collective;
  /** Ours: {@code all-reduce}, ..., {@code sendrecv}. */
  final String label;
  /** nccl-tests' name in its output: {@code AllReduce}, {@code AlltoAll}, {@code SendRecv}. */
  final String ncclName;

  private Coll(Collective collective) {
    this.collective = collective;
    boolean sendRecv = collective == Collective.SEND;
    this.label = sendRecv ? "sendrecv" : collective.label();
    this.ncclName = sendRecv ? "SendRecv" : collective.ncclFunction().substring("nccl".length());
  }

  /** Every collective of the sweep, in the model's order. */
  static List<Coll> values() {
    return ALL;
  }

  /** nccl-tests' program for it: {@code all_reduce_perf}, {@code alltoall_perf}, {@code sendrecv_perf}. */
  String perfBinary() {
    return switch (collective) {
      case ALL_TO_ALL -> "alltoall_perf";
      case SEND, RECV -> "sendrecv_perf";
      default -> collective.label().replace('-', '_') + "_perf";
    };
  }

  /** Whether NCCL's count is per rank (a slice per rank on one side or both). */
  private boolean perRank() {
    CountRule rule = collective.counts();
    return !isSendRecv() && (rule.sendCounts(2) > 1 || rule.recvCounts(2) > 1);
  }

  boolean isSendRecv() {
    return collective == Collective.SEND;
  }

  /**
   * NCCL's count argument for a sweep size of {@code totalCount} elements of {@code wordSize} bytes on
   * {@code n} ranks: per rank, a multiple of 16 bytes, for the sliced ones; the whole count otherwise.
   */
  long paramCount(long totalCount, int wordSize, int n) {
    if (!perRank()) {
      return totalCount;
    }
    long alignment = Math.max(1, 16 / wordSize);
    return totalCount / n & ~(alignment - 1);
  }

  /** Elements each rank sends, given NCCL's count. */
  long sendCount(long paramCount, int n) {
    return isSendRecv() ? paramCount : paramCount * collective.counts().sendCounts(n);
  }

  /** Elements each rank receives, given NCCL's count. */
  long recvCount(long paramCount, int n) {
    return isSendRecv() ? paramCount : paramCount * collective.counts().recvCounts(n);
  }

  /** S of PERFORMANCE.md: the bytes algbw counts (the whole array for the per-rank collectives). */
  long algBytes(long paramCount, int wordSize, int n) {
    long bytes = paramCount * wordSize;
    return perRank() ? bytes * n : bytes;
  }

  /** busbw / algbw. */
  double busFactor(int n) {
    return switch (collective) {
      case ALL_REDUCE -> 2.0 * (n - 1) / n;
      case ALL_GATHER, REDUCE_SCATTER, GATHER, SCATTER, ALL_TO_ALL -> (double) (n - 1) / n;
      case BROADCAST, REDUCE, SEND, RECV -> 1.0;
    };
  }

  /** algbw in GB/s (10^9 bytes per second), as nccl-tests prints it. */
  double algbw(long paramCount, int wordSize, int n, double seconds) {
    return algBytes(paramCount, wordSize, n) / 1.0e9 / seconds;
  }

  /** Whether it takes a reduction op. */
  boolean reduces() {
    return collective.hasOp();
  }

  /** Whether it takes a root. */
  boolean rooted() {
    return collective.hasRoot();
  }

  /** Whether it has an in-place form (AllToAll has none; sendrecv's ring would read what it writes). */
  boolean hasInPlace() {
    return !isSendRecv() && collective.inPlace() != dev.commplan.model.InPlace.NOT_ALLOWED;
  }

  static List<Coll> parseList(String spec) {
    if (spec.equalsIgnoreCase("all")) {
      return values();
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
    throw new UsageException("--coll is all or a comma-separated list of "
        + String.join(", ", values().stream().map(c -> c.label).toList()) + ", not '" + name + "'");
  }

  @Override
  public String toString() {
    return label;
  }
}
