package dev.commplan.conformance;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Case;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Expected;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;
import java.util.stream.Stream;
import org.junit.jupiter.api.DynamicNode;
import org.junit.jupiter.api.DynamicTest;
import org.junit.jupiter.api.TestFactory;

/**
 * Every collective and point-to-point pattern over each axis of a mesh (and over each pair of axes of a
 * 3-D mesh), against the reference, for any backend with splits: subclass it and name the backend ({@link
 * #backend()}), and it runs every mesh of {@link #meshes} at each of {@link #meshWorldSizes()}. Each group
 * along an axis gets its own inputs (seeded by the group), so a call that reached into another group's data,
 * or ran over the whole world, shows. Then a plan over the mesh ({@link #planOverAxes}) whose steps mix calls
 * over different axes and the world, checked element by element.
 *
 * <p>The per-rank logic is public and static: a rank calls {@link #runOnRank} with the world and gets back
 * what was wrong, so that a backend whose ranks are processes runs it too ({@link ProcessConformance}).
 */
public abstract class MeshSuite extends BackendSuite {
  /** For subclasses. */
  protected MeshSuite() {}

  /**
   * {@return the world sizes whose meshes the suite runs} The default: those of {@link #worldSizes()} that
   * have a mesh ({@link #meshes}: 4, 6, 8, ...).
   */
  protected int[] meshWorldSizes() {
    return Arrays.stream(worldSizes()).filter(ranks -> !meshes(ranks).isEmpty()).toArray();
  }

  @TestFactory
  Stream<DynamicNode> everyCollectiveAndTransferOverEachAxis() {
    List<DynamicNode> tests = new ArrayList<>();
    for (int ranks : meshWorldSizes()) {
      for (Shape shape : meshes(ranks)) {
        tests.add(DynamicTest.dynamicTest("mesh " + shape + " of " + ranks + " ranks", () -> {
          List<String> failures = new ArrayList<>();
          clusterOf(ranks).call(world -> runOnRank(world, shape, this::accumulationRoundoff)).forEach(failures::addAll);
          assertEquals(List.of(), failures.subList(0, Math.min(20, failures.size())));
        }));
      }
    }
    return tests.stream();
  }

  /** The data types the mesh cases cover: one float with tolerance, one exact float, one integer. */
  public static final DataType[] TYPES = {DataType.F32, DataType.BF16, DataType.I64};

  /** Per-rank counts: one element, and an odd count so that slicing bugs show. */
  public static final long[] COUNTS = {1, 7};

  /**
   * A mesh shape: axis names and sizes, outermost first.
   *
   * @param names the axes' names
   * @param sizes the axes' sizes, in the same order
   */
  public record Shape(List<String> names, int[] sizes) {
    /** {@code [a=2, b=3]}. */
    @Override
    public String toString() {
      StringBuilder s = new StringBuilder("[");
      for (int i = 0; i < names.size(); i++) {
        s.append(i == 0 ? "" : ", ").append(names.get(i)).append('=').append(sizes[i]);
      }
      return s.append(']').toString();
    }

    /** {@return the world size it lays out} */
    public int ranks() {
      return Arrays.stream(sizes).reduce(1, (a, b) -> a * b);
    }
  }

  /**
   * The meshes of {@code ranks} ranks the suite covers: every 2-D factorization with both factors > 1,
   * in both axis orders, and for 8 ranks also 2×2×2.
   *
   * @param ranks the world size
   * @return the meshes; none for a world size below 4 or prime
   */
  public static List<Shape> meshes(int ranks) {
    List<Shape> shapes = new ArrayList<>();
    for (int a = 2; a < ranks; a++) {
      if (ranks % a == 0 && ranks / a > 1) {
        shapes.add(new Shape(List.of("x", "y"), new int[] {a, ranks / a}));
      }
    }
    if (ranks == 8) {
      shapes.add(new Shape(List.of("pp", "dp", "tp"), new int[] {2, 2, 2}));
    }
    return shapes;
  }

