package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.conformance.TypedBits;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The reduction kernels around their chunk boundaries ({@link KernelScratch#chunkElements}, which differ
 * by accumulator kind) and the ranks' slice boundaries, which the correctness suite's small counts never
 * reach: for every data type, AllReduce, Reduce (root: the last rank) and ReduceScatter, in place and out
 * of place, on slices just below, at and just above one chunk and beyond two, with counts that the ranks
 * do not divide.
 *
 * <p>The chunking and indexing are what is under test here (the arithmetic of every op is the suite's):
 * MAX on values spread over the type's range, so that a misplaced or skipped element shows, and, for the
 * integer types, SUM with wrapping, both exact, so every element is compared bitwise with a reference
 * computed element by element here. What the collective must write starts as the complement of the
 * expected bits.
 */
class LocalKernelChunkBoundaryTest {
  private record Case(Collective collective, DataType type, ReduceOp op, boolean inPlace, int ranks, long count) {
    int root() {
      return ranks - 1;
    }

    @Override
    public String toString() {
      return collective.label() + " " + type + " " + op + (inPlace ? " in place" : " out of place") + " on " + ranks
          + " ranks, count " + count;
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4})
  void everyTypeAroundChunkAndSliceBoundaries(int ranks) {
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      int cases = 0;
      for (Case c : cases(ranks)) {
        long[][] inputs = new long[ranks][];
        for (int r = 0; r < ranks; r++) {
          inputs[r] = input(c, r);
        }
        long[][] expected = new long[ranks][];
        for (int r = 0; r < ranks; r++) {
          expected[r] = expected(c, inputs, r);
        }
        List<long[]> got = cluster.call(comm -> runOnRank(comm, c, inputs[comm.rank()], expected[comm.rank()]));
        for (int r = 0; r < ranks; r++) {
          long[] want = expected[r];
          assertEquals(want.length, got.get(r).length, c + ", rank " + r + ": result length");
          for (int i = 0; i < want.length; i++) {
            if (want[i] != got.get(r)[i]) {
              assertEquals(Long.toHexString(want[i]), Long.toHexString(got.get(r)[i]), c + ", rank " + r + ", element "
                  + i + " (chunk " + KernelScratch.chunkElements(c.type()) + " elements)");
            }
          }
        }
        cases++;
      }
      assertEquals(cases(ranks).size(), cases);
    }
  }

  /** Every type × op × collective × placement × count around the boundaries, on {@code ranks} ranks. */
  private static List<Case> cases(int ranks) {
    List<Case> cases = new ArrayList<>();
    for (DataType type : DataType.values()) {
      long chunk = KernelScratch.chunkElements(type);
      // AllReduce and Reduce split `count` elements into slices of floor(count/n) and ceil(count/n):
      // n·chunk − 1 gives slices of chunk − 1 and chunk, n·chunk + n − 1 slices of chunk and chunk + 1,
      // n·(2·chunk + 1) + 1 two whole chunks and a short one (and one more element on one rank).
      long[] wholeCounts = {ranks * chunk - 1, ranks * chunk + ranks - 1, ranks * (2 * chunk + 1) + 1};
      // ReduceScatter: each rank's slice is one target's count, cut into chunks.
      long[] perRankCounts = {chunk - 1, chunk, chunk + 1, 2 * chunk + 1};
      List<ReduceOp> ops = type.isFloatingPoint() ? List.of(ReduceOp.MAX) : List.of(ReduceOp.MAX, ReduceOp.SUM);
      for (ReduceOp op : ops) {
        for (boolean inPlace : new boolean[] {false, true}) {
          for (long count : wholeCounts) {
            cases.add(new Case(Collective.ALL_REDUCE, type, op, inPlace, ranks, count));
            cases.add(new Case(Collective.REDUCE, type, op, inPlace, ranks, count));
          }
          for (long count : perRankCounts) {
            cases.add(new Case(Collective.REDUCE_SCATTER, type, op, inPlace, ranks, count));
          }
        }
      }
    }
    return cases;
  }

  /** Runs {@code c} on this rank with {@code input}; returns its receive buffer's bits. */
  private static long[] runOnRank(Communicator comm, Case c, long[] input, long[] expected) {
    int rank = comm.rank();
    int n = comm.size();
    DataType type = c.type();
    long sendCount = c.collective() == Collective.REDUCE_SCATTER ? n * c.count() : c.count();
    try (Buffer send = Buffer.allocate(type, comm, sendCount);
        Buffer separateRecv = c.inPlace() ? null : Buffer.allocate(type, comm, c.count())) {
      TypedBits.write(send, input);
      Buffer recv = separateRecv;
      if (c.inPlace()) {
        recv = c.collective() == Collective.REDUCE_SCATTER
            ? Buffer.view(type, send.memory(), send.byteOffset() + rank * c.count() * type.byteSize(), c.count())
            : send;
      }
      if (!c.inPlace()) {
        // Reduce's other ranks: the expected result is the untouched poison itself.
        boolean untouched = c.collective() == Collective.REDUCE && rank != c.root();
        TypedBits.write(recv, untouched ? expected : poison(type, expected));
      }
      switch (c.collective()) {
        case ALL_REDUCE -> comm.allReduce(send, recv, c.op(), comm.stream());
        case REDUCE -> comm.reduce(send, recv, c.op(), c.root(), comm.stream());
        case REDUCE_SCATTER -> comm.reduceScatter(send, recv, c.op(), comm.stream());
        default -> throw new AssertionError(c);
      }
      comm.stream().synchronize();
      return TypedBits.read(recv);
    }
  }

  /**
   * Rank {@code rank}'s send bits: a hash of rank and index, so no pattern repeats with any chunk's period;
   * floating point: multiples of 1/4 in [-250, 250] rounded to the type (every type holds them finite).
   */
  private static long[] input(Case c, int rank) {
    long sendCount = c.collective() == Collective.REDUCE_SCATTER ? c.ranks() * c.count() : c.count();
    long[] bits = new long[Math.toIntExact(sendCount)];
    DataType type = c.type();
    for (int i = 0; i < bits.length; i++) {
      long h = mix(i * 0x9E3779B97F4A7C15L + rank * 0xC2B2AE3D27D4EB4FL + type.ordinal());
      bits[i] = type.isFloatingPoint()
          ? TypedBits.fromDouble(type, (Math.floorMod(h, 2001) - 1000) * 0.25)
          : h & TypedBits.mask(type);
    }
    return bits;
  }

  /** The complement of {@code result}: what a receive buffer holds before the collective (out of place). */
  private static long[] poison(DataType type, long[] result) {
    long[] poison = new long[result.length];
    for (int i = 0; i < result.length; i++) {
      poison[i] = ~result[i] & TypedBits.mask(type);
    }
    return poison;
  }

  /**
   * What rank {@code rank}'s receive buffer holds after {@code c}, computed element by element from every
   * rank's {@code inputs}. Reduce leaves the other ranks' receive buffers as they were: in place their
   * input, out of place the poison (the complement of the root's result).
   */
  private static long[] expected(Case c, long[][] inputs, int rank) {
    int n = c.ranks();
    int count = Math.toIntExact(c.count());
    long[] out = new long[count];
    if (c.collective() == Collective.REDUCE && rank != c.root()) {
      if (c.inPlace()) {
        System.arraycopy(inputs[rank], 0, out, 0, count);
        return out;
      }
      return poison(c.type(), expected(c, inputs, c.root()));
    }
    int first = c.collective() == Collective.REDUCE_SCATTER ? rank * count : 0;
    for (int i = 0; i < count; i++) {
      long acc = inputs[0][first + i];
      for (int r = 1; r < n; r++) {
        acc = combine(c.type(), c.op(), acc, inputs[r][first + i]);
      }
      out[i] = acc;
    }
    return out;
  }

  /** MAX in the type's order (exact: one of the inputs), or wrapping SUM of integers. */
  private static long combine(DataType type, ReduceOp op, long a, long b) {
    long mask = TypedBits.mask(type);
    if (op == ReduceOp.SUM) {
      return (a + b) & mask;
    }
    boolean bLarger;
    if (type.isFloatingPoint()) {
      bLarger = TypedBits.toDouble(type, b) > TypedBits.toDouble(type, a);
    } else if (type.isUnsigned()) {
      bLarger = Long.compareUnsigned(b, a) > 0;
    } else {
      int shift = 64 - 8 * type.byteSize();
      bLarger = (b << shift >> shift) > (a << shift >> shift);
    }
    return bLarger ? b : a;
  }

  /** Murmur3's 64-bit finalizer. */
  private static long mix(long z) {
    z = (z ^ (z >>> 33)) * 0xFF51AFD7ED558CCDL;
    z = (z ^ (z >>> 33)) * 0xC4CEB53CA87A4E63L;
    return z ^ (z >>> 33);
  }
}
