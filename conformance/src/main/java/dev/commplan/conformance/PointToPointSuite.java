package dev.commplan.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Peer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.function.Function;
import java.util.function.Predicate;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Send and Recv, for any backend (subclass it and name the backend, as {@link BackendSuite} says): plans with the
 * DSL's peers ({@code rank ± k}, wrapped or not) and direct calls, every data type, each pattern checked on
 * every rank against the value its peer sent.
 *
 * <ul>
 *   <li>pipeline: step 0 sends to {@code rank + 1} and receives from {@code rank - 1}; the first rank
 *       receives from no one (its buffer stays as it was) and the last sends to no one, and neither waits;
 *   <li>ring: {@code (rank + 1) % ranks} and {@code (rank - 1) % ranks} in one step, which must not
 *       serialize (every rank sends before any receives; one rank sends to itself);
 *   <li>both directions in one step: left and right neighbours, two sends and two receives per rank;
 *   <li>several steps: a ring shift, then a shift by two that reads it, then an all-reduce of that,
 *       with an all-gather beside the transfers of step 1; run several times on fresh values;
 *   <li>two sends to the same peer in one step, paired in order;
 *   <li>direct calls: a ring in one group, and a pipeline without a group (a chain that unwinds).
 * </ul>
 *
 * <p>The per-rank logic is public and static ({@link #runAllOnRank}, {@link #patterns}), so that a backend
 * whose ranks are processes runs it on each ({@link ProcessConformance}), and a mesh over each axis ({@link
 * MeshSuite}).
 */
public abstract class PointToPointSuite extends BackendSuite {
  /** For subclasses. */
  protected PointToPointSuite() {}

  /**
   * The patterns, by name, for the types {@code supported}; each runs on one rank (every rank of the
   * communicator calls it) and returns "" on success, else what is wrong.
   *
   * @param supported the data types the backend runs
   * @return the patterns, in the order they run
   */
  public static Map<String, Function<Communicator, String>> patterns(Predicate<DataType> supported) {
    Map<String, Function<Communicator, String>> p = new LinkedHashMap<>();
    for (DataType type : DataType.values()) {
      if (supported.test(type)) {
        p.put("pipeline " + type, comm -> pipeline(comm, type, 5));
      }
    }
    p.put("pipeline of 1003 elements", comm -> pipeline(comm, DataType.F32, 1003));
    p.put("ring, wrapped", PointToPointSuite::ring);
    p.put("both directions in one step", PointToPointSuite::bothDirections);
    p.put("several steps with collectives", PointToPointSuite::severalSteps);
    p.put("two sends to one peer in one step", PointToPointSuite::twoToOnePeer);
    p.put("direct ring in a group", PointToPointSuite::directRing);
    p.put("direct pipeline without a group", PointToPointSuite::directPipeline);
    return p;
  }

  @TestFactory
  Stream<DynamicNode> pointToPoint() {
    List<DynamicNode> tests = new ArrayList<>();
    for (int ranks : worldSizes()) {
      for (Map.Entry<String, Function<Communicator, String>> e : patterns(this::supports).entrySet()) {
        tests.add(DynamicTest.dynamicTest(e.getKey() + " on " + ranks + " ranks", () -> {
          for (String failure : clusterOf(ranks).call(comm -> e.getValue().apply(comm))) {
            assertEquals("", failure);
          }
        }));
      }
    }
    return tests.stream();
  }

  /**
   * Every pattern on {@code comm}'s rank (every rank must call it).
   *
   * @param comm this rank's communicator
   * @param supported the data types the backend runs
   * @return the failures, "pattern: rank r: ..."; empty when every pattern was right
   */
  public static List<String> runAllOnRank(Communicator comm, Predicate<DataType> supported) {
    List<String> failures = new ArrayList<>();
    for (Map.Entry<String, Function<Communicator, String>> e : patterns(supported).entrySet()) {
      String failure = e.getValue().apply(comm);
      if (!failure.isEmpty()) {
        failures.add(e.getKey() + ": " + failure);
      }
    }
    return failures;
  }

  // ---- The patterns -------------------------------------------------------------------------------

  /** Rank r's value at element i in round {@code round}: distinct per rank, element and round. */
  static long value(DataType type, int rank, int i, int round) {
    if (type.isFloatingPoint()) {
      // small whole numbers, exact in every floating-point type (E5M2 holds the integers up to 8)
      return TypedBits.fromDouble(type, 1 + (rank * 3 + i * 5 + round * 7) % 8);
    }
    return new SplittableRandom(rank * 1_000_003L + i * 7919L + round).nextLong() & TypedBits.mask(type);
  }

  private static long[] values(DataType type, int rank, int length, int round) {
    long[] v = new long[length];
    for (int i = 0; i < length; i++) {
      v[i] = value(type, rank, i, round);
    }
    return v;
  }

  private static long[] poison(DataType type, int length) {
    long[] v = new long[length];
    Arrays.fill(v, type.isFloatingPoint() ? TypedBits.fromDouble(type, -3) : 0x5A & TypedBits.mask(type));
    return v;
  }

  private static PlanBuilder builder(String name, Communicator comm) {
    return new PlanBuilder(name, comm, 0);
  }

  private static String expect(String what, long[] got, long[] want) {
    return Arrays.equals(got, want) ? "" : what + " is " + Arrays.toString(got) + ", expected " + Arrays.toString(want)
        + "; ";
  }

  private static String result(Communicator comm, StringBuilder wrong) {
    return wrong.isEmpty() ? "" : "rank " + comm.rank() + ": " + wrong;
  }

  /** x to rank + 1, y from rank - 1; the edges do nothing and must not wait. */
  static String pipeline(Communicator comm, DataType type, int length) {
    int r = comm.rank();
    PlanBuilder b = builder("p2p.Pipeline", comm);
    int x = b.buffer("x", type, length, "{\"n\"}", null);
    int y = b.buffer("y", type, length, "{\"n\"}", null);
    b.send(0, x, "rank + 1");
    b.recv(0, y, "rank - 1");
    StringBuilder wrong = new StringBuilder();
    try (Plan plan = b.build()) {
      for (int round = 0; round < 3; round++) {
        TypedBits.write(plan.buffer(x), values(type, r, length, round));
        TypedBits.write(plan.buffer(y), poison(type, length));
        plan.execute(comm.stream());
        comm.stream().synchronize();
        wrong.append(expect("y", TypedBits.read(plan.buffer(y)),
            r == 0 ? poison(type, length) : values(type, r - 1, length, round)));
      }
    }
    return result(comm, wrong);
  }

  /** A ring in one step: to (rank + 1) % ranks, from (rank - 1) % ranks. */
  static String ring(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    PlanBuilder b = builder("p2p.Ring", comm);
    int x = b.buffer("x", DataType.I64, 4, "{\"4\"}", null);
    int y = b.buffer("y", DataType.I64, 4, "{\"4\"}", null);
    b.send(0, x, Peer.parse("(rank + 1) % ranks"));
    b.recv(0, y, "(rank - 1) % ranks");
    StringBuilder wrong = new StringBuilder();
    try (Plan plan = b.build()) {
      for (int round = 0; round < 5; round++) {
        TypedBits.write(plan.buffer(x), values(DataType.I64, r, 4, round));
        plan.execute(comm.stream());
        comm.stream().synchronize();
        wrong.append(expect("y", TypedBits.read(plan.buffer(y)), values(DataType.I64, (r - 1 + n) % n, 4, round)));
      }
    }
    return result(comm, wrong);
  }

  /** Left and right in one step: a to rank + 1 and b to rank - 1; fromLeft from rank - 1, fromRight from rank + 1. */
  static String bothDirections(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    DataType t = DataType.I32;
    PlanBuilder b = builder("p2p.Both", comm);
    int toRight = b.buffer("toRight", t, 3, "{\"3\"}", null);
    int toLeft = b.buffer("toLeft", t, 3, "{\"3\"}", null);
    int fromLeft = b.buffer("fromLeft", t, 3, "{\"3\"}", null);
    int fromRight = b.buffer("fromRight", t, 3, "{\"3\"}", null);
    b.send(0, toRight, "rank + 1");
    b.send(0, toLeft, "rank - 1");
    b.recv(0, fromRight, "rank + 1");
    b.recv(0, fromLeft, "rank - 1");
    StringBuilder wrong = new StringBuilder();
    try (Plan plan = b.build()) {
      TypedBits.write(plan.buffer(toRight), values(t, r, 3, 0));
      TypedBits.write(plan.buffer(toLeft), values(t, r, 3, 1));
      TypedBits.write(plan.buffer(fromLeft), poison(t, 3));
      TypedBits.write(plan.buffer(fromRight), poison(t, 3));
      plan.execute(comm.stream());
      comm.stream().synchronize();
      wrong.append(expect("fromLeft", TypedBits.read(plan.buffer(fromLeft)),
          r == 0 ? poison(t, 3) : values(t, r - 1, 3, 0)));
      wrong.append(expect("fromRight", TypedBits.read(plan.buffer(fromRight)),
          r == n - 1 ? poison(t, 3) : values(t, r + 1, 3, 1)));
    }
    return result(comm, wrong);
  }

  /**
   * Step 0: x to (rank + 1) % ranks into y. Step 1: y to (rank + 2) % ranks into z, beside an all-gather
   * of x. Step 2: all-reduce z in place. So z holds the sum of every rank's x.
   */
  static String severalSteps(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    DataType t = DataType.F64;
    PlanBuilder b = builder("p2p.Steps", comm);
    int x = b.buffer("x", t, 2, "{\"2\"}", null);
    int y = b.buffer("y", t, 2, "{\"2\"}", null);
    int z = b.buffer("z", t, 2, "{\"2\"}", null);
    int all = b.buffer("all", t, 2L * n, "{\"ranks\", \"2\"}", null);
    b.send(0, x, "(rank + 1) % ranks");
    b.recv(0, y, "(rank - 1) % ranks");
    b.send(1, y, "(rank + 2) % ranks");
    b.recv(1, z, "(rank - 2) % ranks");
    b.allGather(1, x, all);
    b.allReduce(2, z, z, ReduceOp.SUM);
    StringBuilder wrong = new StringBuilder();
    try (Plan plan = b.build()) {
      for (int round = 0; round < 4; round++) {
        F64Buffer px = (F64Buffer) plan.buffer(x);
        px.copyFrom(new double[] {r + round, 100 * r});
        plan.execute(comm.stream());
        comm.stream().synchronize();
        double sum = n * (n - 1) / 2.0;
        double[] z2 = ((F64Buffer) plan.buffer(z)).toArray();
        if (!Arrays.equals(z2, new double[] {sum + n * round, 100 * sum})) {
          wrong.append("round ").append(round).append(": z is ").append(Arrays.toString(z2)).append("; ");
        }
        double[] gathered = ((F64Buffer) plan.buffer(all)).toArray();
        for (int k = 0; k < n; k++) {
          if (gathered[2 * k] != k + round || gathered[2 * k + 1] != 100 * k) {
            wrong.append("round ").append(round).append(": all is ").append(Arrays.toString(gathered)).append("; ");
            break;
          }
        }
      }
    }
    return result(comm, wrong);
  }

  /** Two sends to rank + 1 in one step (different sizes), paired in declaration order with two receives. */
  static String twoToOnePeer(Communicator comm) {
    int r = comm.rank();
    DataType t = DataType.U8;
    PlanBuilder b = builder("p2p.Two", comm);
    int a = b.buffer("a", t, 2, "{\"2\"}", null);
    int c = b.buffer("c", t, 3, "{\"3\"}", null);
    int d = b.buffer("d", t, 3, "{\"3\"}", null);
    int e = b.buffer("e", t, 2, "{\"2\"}", null);
    b.send(0, a, "rank + 1");
    b.send(0, c, "rank + 1");
    b.recv(0, d, "rank - 1"); // pairs with c (same count)
    b.recv(0, e, "rank - 1"); // pairs with a
    StringBuilder wrong = new StringBuilder();
    try (Plan plan = b.build()) {
      TypedBits.write(plan.buffer(a), values(t, r, 2, 0));
      TypedBits.write(plan.buffer(c), values(t, r, 3, 1));
      TypedBits.write(plan.buffer(d), poison(t, 3));
      TypedBits.write(plan.buffer(e), poison(t, 2));
      plan.execute(comm.stream());
      comm.stream().synchronize();
      wrong.append(expect("d", TypedBits.read(plan.buffer(d)), r == 0 ? poison(t, 3) : values(t, r - 1, 3, 1)));
      wrong.append(expect("e", TypedBits.read(plan.buffer(e)), r == 0 ? poison(t, 2) : values(t, r - 1, 2, 0)));
    }
    return result(comm, wrong);
  }

  /** comm.send/comm.recv around a ring, inside one group. */
  static String directRing(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    StringBuilder wrong = new StringBuilder();
    try (I32Buffer x = I32Buffer.allocate(comm, 6); I32Buffer y = I32Buffer.allocate(comm, 6)) {
      x.fill(10 * r + 1);
      comm.groupStart();
      comm.send(x, (r + 1) % n, comm.stream());
      comm.recv(y, (r - 1 + n) % n, comm.stream());
      comm.groupEnd();
      comm.stream().synchronize();
      int[] want = new int[6];
      Arrays.fill(want, 10 * ((r - 1 + n) % n) + 1);
      if (!Arrays.equals(y.toArray(), want)) {
        wrong.append("y is ").append(Arrays.toString(y.toArray()));
      }
    }
    return result(comm, wrong);
  }

  /** comm.send to rank + 1 then comm.recv from rank - 1, no group: the chain unwinds from the last rank. */
  static String directPipeline(Communicator comm) {
    int r = comm.rank();
    int n = comm.size();
    StringBuilder wrong = new StringBuilder();
    try (F32Buffer x = F32Buffer.allocate(comm, 5); F32Buffer y = F32Buffer.allocate(comm, 5)) {
      x.fill(r + 0.5f);
      y.fill(-1f);
      if (r + 1 < n) {
        comm.send(x, r + 1, comm.stream());
      }
      if (r > 0) {
        comm.recv(y, r - 1, comm.stream());
      }
      comm.stream().synchronize();
      float[] want = new float[5];
      Arrays.fill(want, r == 0 ? -1f : r - 0.5f);
      if (!Arrays.equals(y.toArray(), want)) {
        wrong.append("y is ").append(Arrays.toString(y.toArray()));
      }
    }
    return result(comm, wrong);
  }
}