  /**
   * Builds {@code shape} on {@code world}, runs every case over each of its groups, then the plan over the
   * mesh; collective (every rank of {@code world} calls it). The tolerance of floating-point reductions is
   * the local backend's ({@link CollectiveReference#floatAccumulation}).
   *
   * @param world this rank's communicator of the world, of {@code shape.ranks()} ranks
   * @param shape the mesh
   * @return this rank's failures, each naming the mesh, the axes, the case and the rank
   */
  public static List<String> runOnRank(Communicator world, Shape shape) {
    return runOnRank(world, shape, CollectiveReference::floatAccumulation);
  }

  /**
   * {@link #runOnRank(Communicator, Shape)} with the reference's tolerance per type: {@code
   * CollectiveReference::typeAccumulation} for a backend that rounds 16-bit floats at every hop (MPI, NCCL).
   *
   * @param world this rank's communicator of the world, of {@code shape.ranks()} ranks
   * @param shape the mesh
   * @param accumulation the unit roundoff of the backend's floating-point reductions per type
   * @return this rank's failures, each naming the mesh, the axes, the case and the rank
   */
  public static List<String> runOnRank(Communicator world, Shape shape,
      ToDoubleFunction<DataType> accumulation) {
    List<String> failures = new ArrayList<>();
    Mesh.Builder builder = Mesh.builder(world);
    for (int i = 0; i < shape.names().size(); i++) {
      builder.axis(shape.names().get(i), shape.sizes()[i]);
    }
    try (Mesh mesh = builder.build()) {
      for (List<String> axes : groupings(shape.names())) {
        Communicator group = mesh.axes(axes.toArray(String[]::new));
        String where = "mesh " + shape + " over " + String.join(" x ", axes) + ", world rank " + world.rank() + ": ";
        long salt = groupId(mesh, shape, axes);
        collectives(group, salt, where, failures, accumulation);
        Map<String, Function<Communicator, String>> patterns = PointToPointSuite.patterns(t -> t == DataType.F32);
        for (Map.Entry<String, Function<Communicator, String>> p : patterns.entrySet()) {
          String failure = p.getValue().apply(group);
          if (!failure.isEmpty()) {
            failures.add(where + p.getKey() + ": " + failure);
          }
        }
      }
      String failure = planOverAxes(mesh);
      if (!failure.isEmpty()) {
        failures.add("mesh " + shape + ", plan over its axes, world rank " + world.rank() + ": " + failure);
      }
    }
    return failures;
  }

  /** Each axis alone, and for three or more axes each pair of them. */
  static List<List<String>> groupings(List<String> names) {
    List<List<String>> out = new ArrayList<>();
    for (String name : names) {
      out.add(List.of(name));
    }
    if (names.size() >= 3) {
      for (int i = 0; i < names.size(); i++) {
        for (int j = i + 1; j < names.size(); j++) {
          out.add(List.of(names.get(j), names.get(i))); // in an order other than the mesh's, on purpose
        }
      }
    }
    return out;
  }

  /** A number that tells this rank's group along {@code axes} apart from the others (its color). */
  private static long groupId(Mesh mesh, Shape shape, List<String> axes) {
    long id = 0;
    for (String name : shape.names()) {
      id = id * 31 + (axes.contains(name) ? 0 : mesh.coordinate(name) + 1);
    }
    return id * 1_000_033L + axes.hashCode();
  }

  private static void collectives(Communicator group, long salt, String where, List<String> failures,
      ToDoubleFunction<DataType> accumulation) {
    int n = group.size();
    for (Collective collective : CollectiveCorrectnessSuite.collectives()) {
      for (DataType type : TYPES) {
        for (Case c : CollectiveCorrectnessSuite.cases(collective, type, n)) {
          for (long count : COUNTS) {
            long[][] inputs = new long[n][];
            for (int r = 0; r < n; r++) {
              inputs[r] = CollectiveCorrectnessSuite.randomInputs(c, count, r, salt);
            }
            Expected expected =
                CollectiveCorrectnessSuite.expected(c, count, inputs, accumulation.applyAsDouble(type));
            long[] got = CollectiveCorrectnessSuite.runOnRank(group, c, count, inputs[group.rank()], expected);
            String failure = CollectiveCorrectnessSuite.checkRank(c, count, expected, group.rank(), got);
            if (failure != null) {
              failures.add(where + failure);
            }
          }
        }
      }
    }
  }

