package dev.commplan.conformance;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Case;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Expected;
import dev.commplan.model.Collective;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.I64Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.function.Predicate;
import java.util.function.ToDoubleFunction;
import java.util.stream.IntStream;

/**
 * The kit for a backend whose ranks are processes (one rank per process, started by a launcher such as
 * {@code mpirun}): every process calls {@link #runOnRank} with its communicator of the world, and each gets
 * back what was wrong on its rank. It runs the per-rank form of every suite:
 *
 * <ol>
 *   <li>{@link CollectiveCorrectnessSuite}'s whole matrix at this world size and {@link Settings#counts()},
 *       each rank checked against the reference (every process computes every rank's seeded input), and every
 *       rank's result compared bitwise with rank 0's where they must be equal (hashes, gathered with the
 *       backend's own all-gather); then its mixed plan and its plan of Reduce, Gather, Scatter and AllToAll;
 *   <li>{@link PointToPointSuite}'s patterns;
 *   <li>{@link CapturedPlanSuite}'s matrix for AllReduce, ReduceScatter, AllGather and Broadcast of three types
 *       (F32, I64, U8), each launched {@link Settings#launches()} times, its multi-step plan launched 50 times,
 *       and a launch after close refused;
 *   <li>a split by color and key ({@link SplitSuite#groupsOf});
 *   <li>{@link MeshSuite} over every mesh of this world size ({@link MeshSuite#meshes}: none below 4).
 * </ol>
 *
 * <p>The in-process suites' tests of failures (a rank that throws, ranks that disagree) are not run here: how a
 * job of processes ends when one fails is the launcher's and the backend's, and each backend tests it its own
 * way. A process's main calls {@link #runOnRank}, prints {@link Result#summary} and the failures, and exits
 * with 1 when {@link Result#failedRanks()} is not 0; {@code README.md} of the kit shows one.
 */
public final class ProcessConformance {
  private ProcessConformance() {}

  /**
   * What the kit needs to know about the backend under test, as {@link BackendSuite}'s hooks say it for the
   * in-process suites.
   *
   * @param supports whether the backend runs a data type here ({@link BackendSuite#supports})
   * @param accumulationRoundoff the unit roundoff of its floating-point reductions per type ({@link
   *     BackendSuite#accumulationRoundoff}: {@link CollectiveReference#typeAccumulation} where partial sums
   *     travel in the buffer's own type, as on MPI and NCCL)
   * @param counts the per-rank element counts of the correctness matrix ({@link
   *     CollectiveCorrectnessSuite#DEFAULT_COUNTS} by default)
   * @param launches the launches of each captured case
   */
  public record Settings(Predicate<DataType> supports, ToDoubleFunction<DataType> accumulationRoundoff,
      long[] counts, int launches) {
    /**
     * Copies the counts.
     *
     * @param supports whether the backend runs a data type here
     * @param accumulationRoundoff the unit roundoff of its floating-point reductions per type
     * @param counts the per-rank element counts of the correctness matrix
     * @param launches the launches of each captured case
     */
    public Settings {
      counts = counts.clone();
    }

    /**
     * {@return every type, the float accumulation of the local backend, the default counts, 3 launches}
     */
    public static Settings defaults() {
      return new Settings(type -> true, CollectiveReference::floatAccumulation, CollectiveCorrectnessSuite.DEFAULT_COUNTS,
          3);
    }

    /**
     * {@return these settings with {@code roundoff} as the unit roundoff of the backend's reductions}
     *
     * @param roundoff the unit roundoff per type
     */
    public Settings withAccumulationRoundoff(ToDoubleFunction<DataType> roundoff) {
      return new Settings(supports, roundoff, counts, launches);
    }

    /**
     * {@return these settings with {@code counts} as the correctness matrix's per-rank element counts}
     *
     * @param counts the counts
     */
    public Settings withCounts(long[] counts) {
      return new Settings(supports, accumulationRoundoff, counts, launches);
    }

    /**
     * {@return these settings testing only the types {@code supports} accepts}
     *
     * @param supports whether the backend runs a data type here
     */
    public Settings withSupports(Predicate<DataType> supports) {
      return new Settings(supports, accumulationRoundoff, counts, launches);
    }

    /** {@return a copy of the counts} */
    @Override
    public long[] counts() {
      return counts.clone();
    }
  }

