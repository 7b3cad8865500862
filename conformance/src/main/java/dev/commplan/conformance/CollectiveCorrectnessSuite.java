package dev.commplan.conformance;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.U8Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicContainer;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * The collectives' correctness, for any backend: subclass it and name the backend ({@link #backend()}); the
 * hooks of {@link BackendSuite} say what else differs (the world sizes, the types, the precision of its
 * reductions), and {@link #counts(Case)} may add element counts (NCCL adds its chunk boundaries).
 *
 * <p>The matrix: each collective but Send and Recv ({@link PointToPointSuite}) × every data type × every
 * op (AllReduce, ReduceScatter, Reduce) and root 0 and the last rank (Broadcast, Reduce, Gather, Scatter)
 * × in place and out of place (AllToAll: out of place only) × every world size × the element counts of
 * {@link #counts()} (odd, so that slices of the work do not divide evenly). Reduce and Gather must leave
 * the other ranks' receive buffers untouched (poisoned before, checked after); fp8 inputs are chosen to
 * stay far from overflow. Every case uses fresh random
 * data seeded by the case, fills what should be overwritten with a poison that differs from the expected
 * result, computes the expected result independently ({@link CollectiveReference}), and checks every
 * rank against it, and every rank's result bitwise against rank 0's where they must be equal.
 *
 * <p>It also runs built plans (coalesced calls, in-place slices, steps that read earlier steps) through
 * {@code Communicator.compile}, which is backend code too.
 *
 * <p>The per-case logic is also public and static ({@link #allCases}, {@link #expected}, {@link
 * #runOnRank}, {@link #checkRank}, {@link #runPlanOnRank}), so that a backend whose ranks are separate
 * processes runs the same cases, each process on its own rank ({@link ProcessConformance}).
 */
public abstract class CollectiveCorrectnessSuite extends BackendSuite {
  /** For subclasses. */
  protected CollectiveCorrectnessSuite() {}

  /**
   * {@return the per-rank element counts to test (the call's count, {@link
   * dev.commplan.model.CountRule#ncclCount(long, long, long)})} Odd, so that slicing bugs show. The default:
   * {@link #DEFAULT_COUNTS}.
   */
  protected long[] counts() {
    return DEFAULT_COUNTS.clone();
  }

  /**
   * The per-rank element counts of case {@code c}: {@link #counts()} unless a backend adds some (NCCL: its
   * chunk boundaries).
   *
   * @param c the case
   * @return its counts
   */
  protected long[] counts(Case c) {
    return counts();
  }

  /** The default per-rank element counts. */
  public static final long[] DEFAULT_COUNTS = {1, 7, 1003};

  /**
   * One collective as a test case: what to call, on how many ranks.
   *
   * @param collective the collective; not a send or receive
   * @param type the data type of both sides
   * @param op the reduction, or null for a collective without one
   * @param root the root of a rooted collective, or -1
   * @param inPlace whether the receive side is the send side (at the collective's in-place offsets)
   * @param ranks the world size
   */
  public record Case(Collective collective, DataType type, ReduceOp op, int root, boolean inPlace, int ranks) {
    @Override
    public String toString() {
      return collective.label() + " " + type + (op != null ? " " + op : "")
          + (collective.hasRoot() ? " root " + root : "") + (inPlace ? " in place" : " out of place")
          + " on " + ranks + " ranks";
    }

    /**
     * The seed of {@code rank}'s random input for {@code count}.
     *
     * @param count the per-rank element count
     * @param rank the rank
     * @return the seed, different for every case, count and rank
     */
    public long seed(long count, int rank) {
      return ((((long) collective.ordinal() * 31 + type.ordinal()) * 31 + (op == null ? 7 : op.ordinal())) * 31
          + root) * 1_000_003L + (inPlace ? 17 : 0) + ranks * 7919L + count * 104_729L + rank;
    }
  }

  @TestFactory
  Stream<DynamicNode> allReduce() {
    return matrix(Collective.ALL_REDUCE);
  }

  @TestFactory
  Stream<DynamicNode> reduceScatter() {
    return matrix(Collective.REDUCE_SCATTER);
  }

  @TestFactory
  Stream<DynamicNode> allGather() {
    return matrix(Collective.ALL_GATHER);
  }

  @TestFactory
  Stream<DynamicNode> broadcast() {
    return matrix(Collective.BROADCAST);
  }

  @TestFactory
  Stream<DynamicNode> reduce() {
    return matrix(Collective.REDUCE);
  }

  @TestFactory
  Stream<DynamicNode> gather() {
    return matrix(Collective.GATHER);
  }

  @TestFactory
  Stream<DynamicNode> scatter() {
    return matrix(Collective.SCATTER);
  }

  @TestFactory
  Stream<DynamicNode> allToAll() {
    return matrix(Collective.ALL_TO_ALL);
  }

  /** {@return the collectives of the matrix: every one but Send and Recv ({@link PointToPointSuite} has those)} */
  public static List<Collective> collectives() {
    return Arrays.stream(Collective.values()).filter(c -> !c.pointToPoint()).toList();
  }

  /**
   * Whether every rank receives the same result (then compared bitwise with rank 0's).
   *
   * @param c a collective
   * @return true for AllReduce, Broadcast and AllGather
   */
  public static boolean sameOnEveryRank(Collective c) {
    return c == Collective.ALL_REDUCE || c == Collective.BROADCAST || c == Collective.ALL_GATHER;
  }

  private Stream<DynamicNode> matrix(Collective collective) {
    return Arrays.stream(worldSizes()).mapToObj(ranks -> DynamicContainer.dynamicContainer(
        ranks + " ranks",
        Arrays.stream(DataType.values()).filter(this::supports).map(type -> DynamicContainer.dynamicContainer(
            type.toString(), cases(collective, type, ranks).stream().map(c -> DynamicTest.dynamicTest(
                c.toString(), () -> runCase(c)))))));
  }

  /**
   * Every case of the matrix on {@code ranks} ranks: each collective × type × op or root × in/out of place.
   *
   * @param ranks the world size
   * @return the cases, every type's
   */
  public static List<Case> allCases(int ranks) {
    List<Case> all = new ArrayList<>();
    for (Collective collective : collectives()) {
      for (DataType type : DataType.values()) {
        all.addAll(cases(collective, type, ranks));
      }
    }
    return all;
  }

  /**
   * The ops a reduction of {@code type} is offered with: every one, but AVG on fp8 ({@code
   * [CommPlan/Fp8Average]}, refused on every backend, before the backend sees the call).
   *
   * @param type a data type
   * @return its ops
   */
  public static List<ReduceOp> ops(DataType type) {
    return Arrays.stream(ReduceOp.values()).filter(op -> !(op == ReduceOp.AVG && type.isFloat8())).toList();
  }

  /**
   * The cases of one collective and type on {@code ranks} ranks.
   *
   * @param collective a collective; not a send or receive
   * @param type a data type
   * @param ranks the world size
   * @return each op or root, in and out of place (AllToAll: out of place only)
   */
  public static List<Case> cases(Collective collective, DataType type, int ranks) {
    List<Case> cases = new ArrayList<>();
    for (boolean inPlace : new boolean[] {false, true}) {
      switch (collective) {
        case ALL_REDUCE, REDUCE_SCATTER -> {
          for (ReduceOp op : ops(type)) {
            cases.add(new Case(collective, type, op, -1, inPlace, ranks));
          }
        }
        case BROADCAST, GATHER, SCATTER -> {
          cases.add(new Case(collective, type, null, 0, inPlace, ranks));
          if (ranks > 1) {
            cases.add(new Case(collective, type, null, ranks - 1, inPlace, ranks));
          }
        }
        case REDUCE -> {
          for (ReduceOp op : ops(type)) {
            cases.add(new Case(collective, type, op, 0, inPlace, ranks));
            if (ranks > 1) {
              cases.add(new Case(collective, type, op, ranks - 1, inPlace, ranks));
            }
          }
        }
        case ALL_GATHER -> cases.add(new Case(collective, type, null, -1, inPlace, ranks));
        case ALL_TO_ALL -> {
          if (!inPlace) { // out of place only
            cases.add(new Case(collective, type, null, -1, false, ranks));
          }
        }
        case SEND, RECV -> throw new IllegalArgumentException(collective + ": see PointToPointSuite");
      }
    }
    return cases;
  }

  // ---- One case ---------------------------------------------------------------------------------

  private void runCase(Case c) {
    for (long count : counts(c)) {
      int n = c.ranks();
      long[][] inputs = new long[n][];
      for (int r = 0; r < n; r++) {
        inputs[r] = randomInputs(c, count, r);
      }
      Expected expected = expected(c, count, inputs, accumulationRoundoff(c.type()));
      List<long[]> results = clusterOf(n).call(comm -> runOnRank(comm, c, count, inputs[comm.rank()], expected));
      check(c, count, expected, results);
    }
  }

  /**
   * The expected results of {@code c} for {@code count} on every rank, from every rank's seeded input.
   *
   * @param c the case
   * @param count the per-rank element count
   * @param roundoff the unit roundoff of the backend's floating-point reductions ({@link
   *     BackendSuite#accumulationRoundoff})
   * @return every rank's expected result
   */
  public static Expected expected(Case c, long count, double roundoff) {
    long[][] inputs = new long[c.ranks()][];
    for (int r = 0; r < c.ranks(); r++) {
      inputs[r] = randomInputs(c, count, r);
    }
    return expected(c, count, inputs, roundoff);
  }

  /**
   * Runs {@code c} on {@code comm}'s rank with its seeded input (every rank of {@code comm} calls it).
   *
   * @param comm this rank's communicator, of {@code c.ranks()} ranks
   * @param c the case
   * @param count the per-rank element count
   * @param expected the expected results ({@link #expected(Case, long, double)}), for the poison
   * @return what the rank received, as bit patterns
   */
  public static long[] runOnRank(Communicator comm, Case c, long count, Expected expected) {
    return runOnRank(comm, c, count, randomInputs(c, count, comm.rank()), expected);
  }

  /**
   * Runs {@code c} on {@code comm}'s rank with {@code input} (every rank of {@code comm} calls it).
   *
   * @param comm this rank's communicator, of {@code c.ranks()} ranks
   * @param c the case
   * @param count the per-rank element count
   * @param input this rank's send side, as bit patterns
   * @param expected the expected results, for the poison
   * @return what the rank received, as bit patterns
   */
  public static long[] runOnRank(Communicator comm, Case c, long count, long[] input, Expected expected) {
    int rank = comm.rank();
    int n = comm.size();
    DataType type = c.type();
    long size = type.byteSize();
    List<Buffer> owned = new ArrayList<>();
    try {
      Buffer send;
      Buffer recv;
      switch (c.collective()) {
        case ALL_REDUCE, BROADCAST, REDUCE -> {
          send = allocate(owned, type, comm, count);
          TypedBits.write(send, input);
          recv = c.inPlace() ? send : allocate(owned, type, comm, count);
        }
        case ALL_GATHER, GATHER -> {
          recv = allocate(owned, type, comm, n * count);
          send = c.inPlace()
              ? Buffer.view(type, recv.memory(), recv.byteOffset() + rank * count * size, count)
              : allocate(owned, type, comm, count);
        }
        case REDUCE_SCATTER, SCATTER -> {
          send = allocate(owned, type, comm, n * count);
          TypedBits.write(send, input);
          recv = c.inPlace()
              ? Buffer.view(type, send.memory(), send.byteOffset() + rank * count * size, count)
              : allocate(owned, type, comm, count);
        }
        case ALL_TO_ALL -> {
          send = allocate(owned, type, comm, n * count);
          TypedBits.write(send, input);
          recv = allocate(owned, type, comm, n * count);
        }
        default -> throw new AssertionError(c);
      }
      boolean gathers = c.collective() == Collective.ALL_GATHER || c.collective() == Collective.GATHER;
      if (!c.inPlace() || gathers) {
        // Everything the collective must write starts out wrong, so an element it skips shows.
        TypedBits.write(recv, expected.poison(rank, type));
      }
      if (gathers) {
        TypedBits.write(send, input); // in place, this is the rank-th slice of the poisoned recv
      }
      dev.commplan.runtime.Stream stream = comm.stream();
      switch (c.collective()) {
        case ALL_REDUCE -> comm.allReduce(send, recv, c.op(), stream);
        case BROADCAST -> comm.broadcast(send, recv, c.root(), stream);
        case ALL_GATHER -> comm.allGather(send, recv, stream);
        case REDUCE_SCATTER -> comm.reduceScatter(send, recv, c.op(), stream);
        case REDUCE -> comm.reduce(send, recv, c.op(), c.root(), stream);
        case GATHER -> comm.gather(send, recv, c.root(), stream);
        case SCATTER -> comm.scatter(send, recv, c.root(), stream);
        case ALL_TO_ALL -> comm.allToAll(send, recv, stream);
        default -> throw new AssertionError(c);
      }
      comm.stream().synchronize();
      return TypedBits.read(recv);
    } finally {
      owned.forEach(Buffer::close);
    }
  }

  private static Buffer allocate(List<Buffer> owned, DataType type, Communicator comm, long length) {
    Buffer buffer = Buffer.allocate(type, comm, length);
    owned.add(buffer);
    return buffer;
  }

  // ---- Inputs -----------------------------------------------------------------------------------

  /** Random inputs (send side: count elements, or ranks × count for ReduceScatter), never all zero. */
  private static long[] randomInputs(Case c, long count, int rank) {
    return randomInputs(c, count, rank, 0);
  }

  /**
   * {@code rank}'s random input for {@code c} and {@code count}, different for every {@code salt} (0: the
   * matrix's own): captured plans are launched again and again on fresh inputs.
   *
   * @param c the case
   * @param count the per-rank element count
   * @param rank the rank
   * @param salt 0 for the matrix's input, another number for another
   * @return the rank's send side, as bit patterns, never all zero
   */
  public static long[] randomInputs(Case c, long count, int rank, long salt) {
    int length = Math.toIntExact(c.collective().counts().sendCounts(c.ranks()) * count);
    SplittableRandom random = new SplittableRandom(c.seed(count, rank) + salt * 0x9E3779B97F4A7C15L);
    long[] bits = new long[length];
    DataType type = c.type();
    for (int i = 0; i < length; i++) {
      bits[i] = type.isFloatingPoint() ? randomFloat(type, c.op(), random) : randomInteger(type, c.op(), random);
    }
    return bits;
  }

  private static long randomFloat(DataType type, ReduceOp op, SplittableRandom random) {
    if (type.isFloat8()) {
      return randomFloat8(type, op, random);
    }
    double value;
    if (op == ReduceOp.PROD) {
      // Magnitudes in [0.5, 2): a product over 8 ranks stays within [2^-8, 2^8], far from over- and underflow.
      value = random.nextDouble(0.5, 2.0) * (random.nextBoolean() ? 1 : -1);
    } else if (op == ReduceOp.SUM || op == ReduceOp.AVG) {
      value = random.nextDouble(-8, 8);
    } else {
      value = random.nextDouble(-1000, 1000);
    }
    return TypedBits.fromDouble(type, value);
  }

  /**
   * fp8 inputs, exactly representable (they are bit patterns of the type) and far from overflow: PROD
   * takes ±0.5, ±1 or ±2, so that products over 8 ranks are powers of two the type holds exactly; SUM and
   * AVG values in [-2, 2]; MIN and MAX across most of the finite range below the poison.
   */
  private static long randomFloat8(DataType type, ReduceOp op, SplittableRandom random) {
    double value;
    if (op == ReduceOp.PROD) {
      value = (random.nextBoolean() ? 1 : -1) * Math.scalb(1.0, random.nextInt(-1, 2));
    } else if (op == ReduceOp.SUM || op == ReduceOp.AVG) {
      value = random.nextDouble(-2, 2);
    } else {
      value = random.nextDouble(-1, 1) * (type == DataType.F8E4M3 ? 240 : 24000);
    }
    return TypedBits.fromDouble(type, value);
  }

  private static long randomInteger(DataType type, ReduceOp op, SplittableRandom random) {
    if (op == ReduceOp.PROD) {
      // Small non-zero factors: products over several ranks still wrap in 8 bits, and do not collapse to 0.
      long factor = random.nextLong(1, 8);
      return (type.isUnsigned() || random.nextBoolean() ? factor : -factor) & TypedBits.mask(type);
    }
    // Full range: exercises wrapping (SUM, AVG) and signed versus unsigned comparison (MAX, MIN).
    return random.nextLong() & TypedBits.mask(type);
  }

  // ---- Expected results -------------------------------------------------------------------------

  /**
   * Per rank: either the exact bits ({@code exactBits}) or, for floating-point SUM, PROD and AVG, the
   * exact value and the tolerance.
   *
   * @param exactBits per rank, the result's bit patterns; null where the result has a tolerance
   * @param values per rank, the exact values; null where the bits are exact
   * @param tolerances per rank and element, how far from the value a right result may be; null with the values
   * @param poisonBits per rank, the fixed poison of a receive side that must stay untouched, or null
   */
  public record Expected(long[][] exactBits, double[][] values, double[][] tolerances, long[][] poisonBits) {
    /**
     * Without explicit poison: {@link #poison} derives it from the expected result.
     *
     * @param exactBits per rank, the result's bit patterns; null where the result has a tolerance
     * @param values per rank, the exact values; null where the bits are exact
     * @param tolerances per rank and element, the tolerances; null with the values
     */
    public Expected(long[][] exactBits, double[][] values, double[][] tolerances) {
      this(exactBits, values, tolerances, null);
    }

    /**
     * What a receive buffer is filled with before the collective: differs from every element the
     * collective writes. Where a rank's receive buffer must stay untouched (Reduce's and Gather's on the
     * ranks but the root), it is a fixed pattern, and the expected result is that same pattern.
     *
     * @param rank the rank
     * @param type the data type
     * @return the poison, as bit patterns, one per element of the rank's receive side
     */
    public long[] poison(int rank, DataType type) {
      if (poisonBits != null && poisonBits[rank] != null) {
        return poisonBits[rank].clone();
      }
      int length = exactBits != null ? exactBits[rank].length : values[rank].length;
      long[] poison = new long[length];
      for (int i = 0; i < length; i++) {
        // Integers: the expected bits with the low byte flipped (different for certain). Floating point: a value
        // far outside every case's range of results, finite, so that it fails the tolerance check.
        poison[i] = type.isFloatingPoint()
            ? floatPoison(type)
            : exactBits[rank][i] ^ 0x5A;
      }
      return poison;
    }
  }

  /** A finite value of {@code type} far outside every case's results: 12345.6, or 416 (E4M3), 49152 (E5M2). */
  static long floatPoison(DataType type) {
    return TypedBits.fromDouble(type, switch (type) {
      case F8E4M3 -> 416;
      case F8E5M2 -> 49152;
      default -> 12345.6;
    });
  }

  /** The fixed poison of a receive buffer that must stay untouched (see {@link Expected#poison}). */
  private static long[] untouched(DataType type, int rank, int length) {
    long[] p = new long[length];
    for (int i = 0; i < length; i++) {
      p[i] = type.isFloatingPoint() ? floatPoison(type) : ((i * 0x9E3779B97F4A7C15L + rank * 31L) ^ 0xA5) & TypedBits.mask(type);
    }
    return p;
  }

  /**
   * The expected results of {@code c} for {@code count} on every rank, from every rank's input.
   *
   * @param c the case
   * @param count the per-rank element count
   * @param inputs every rank's send side, as bit patterns
   * @param roundoff the unit roundoff of the backend's floating-point reductions
   * @return every rank's expected result
   */
  public static Expected expected(Case c, long count, long[][] inputs, double roundoff) {
    int n = c.ranks();
    int perRank = Math.toIntExact(count);
    DataType type = c.type();
    switch (c.collective()) {
      case BROADCAST -> {
        long[][] bits = new long[n][];
        Arrays.fill(bits, inputs[c.root()]);
        return new Expected(bits, null, null);
      }
      case ALL_GATHER, GATHER -> {
        long[] gathered = new long[n * perRank];
        for (int r = 0; r < n; r++) {
          System.arraycopy(inputs[r], 0, gathered, r * perRank, perRank);
        }
        long[][] bits = new long[n][];
        Arrays.fill(bits, gathered);
        if (c.collective() == Collective.ALL_GATHER) {
          return new Expected(bits, null, null);
        }
        long[][] poison = new long[n][];
        for (int r = 0; r < n; r++) {
          if (r != c.root()) { // untouched: the poison, and in place the rank's own slice, its input
            poison[r] = untouched(type, r, n * perRank);
            bits[r] = poison[r].clone();
            if (c.inPlace()) {
              System.arraycopy(inputs[r], 0, bits[r], r * perRank, perRank);
            }
          }
        }
        return new Expected(bits, null, null, poison);
      }
      case SCATTER -> {
        long[][] bits = new long[n][];
        for (int r = 0; r < n; r++) {
          bits[r] = Arrays.copyOfRange(inputs[c.root()], r * perRank, (r + 1) * perRank);
        }
        return new Expected(bits, null, null);
      }
      case ALL_TO_ALL -> {
        long[][] bits = new long[n][n * perRank];
        for (int t = 0; t < n; t++) {
          for (int from = 0; from < n; from++) {
            System.arraycopy(inputs[from], t * perRank, bits[t], from * perRank, perRank);
          }
        }
        return new Expected(bits, null, null);
      }
      default -> {}
    }
    // ALL_REDUCE and REDUCE: the reduction of element i; REDUCE_SCATTER: rank k gets element k·count + i.
    boolean scatter = c.collective() == Collective.REDUCE_SCATTER;
    boolean exact = !type.isFloatingPoint() || c.op() == ReduceOp.MAX || c.op() == ReduceOp.MIN;
    // AllReduce and Reduce give every rank the same reduction: computed once (the reference is exact, so slow),
    // each rank's expected result the same arrays, which nothing writes afterwards (Reduce's other ranks get their own).
    int computed = scatter ? n : 1;
    long[][] bits = new long[n][];
    double[][] values = new double[n][];
    double[][] tolerances = new double[n][];
    for (int target = 0; target < computed; target++) {
      bits[target] = new long[perRank];
      values[target] = new double[perRank];
      tolerances[target] = new double[perRank];
    }
    for (int target = computed; target < n; target++) {
      bits[target] = bits[0];
      values[target] = values[0];
      tolerances[target] = tolerances[0];
    }
    long[] column = new long[n];
    double[] floats = new double[n];
    for (int target = 0; target < computed; target++) {
      for (int i = 0; i < perRank; i++) {
        int at = scatter ? target * perRank + i : i;
        for (int r = 0; r < n; r++) {
          column[r] = inputs[r][at];
        }
        if (!type.isFloatingPoint()) {
          bits[target][i] = CollectiveReference.reduceIntegers(type, c.op(), column);
        } else {
          for (int r = 0; r < n; r++) {
            floats[r] = TypedBits.toDouble(type, column[r]);
          }
          double value = CollectiveReference.exactFloat(c.op(), floats);
          bits[target][i] = TypedBits.fromDouble(type, value); // exact for MAX and MIN
          values[target][i] = value;
          tolerances[target][i] = CollectiveReference.tolerance(type, c.op(), floats, value, roundoff);
        }
      }
    }
    long[][] poison = null;
    if (c.collective() == Collective.REDUCE) {
      // Only the root is written; elsewhere the receive buffer keeps its poison, or in place the rank's input.
      poison = new long[n][];
      for (int r = 0; r < n; r++) {
        if (r == c.root()) {
          continue;
        }
        poison[r] = untouched(type, r, perRank);
        bits[r] = c.inPlace() ? inputs[r].clone() : poison[r].clone();
        values[r] = new double[perRank];
        tolerances[r] = new double[perRank];
        for (int i = 0; i < perRank; i++) {
          values[r][i] = type.isFloatingPoint() ? TypedBits.toDouble(type, bits[r][i]) : 0;
          tolerances[r][i] = 0;
        }
      }
    }
    return exact ? new Expected(bits, null, null, poison) : new Expected(null, values, tolerances, poison);
  }

  private static void check(Case c, long count, Expected expected, List<long[]> results) {
    for (int rank = 0; rank < c.ranks(); rank++) {
      long[] got = results.get(rank);
      String failure = checkRank(c, count, expected, rank, got);
      if (failure != null) {
        fail(failure);
      }
      if (sameOnEveryRank(c.collective())) {
        assertArrayEquals(results.get(0), got, c + ", count " + count + ", rank " + rank
            + ": not bitwise equal to rank 0's result");
      }
    }
  }

  /**
   * Checks one rank's result against the expected one: null when right, else what is wrong. (That every
   * rank's result is bitwise rank 0's where it must be, {@link #sameOnEveryRank}, is checked by the caller,
   * who has them all.)
   *
   * @param c the case
   * @param count the per-rank element count
   * @param expected the expected results
   * @param rank the rank
   * @param got what the rank received, as bit patterns
   * @return null when right, else what is wrong, naming the case, count, rank and element
   */
  public static String checkRank(Case c, long count, Expected expected, int rank, long[] got) {
    String where = c + ", count " + count + ", rank " + rank;
    if (expected.exactBits() != null) {
      long[] want = expected.exactBits()[rank];
      for (int i = 0; i < Math.min(want.length, got.length); i++) {
        if (got[i] != want[i]) {
          return where + ": element " + i + " is 0x" + Long.toHexString(got[i]) + " (" + show(c.type(), got[i])
              + "), expected 0x" + Long.toHexString(want[i]) + " (" + show(c.type(), want[i]) + ")";
        }
      }
      if (want.length != got.length) {
        return where + ": result length " + got.length + ", expected " + want.length;
      }
    } else {
      double[] want = expected.values()[rank];
      if (want.length != got.length) {
        return where + ": result length " + got.length + ", expected " + want.length;
      }
      for (int i = 0; i < want.length; i++) {
        double value = TypedBits.toDouble(c.type(), got[i]);
        double tolerance = expected.tolerances()[rank][i];
        if (!(Math.abs(value - want[i]) <= tolerance)) {
          return where + ": element " + i + " is " + value + ", expected " + want[i] + " ± " + tolerance;
        }
      }
    }
    return null;
  }

  private static String show(DataType type, long bits) {
    return type.isFloatingPoint()
        ? Double.toString(TypedBits.toDouble(type, bits))
        : CollectiveReference.integerValue(type, bits).toString();
  }

  // ---- Plans through the backend's compiled schedules -------------------------------------------

  @TestFactory
  Stream<DynamicNode> plans() {
    return Arrays.stream(worldSizes()).mapToObj(ranks -> DynamicTest.dynamicTest(
        "a plan of coalesced, in-place and multi-step collectives on " + ranks + " ranks",
        () -> runPlan(ranks)));
  }

  @TestFactory
  Stream<DynamicNode> newCollectivesPlans() {
    return Arrays.stream(worldSizes()).mapToObj(ranks -> DynamicTest.dynamicTest(
        "a plan of Reduce (coalesced), Gather, Scatter and AllToAll over two steps on " + ranks + " ranks",
        () -> {
          for (String failure : clusterOf(ranks).call(CollectiveCorrectnessSuite::runNewCollectivesPlanOnRank)) {
            assertEquals("", failure);
          }
        }));
  }

  /**
   * Builds and runs, on {@code comm}'s rank (every rank must call it), a plan of the collectives of issue
   * 17: step 0 reduces a and b (SUM, in place, root n-1: one coalesced call), gathers part into all
   * (root 0, out of place), scatters whole in place (root 0, U8), and exchanges x into y (AllToAll, F64);
   * step 1 reduces (MAX, root 0, out of place) what step 0's AllToAll wrote into ymax.
   *
   * @param comm this rank's communicator
   * @return "" when every result is right (the ranks but the root untouched), else what is wrong
   */
  public static String runNewCollectivesPlanOnRank(Communicator comm) {
    int n = comm.size();
    int r = comm.rank();
    PlanBuilder b = new PlanBuilder("suite.NewCollectives", comm, 0);
    int a = b.buffer("a", DataType.F32, 3, "{\"3\"}", null);
    int bb = b.buffer("b", DataType.F32, 2, "{\"2\"}", null);
    int part = b.buffer("part", DataType.I32, 2, "{\"2\"}", null);
    int all = b.buffer("all", DataType.I32, 2L * n, "{\"ranks\", \"2\"}", null);
    int whole = b.buffer("whole", DataType.U8, 3L * n, "{\"ranks\", \"3\"}", null);
    int x = b.buffer("x", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
    int y = b.buffer("y", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
    int ymax = b.buffer("ymax", DataType.F64, 2L * n, "{\"ranks\", \"2\"}", null);
    b.collective(0, Collective.REDUCE, a, a, ReduceOp.SUM, n - 1);
    b.collective(0, Collective.REDUCE, bb, bb, ReduceOp.SUM, n - 1);
    b.collective(0, Collective.GATHER, part, all, null, 0);
    b.collective(0, Collective.SCATTER, whole, whole, null, 0);
    b.collective(0, Collective.ALL_TO_ALL, x, y, null, -1);
    b.collective(1, Collective.REDUCE, y, ymax, ReduceOp.MAX, 0);
    List<String> wrong = new ArrayList<>();
    try (Plan plan = b.build()) {
      if (plan.schedule().steps().getFirst().calls().getFirst().fields().size() != 2) {
        wrong.add("a and b were not coalesced: " + plan.describe());
      }
      ((F32Buffer) plan.buffer(a)).copyFrom(new float[] {r, 1, 2 * r});
      ((F32Buffer) plan.buffer(bb)).copyFrom(new float[] {5, r});
      ((I32Buffer) plan.buffer(part)).copyFrom(new int[] {10 * r, 10 * r + 1});
      ((I32Buffer) plan.buffer(all)).fill(-9);
      U8Buffer pw = (U8Buffer) plan.buffer(whole);
      for (int i = 0; i < 3 * n; i++) {
        pw.set(i, (byte) (r == 0 ? i + 1 : 200 + r)); // only root 0's matters
      }
      F64Buffer px = (F64Buffer) plan.buffer(x);
      for (int i = 0; i < 2 * n; i++) {
        px.set(i, 1000 * r + i); // slice j (elements 2j, 2j+1) goes to rank j
      }
      ((F64Buffer) plan.buffer(ymax)).fill(-1);
      plan.execute(comm.stream());
      comm.stream().synchronize();
      double sumR = n * (n - 1) / 2.0;
      boolean last = r == n - 1;
      expect(wrong, "a", toDoubles(((F32Buffer) plan.buffer(a)).toArray()),
          last ? new double[] {sumR, n, 2 * sumR} : new double[] {r, 1, 2 * r});
      expect(wrong, "b", toDoubles(((F32Buffer) plan.buffer(bb)).toArray()),
          last ? new double[] {5 * n, sumR} : new double[] {5, r});
      int[] wantAll = new int[2 * n];
      for (int k = 0; k < n; k++) {
        wantAll[2 * k] = r == 0 ? 10 * k : -9;
        wantAll[2 * k + 1] = r == 0 ? 10 * k + 1 : -9;
      }
      if (!Arrays.equals(((I32Buffer) plan.buffer(all)).toArray(), wantAll)) {
        wrong.add("all " + Arrays.toString(((I32Buffer) plan.buffer(all)).toArray()) + " != " + Arrays.toString(wantAll));
      }
      for (int i = 0; i < 3 * n; i++) { // in place: this rank's slice has root 0's slice r; the rest is untouched
        int want = i / 3 == r ? i + 1 : (r == 0 ? i + 1 : 200 + r);
        if (pw.getUnsigned(i) != want) {
          wrong.add("whole[" + i + "] = " + pw.getUnsigned(i) + ", expected " + want);
        }
      }
      double[] wantY = new double[2 * n];
      double[] wantMax = new double[2 * n];
      for (int k = 0; k < n; k++) { // slice k of y comes from rank k: its elements 2r, 2r+1
        wantY[2 * k] = 1000 * k + 2 * r;
        wantY[2 * k + 1] = 1000 * k + 2 * r + 1;
      }
      for (int i = 0; i < 2 * n; i++) { // max over ranks q of y_q[i] = 1000·(i / 2) + 2q + i % 2
        wantMax[i] = r == 0 ? 1000 * (i / 2) + 2 * (n - 1) + i % 2 : -1;
      }
      expect(wrong, "y", ((F64Buffer) plan.buffer(y)).toArray(), wantY);
      expect(wrong, "ymax", ((F64Buffer) plan.buffer(ymax)).toArray(), wantMax);
    }
    return wrong.isEmpty() ? "" : "rank " + r + ": " + wrong;
  }

  private static double[] toDoubles(float[] values) {
    double[] d = new double[values.length];
    for (int i = 0; i < values.length; i++) {
      d[i] = values[i];
    }
    return d;
  }

  /**
   * Step 0: three AllReduce SUM fields (coalesced into one call), an in-place AllGather, an
   * out-of-place ReduceScatter MAX; step 1: a Broadcast of what step 0's AllReduce wrote.
   */
  private void runPlan(int ranks) {
    List<String> failures = clusterOf(ranks).call(CollectiveCorrectnessSuite::runPlanOnRank);
    for (String failure : failures) {
      assertEquals("", failure);
    }
  }

  /**
   * Builds and runs the mixed plan on {@code comm}'s rank (every rank must call it): step 0's three
   * AllReduce SUM fields (coalesced into one call), an in-place AllGather and an out-of-place ReduceScatter
   * MAX; step 1's Broadcast of what step 0's AllReduce wrote; executed twice.
   *
   * @param comm this rank's communicator
   * @return "" when its results are right, else what is wrong
   */
  public static String runPlanOnRank(Communicator comm) {
    {
      int n = comm.size();
      int r = comm.rank();
      PlanBuilder b = new PlanBuilder("suite.Mixed", comm, 0);
      int a = b.buffer("a", DataType.F64, 3, "{\"3\"}", null);
      int bb = b.buffer("b", DataType.F64, 5, "{\"5\"}", null);
      int cc = b.buffer("c", DataType.F64, 1, "{\"1\"}", null);
      int gathered = b.buffer("gathered", DataType.I32, 2L * n, "{\"ranks\", \"2\"}", null);
      int parts = b.buffer("parts", DataType.U8, 3L * n, "{\"ranks\", \"3\"}", null);
      int slice = b.buffer("slice", DataType.U8, 3, "{\"3\"}", null);
      int copy = b.buffer("copy", DataType.F64, 5, "{\"5\"}", null);
      b.allReduce(0, a, a, ReduceOp.SUM);
      b.allReduce(0, bb, bb, ReduceOp.SUM);
      b.allReduce(0, cc, cc, ReduceOp.SUM);
      b.allGather(0, gathered, gathered);
      b.reduceScatter(0, parts, slice, ReduceOp.MAX);
      b.broadcast(1, bb, copy, n - 1);
      try (Plan plan = b.build()) {
        F64Buffer pa = (F64Buffer) plan.buffer(a);
        F64Buffer pb = (F64Buffer) plan.buffer(bb);
        F64Buffer pc = (F64Buffer) plan.buffer(cc);
        I32Buffer pg = (I32Buffer) plan.buffer(gathered);
        U8Buffer pp = (U8Buffer) plan.buffer(parts);
        pa.copyFrom(new double[] {r, 2 * r, 3 * r});
        pb.copyFrom(new double[] {1, 2, 3, 4, r});
        pc.set(0, 10 + r);
        pg.fill(-1);
        pg.set(2L * r, 100 * r);
        pg.set(2L * r + 1, 100 * r + 1);
        for (int i = 0; i < 3 * n; i++) {
          pp.setUnsigned(i, (i * 37 + r * 101) % 256);
        }
        ((F64Buffer) plan.buffer(copy)).fill(-7);
        plan.execute(comm.stream());
        plan.execute(comm.stream()); // a plan runs any number of times; the second run reduces the first's output
        comm.stream().synchronize();
        List<String> wrong = new ArrayList<>();
        double sumR = n * (n - 1) / 2.0;
        // a = sum over ranks, twice: n · (sum over ranks of r·k)
        expect(wrong, "a", pa.toArray(), new double[] {n * sumR, 2 * n * sumR, 3 * n * sumR});
        double[] b2 = {n * n, 2 * n * n, 3 * n * n, 4 * n * n, n * sumR};
        expect(wrong, "b", pb.toArray(), b2);
        expect(wrong, "c", pc.toArray(), new double[] {n * (10 * n + sumR)});
        expect(wrong, "copy", ((F64Buffer) plan.buffer(copy)).toArray(), b2);
        int[] wantGathered = new int[2 * n];
        for (int k = 0; k < n; k++) {
          wantGathered[2 * k] = 100 * k;
          wantGathered[2 * k + 1] = 100 * k + 1;
        }
        if (!Arrays.equals(pg.toArray(), wantGathered)) {
          wrong.add("gathered " + Arrays.toString(pg.toArray()) + " != " + Arrays.toString(wantGathered));
        }
        // slice: max over ranks of parts[r·3 + i], as unsigned; the second run sees the same parts (not written).
        U8Buffer ps = (U8Buffer) plan.buffer(slice);
        for (int i = 0; i < 3; i++) {
          int max = 0;
          for (int k = 0; k < n; k++) {
            max = Math.max(max, ((r * 3 + i) * 37 + k * 101) % 256);
          }
          if (ps.getUnsigned(i) != max) {
            wrong.add("slice[" + i + "] = " + ps.getUnsigned(i) + ", expected " + max);
          }
        }
        return wrong.isEmpty() ? "" : "rank " + r + ": " + wrong;
      }
    }
  }

  private static void expect(List<String> wrong, String field, double[] got, double[] want) {
    if (!Arrays.equals(got, want)) {
      wrong.add(field + " " + Arrays.toString(got) + " != " + Arrays.toString(want));
    }
  }
}