  /**
   * A plan on the mesh whose steps mix calls over different axes and the whole world, on every axis of
   * the mesh: step 0 all-reduces {@code a} over the first axis and all-gathers {@code b} over the last
   * one into {@code bAll}, and passes {@code r} around a wrapped ring over the last axis; step 1
   * broadcasts {@code a} over the whole world from its last rank and reduce-scatters {@code c} over the
   * first axis. Values are small integers in F32 (exact), so every element is compared exactly.
   *
   * @param mesh this rank's mesh (every rank of its world calls it)
   * @return "" when right, else what is wrong
   */
  public static String planOverAxes(Mesh mesh) {
    return planOverAxes(mesh, 0);
  }

  /**
   * {@link #planOverAxes(Mesh)}, executed once ({@code launches} 0), or captured ({@code Plan.capture}: on
   * NCCL one CUDA graph over the world's and the axes' communicators; elsewhere, by default, a recording
   * whose launch enqueues the plan again) and launched {@code launches} times,
   * the inputs written from the host before each launch (they differ from launch to launch) and every
   * output checked after each.
   *
   * @param mesh this rank's mesh (every rank of its world calls it)
   * @param launches 0 to execute once, else how many times to launch the captured plan
   * @return "" when right, else what is wrong
   */
  public static String planOverAxes(Mesh mesh, int launches) {
    Communicator world = mesh.world();
    String first = mesh.axisNames().getFirst();
    String last = mesh.axisNames().getLast();
    int h = 5;
    PlanBuilder b = new PlanBuilder("test.MeshPlan", mesh, 0, first, last);
    int a = b.buffer("a", DataType.F32, h, "{\"h\"}", null);
    int bIn = b.buffer("b", DataType.F32, h, "{\"h\"}", null);
    int bAll = b.buffer("bAll", DataType.F32, b.axisSize(last) * h, "{\"" + last + "\", \"h\"}", null);
    int r = b.buffer("r", DataType.F32, h, "{\"h\"}", null);
    int rIn = b.buffer("rIn", DataType.F32, h, "{\"h\"}", null);
    int c = b.buffer("c", DataType.F32, b.axisSize(first) * h, "{\"" + first + "\", \"h\"}", null);
    int cOut = b.buffer("cOut", DataType.F32, h, "{\"h\"}", null);
    b.collective(0, Collective.ALL_REDUCE, a, a, ReduceOp.SUM, -1, first);
    b.collective(0, Collective.ALL_GATHER, bIn, bAll, null, -1, last);
    b.send(0, r, "(rank + 1) % ranks", last);
    b.recv(0, rIn, "(rank - 1) % ranks", last);
    b.collective(1, Collective.BROADCAST, a, a, null, world.size() - 1, "");
    b.collective(1, Collective.REDUCE_SCATTER, c, cOut, ReduceOp.SUM, -1, first);
    try (Plan plan = b.build()) {
      F32Buffer[] fields = {(F32Buffer) plan.buffer(a), (F32Buffer) plan.buffer(bIn), (F32Buffer) plan.buffer(r),
          (F32Buffer) plan.buffer(c), (F32Buffer) plan.buffer(bAll), (F32Buffer) plan.buffer(rIn),
          (F32Buffer) plan.buffer(cOut)};
      List<String> wrong = new ArrayList<>();
      if (launches == 0) {
        fillPlanOverAxes(mesh, fields, 0);
        plan.execute(world.stream());
        world.stream().synchronize();
        checkPlanOverAxes(mesh, fields, 0, wrong);
      } else {
        try (CapturedPlan captured = plan.capture(world.stream())) {
          for (int launch = 1; launch <= launches && wrong.isEmpty(); launch++) {
            fillPlanOverAxes(mesh, fields, launch);
            captured.launch();
            world.stream().synchronize();
            checkPlanOverAxes(mesh, fields, launch, wrong);
            if (!wrong.isEmpty()) {
              wrong.addFirst("launch " + launch + " of the captured plan");
            }
          }
        }
      }
      String description = plan.describe();
      if (!description.contains("all-reduce over " + first) || !description.contains("all-gather over " + last)) {
        wrong.add("describe() does not name the axes: " + description);
      }
      return String.join("; ", wrong);
    }
  }