  /**
   * What one rank's run found.
   *
   * @param failures this rank's failures, each naming the suite, the case and the rank; empty when all was right
   * @param collectiveRuns the correctness matrix's runs on this rank (cases × counts)
   * @param failedRanks how many ranks of the world had a failure (the same on every rank)
   * @param summary one line for the job's output: the rank, the world, what ran, how it went, how long it took
   */
  public record Result(List<String> failures, int collectiveRuns, int failedRanks, String summary) {
    /**
     * Copies the failures.
     *
     * @param failures this rank's failures
     * @param collectiveRuns the correctness matrix's runs on this rank
     * @param failedRanks how many ranks of the world had a failure
     * @param summary one line for the job's output
     */
    public Result {
      failures = List.copyOf(failures);
    }
  }

  /**
   * Runs the kit on {@code world}'s rank: every process of the job calls it, with the same settings.
   *
   * @param world this process's communicator of the whole job
   * @param settings what the kit needs to know about the backend
   * @return what this rank found, and how many ranks had failures
   */
  public static Result runOnRank(Communicator world, Settings settings) {
    long start = System.nanoTime();
    List<String> failures = new ArrayList<>();
    int runs = correctness(world, settings, failures);
    addIfNotEmpty(failures, CollectiveCorrectnessSuite.runPlanOnRank(world));
    addIfNotEmpty(failures, CollectiveCorrectnessSuite.runNewCollectivesPlanOnRank(world));
    failures.addAll(PointToPointSuite.runAllOnRank(world, settings.supports()));
    failures.addAll(captured(world, settings));
    addIfNotEmpty(failures, split(world));
    for (MeshSuite.Shape shape : MeshSuite.meshes(world.size())) {
      failures.addAll(MeshSuite.runOnRank(world, shape, settings.accumulationRoundoff()));
    }
    int failedRanks = failedRanks(world, failures.isEmpty());
    String summary = String.format(Locale.ROOT, "conformance kit on rank %d of %d: %d collective runs (counts %s),"
        + " plans, point-to-point, captured plans, a split and %d meshes: %s in %.1f s", world.rank(), world.size(), runs,
        Arrays.toString(settings.counts()), MeshSuite.meshes(world.size()).size(),
        failures.isEmpty() ? "all right" : failures.size() + " wrong", (System.nanoTime() - start) / 1e9);
    return new Result(failures, runs, failedRanks, summary);
  }

  /** The correctness matrix on this rank, each result checked, then compared with rank 0's; returns the runs. */
  private static int correctness(Communicator world, Settings settings, List<String> failures) {
    int rank = world.rank();
    int n = world.size();
    long[] counts = settings.counts();
    List<Case> cases = CollectiveCorrectnessSuite.allCases(n).stream().filter(c -> settings.supports().test(c.type()))
        .toList();
    long[] hashes = new long[cases.size() * counts.length];
    boolean[] compare = new boolean[hashes.length];
    int k = 0;
    for (Case c : cases) {
      for (long count : counts) {
        Expected expected = CollectiveCorrectnessSuite.expected(c, count,
            settings.accumulationRoundoff().applyAsDouble(c.type()));
        long[] got = CollectiveCorrectnessSuite.runOnRank(world, c, count, expected);
        String failure = CollectiveCorrectnessSuite.checkRank(c, count, expected, rank, got);
        if (failure != null) {
          failures.add(failure);
        }
        hashes[k] = Arrays.hashCode(got) * 0x9E3779B97F4A7C15L + got.length;
        compare[k] = CollectiveCorrectnessSuite.sameOnEveryRank(c.collective());
        k++;
      }
    }
    try (I64Buffer mine = I64Buffer.allocate(world, Math.max(1, hashes.length));
        I64Buffer all = I64Buffer.allocate(world, (long) n * Math.max(1, hashes.length))) {
      mine.copyFrom(Arrays.copyOf(hashes, Math.max(1, hashes.length)));
      world.allGather(mine, all, world.stream());
      world.stream().synchronize();
      long[] every = all.toArray();
      int stride = Math.max(1, hashes.length);
      int at = 0;
      for (Case c : cases) {
        for (long count : counts) {
          if (compare[at] && every[rank * stride + at] != every[at]) {
            failures.add(c + ", count " + count + ", rank " + rank + ": not bitwise equal to rank 0's result");
          }
          at++;
        }
      }
    }
    return hashes.length;
  }

