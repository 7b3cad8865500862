package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The rank-failure matrix of issue 5: world sizes 2, 3, 4, 8 × where a rank fails (before building its
 * plan, inside execute, between two steps, during synchronize) × how (it throws, or it stops: returns
 * without doing its part, or blocks in a host task that never ends) × 7 seeded repetitions with random
 * failing ranks (one, or two where there are at least three ranks): 224 injections, each on a fresh
 * cluster with a 1 s timeout, eight at a time.
 *
 * <p>For every injection: {@code run} fails within timeout + 5 s (never hangs), every surviving rank
 * threw a typed exception ({@link RankAbortedException} or {@link CommTimeoutException}) that names a
 * failing rank (the aborting rank, or the ranks that did not arrive), and no backend thread is left.
 */
class LocalFailureMatrixTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(1);
  private static final Duration HANG_LIMIT = TIMEOUT.plusSeconds(5);
  private static final int[] WORLD_SIZES = {2, 3, 4, 8};
  private static final int REPETITIONS = 7;
  private static final int PARALLEL = 8;
  private static final int N = 16;
  private static final String SHAPE = "{\"16\"}";

  enum Point { BEFORE_BUILD, INSIDE_EXECUTE, BETWEEN_STEPS, DURING_SYNCHRONIZE }

  enum How { THROWS, STOPS }

  record Injection(int id, int ranks, Point point, How how, Set<Integer> failing, long seed) {
    @Override
    public String toString() {
      return "injection #" + id + " [" + ranks + " ranks, " + point + ", " + how + ", failing " + failing + ", seed "
          + seed + "]";
    }
  }

  record Outcome(Injection injection, long nanos, Map<Integer, Throwable> survivors, CommPlanException runFailure) {}

  /** Thrown by an injected failure, so that tests can tell it from anything else. */
  static final class InjectedFailure extends RuntimeException {
    InjectedFailure(String message) {
      super(message);
    }
  }

  @Test
  void everySurvivorFailsTypedAndPromptlyWhateverFailsWhere() throws Exception {
    List<Injection> injections = new ArrayList<>();
    Random random = new Random(0x5EED_F00DL);
    int id = 0;
    for (int ranks : WORLD_SIZES) {
      for (Point point : Point.values()) {
        for (How how : How.values()) {
          for (int rep = 0; rep < REPETITIONS; rep++) {
            int failingCount = ranks >= 3 ? 1 + random.nextInt(2) : 1;
            Set<Integer> failing = new TreeSet<>();
            while (failing.size() < failingCount) {
              failing.add(random.nextInt(ranks));
            }
            injections.add(new Injection(id++, ranks, point, how, failing, random.nextLong()));
          }
        }
      }
    }
    assertTrue(injections.size() >= 200, "at least 200 injections");

    long start = System.nanoTime();
    List<Outcome> outcomes = assertTimeoutPreemptively(Duration.ofSeconds(170), () -> runAll(injections));
    long wall = System.nanoTime() - start;

    Map<Point, long[]> maxByPoint = new EnumMap<>(Point.class);
    long max = 0;
    int timeouts = 0;
    int aborts = 0;
    for (Outcome o : outcomes) {
      Injection in = o.injection();
      assertNotNull(o.runFailure(), () -> in + ": run returned normally");
      assertTrue(o.nanos() <= HANG_LIMIT.toNanos(),
          () -> in + ": run took " + o.nanos() / 1e9 + " s, more than timeout + 5 s");
      for (int r = 0; r < in.ranks(); r++) {
        if (in.failing().contains(r)) {
          continue;
        }
        Throwable seen = o.survivors().get(r);
        int rank = r;
        assertNotNull(seen, () -> in + ": survivor rank " + rank + " returned normally");
        if (seen instanceof CommTimeoutException t) {
          timeouts++;
          assertTrue(t.missingRanks().stream().anyMatch(in.failing()::contains),
              () -> in + ": rank " + rank + "'s timeout names none of the failing ranks: " + t.summary());
          assertEquals(rank, t.rank());
          assertEquals("p.Matrix", t.planName(), t.summary());
          assertTrue(t.flightRecord().contains("flight record of rank " + rank), t.getMessage());
        } else if (seen instanceof RankAbortedException a) {
          aborts++;
          assertTrue(namesAFailingRank(a, in.failing()),
              () -> in + ": rank " + rank + "'s abort names none of the failing ranks: " + a.getMessage());
        } else {
          fail(in + ": survivor rank " + rank + " threw an untyped " + seen, seen);
        }
      }
      maxByPoint.computeIfAbsent(in.point(), p -> new long[1])[0] =
          Math.max(maxByPoint.computeIfAbsent(in.point(), p -> new long[1])[0], o.nanos());
      max = Math.max(max, o.nanos());
    }
    StringBuilder perPoint = new StringBuilder();
    maxByPoint.forEach((p, m) -> perPoint.append(String.format(Locale.ROOT, " %s %.2f s;", p, m[0] / 1e9)));
    System.out.printf(Locale.ROOT,
        "[figures] failure matrix: %d injections (world sizes 2,3,4,8 x 4 points x 2 ways x %d reps), 0 hangs,"
            + " survivors: %d CommTimeoutException + %d RankAbortedException, 0 untyped; longest run %.2f s"
            + " (limit %.0f s); max per point:%s wall %.1f s with %d in parallel%n",
        outcomes.size(), REPETITIONS, timeouts, aborts, max / 1e9, HANG_LIMIT.toSeconds() * 1.0, perPoint,
        wall / 1e9, PARALLEL);

    assertTimeoutPreemptively(Duration.ofSeconds(30), () -> {
      while (!LiveThreads.named("commplan-local-").isEmpty()) {
        Thread.sleep(10);
      }
    }, () -> "backend threads left running: " + LiveThreads.named("commplan-local-"));
  }

  private static boolean namesAFailingRank(Throwable t, Set<Integer> failing) {
    for (Throwable at = t; at != null; at = at.getCause()) {
      if (at instanceof CommTimeoutException timeout && timeout.missingRanks().stream().anyMatch(failing::contains)) {
        return true;
      }
      for (int f : failing) {
        if (String.valueOf(at.getMessage()).contains("rank " + f + " failed")) {
          return true;
        }
      }
    }
    return false;
  }

  private static List<Outcome> runAll(List<Injection> injections) throws Exception {
    ExecutorService pool = Executors.newFixedThreadPool(PARALLEL);
    try {
      List<Future<Outcome>> futures = new ArrayList<>();
      for (Injection in : injections) {
        futures.add(pool.submit(() -> inject(in)));
      }
      List<Outcome> outcomes = new ArrayList<>();
      for (int i = 0; i < futures.size(); i++) {
        try {
          // Generous (queueing behind other injections), yet bounded: a hang fails here, not at the build's end.
          outcomes.add(futures.get(i).get(60, TimeUnit.SECONDS));
        } catch (TimeoutException e) {
          fail(injections.get(i) + " hung");
        }
      }
      return outcomes;
    } finally {
      pool.shutdownNow();
    }
  }

  private static Outcome inject(Injection in) {
    Map<Integer, Throwable> survivors = new java.util.concurrent.ConcurrentHashMap<>();
    AtomicInteger normal = new AtomicInteger();
    CommPlanException runFailure = null;
    long t0;
    long nanos;
    try (LocalCluster cluster = new LocalCluster(in.ranks(), CommOptions.timeout(TIMEOUT))) {
      t0 = System.nanoTime();
      try {
        cluster.run(comm -> {
          boolean failingRank = in.failing().contains(comm.rank());
          try {
            rankBody(comm, in, failingRank);
            normal.incrementAndGet();
          } catch (RuntimeException | Error e) {
            if (!failingRank) {
              survivors.put(comm.rank(), e);
            }
            throw e;
          }
        });
      } catch (CommPlanException e) {
        runFailure = e;
      }
      nanos = System.nanoTime() - t0;
    }
    return new Outcome(in, nanos, survivors, runFailure);
  }

  private static void rankBody(dev.commplan.runtime.Communicator comm, Injection in, boolean failing)
      throws Exception {
    LocalStream stream = (LocalStream) comm.stream();
    String who = "injected failure on rank " + comm.rank();
    if (failing && in.point() == Point.BEFORE_BUILD) {
      if (in.how() == How.THROWS) {
        throw new InjectedFailure(who + " before build");
      }
      return;
    }
    PlanBuilder b = new PlanBuilder("p.Matrix", comm, 0);
    int x = b.buffer("x", DataType.F32, N, SHAPE, null);
    int y = b.buffer("y", DataType.F32, N, SHAPE, null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allReduce(1, y, y, ReduceOp.MAX);
    try (Plan plan = b.build()) {
      Random data = new Random(in.seed() + comm.rank());
      float[] values = new float[N];
      for (int i = 0; i < N; i++) {
        values[i] = data.nextFloat();
      }
      ((F32Buffer) plan.buffer(x)).copyFrom(values);
      ((F32Buffer) plan.buffer(y)).copyFrom(values);
      if (failing && in.point() == Point.INSIDE_EXECUTE) {
        if (in.how() == How.THROWS) {
          stream.enqueueHostTask(() -> {
            throw new InjectedFailure(who + " inside execute");
          });
          plan.execute(stream); // the stream skips it: the others wait for this rank
          stream.synchronize();
          return;
        }
        return; // returns without executing
      }
      if (failing && in.point() == Point.DURING_SYNCHRONIZE) {
        if (in.how() == How.THROWS) {
          // Fails a little later, while the others are already waiting in synchronize.
          stream.enqueueHostTask(() -> {
            Thread.sleep(30);
            throw new InjectedFailure(who + " during synchronize");
          });
        } else {
          CountDownLatch never = new CountDownLatch(1);
          stream.enqueueHostTask(never::await); // a kernel that never ends; the abort interrupts it
        }
      }
      plan.executeStep(0, stream);
      stream.synchronize();
      if (failing && in.point() == Point.BETWEEN_STEPS) {
        if (in.how() == How.THROWS) {
          throw new InjectedFailure(who + " between steps");
        }
        return; // does not issue step 1
      }
      plan.executeStep(1, stream);
      stream.synchronize();
    }
  }
}