  /** Writes {@link #planOverAxes}' inputs a, b, r, c ({@code fields[0..3]}) for {@code round} from the host. */
  private static void fillPlanOverAxes(Mesh mesh, F32Buffer[] fields, int round) {
    int me = mesh.world().rank();
    int h = (int) fields[0].length();
    fields[0].copyFrom(values(me, round * 4, h));
    fields[1].copyFrom(values(me, round * 4 + 1, h));
    fields[2].copyFrom(values(me, round * 4 + 2, h));
    fields[3].copyFrom(values(me, round * 4 + 3, (int) fields[3].length()));
  }

  /** Checks {@link #planOverAxes}' outputs a, bAll, rIn, cOut after {@code round}'s inputs. */
  private static void checkPlanOverAxes(Mesh mesh, F32Buffer[] fields, int round, List<String> wrong) {
    Communicator world = mesh.world();
    String first = mesh.axisNames().getFirst();
    String last = mesh.axisNames().getLast();
    int nFirst = mesh.size(first);
    int nLast = mesh.size(last);
    int me = world.rank();
    int h = (int) fields[0].length();
    // a: the last world rank's all-reduce over its group along the first axis, broadcast to everyone
    int lastRank = world.size() - 1;
    float[] wantA = new float[h];
    for (int k = 0; k < nFirst; k++) {
      add(wantA, values(withCoordinate(mesh, lastRank, first, k), round * 4, h));
    }
    compare(wrong, "a", fields[0].toArray(), wantA);
    float[] wantAll = new float[nLast * h];
    for (int k = 0; k < nLast; k++) {
      System.arraycopy(values(withCoordinate(mesh, me, last, k), round * 4 + 1, h), 0, wantAll, k * h, h);
    }
    compare(wrong, "bAll", fields[4].toArray(), wantAll);
    int previous = withCoordinate(mesh, me, last, (mesh.coordinate(last) - 1 + nLast) % nLast);
    compare(wrong, "rIn", fields[5].toArray(), values(previous, round * 4 + 2, h));
    float[] wantC = new float[h];
    for (int k = 0; k < nFirst; k++) {
      float[] theirs = values(withCoordinate(mesh, me, first, k), round * 4 + 3, nFirst * h);
      add(wantC, Arrays.copyOfRange(theirs, mesh.coordinate(first) * h, (mesh.coordinate(first) + 1) * h));
    }
    compare(wrong, "cOut", fields[6].toArray(), wantC);
  }

  /** The world rank with {@code rank}'s coordinates, but {@code coordinate} along {@code axis}. */
  static int withCoordinate(Mesh mesh, int rank, String axis, int coordinate) {
    int out = 0;
    int stride = 1;
    int[] coordinates = new int[mesh.axisNames().size()];
    for (int i = coordinates.length - 1; i >= 0; i--) {
      String name = mesh.axisNames().get(i);
      int size = mesh.size(name);
      coordinates[i] = name.equals(axis) ? coordinate : (rank / stride) % size;
      stride *= size;
    }
    for (int i = 0; i < coordinates.length; i++) {
      out = out * mesh.size(mesh.axisNames().get(i)) + coordinates[i];
    }
    return out;
  }

  /** World rank {@code rank}'s values for field number {@code field}: small whole numbers, exact in F32. */
  static float[] values(int rank, int field, int length) {
    float[] v = new float[length];
    for (int i = 0; i < length; i++) {
      v[i] = (rank * 7 + field * 13 + i * 3) % 17;
    }
    return v;
  }

  private static void add(float[] sum, float[] values) {
    for (int i = 0; i < sum.length; i++) {
      sum[i] += values[i];
    }
  }

  private static void compare(List<String> wrong, String field, float[] got, float[] want) {
    if (!Arrays.equals(got, want)) {
      wrong.add(field + " is " + Arrays.toString(got) + ", expected " + Arrays.toString(want));
    }
  }
}