  /** Captured plans: three types of the four collectives, the multi-step plan, a launch after close. */
  private static List<String> captured(Communicator world, Settings settings) {
    List<Case> cases = new ArrayList<>();
    for (Collective collective : List.of(Collective.ALL_REDUCE, Collective.REDUCE_SCATTER, Collective.ALL_GATHER,
        Collective.BROADCAST)) {
      for (DataType type : List.of(DataType.F32, DataType.I64, DataType.U8)) {
        if (settings.supports().test(type)) {
          cases.addAll(CollectiveCorrectnessSuite.cases(collective, type, world.size()));
        }
      }
    }
    List<String> failures = new ArrayList<>(CapturedPlanSuite.launchCasesOnRank(world, cases, CapturedPlanSuite.COUNT,
        settings.launches(), settings.accumulationRoundoff(), false));
    String mixed = CapturedPlanSuite.launchMixedOnRank(world, 50);
    if (mixed != null) {
      failures.add("captured mixed plan: " + mixed);
    }
    PlanBuilder b = new PlanBuilder("kit.CapturedClosed", world, 0);
    int x = b.buffer("x", DataType.F32, 4, "{\"4\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      CapturedPlan captured = plan.capture(world.stream());
      captured.close();
      try {
        captured.launch();
        failures.add("launch after close did not throw on rank " + world.rank());
      } catch (IllegalStateException expected) {
        // right
      }
    }
    return failures;
  }

  /** A split by color (even and odd ranks) and key (ties, and the rest reversed); "" when right. */
  private static String split(Communicator world) {
    int n = world.size();
    int[] colors = IntStream.range(0, n).map(r -> r % 2).toArray();
    int[] keys = IntStream.range(0, n).map(r -> r % 4 >= 2 ? 0 : 100 - r).toArray();
    List<Integer> group = SplitSuite.groupsOf(colors, keys).get(world.rank());
    try (Communicator half = world.split(colors[world.rank()], keys[world.rank()]);
        I32Buffer x = I32Buffer.allocate(half, 1); I32Buffer all = I32Buffer.allocate(half, half.size())) {
      x.set(0, world.rank());
      half.allGather(x, all, half.stream());
      half.stream().synchronize();
      String got = half.size() + " " + half.rank() + " " + Arrays.toString(all.toArray());
      String want = group.size() + " " + group.indexOf(world.rank()) + " " + group;
      return got.equals(want) ? "" : "split on world rank " + world.rank() + ": size, rank and members " + got
          + ", expected " + want;
    }
  }

  /** How many ranks of {@code world} had a failure: one all-reduce, so that every rank knows. */
  private static int failedRanks(Communicator world, boolean passed) {
    try (I32Buffer flag = I32Buffer.allocate(world, 1)) {
      flag.set(0, passed ? 0 : 1);
      world.allReduce(flag, flag, ReduceOp.SUM, world.stream());
      world.stream().synchronize();
      return flag.get(0);
    }
  }

  private static void addIfNotEmpty(List<String> failures, String failure) {
    if (failure != null && !failure.isEmpty()) {
      failures.add(failure);
    }
  }
}
