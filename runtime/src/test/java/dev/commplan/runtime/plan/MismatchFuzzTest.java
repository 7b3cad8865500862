package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.local.LocalCluster;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/**
 * Seeded fuzz: random plans and a one-point mutation (count, data type, op, root, the order of two
 * operations, a missing or an extra operation) on one random rank of a 2-, 3- or 4-rank local cluster.
 * Every pair must be caught at build, on every rank, with one message naming the first differing
 * operation; unmutated plans (every tenth pair, in addition) must build.
 */
class MismatchFuzzTest {
  private static final long SEED = 0x5eed_f1a9L;
  private static final int PAIRS = 1200;

  enum Kind { COUNT, TYPE, OP, ROOT, ORDER, MISSING, EXTRA }

  /** One declared collective; fields are named after {@code id} ("f007s" -> "f007r"), unique in a plan. */
  record Op(int id, Collective collective, int step, DataType type, long count, ReduceOp op, int root, boolean inPlace) {
    String send() {
      return String.format("f%03ds", id);
    }

    String recv() {
      return String.format("f%03dr", id);
    }

    String tag() {
      return String.format("f%03d", id);
    }
  }

  private static Op randomOp(Random random, int id, int ranks) {
    Collective c = Collective.values()[random.nextInt(4)];
    DataType type = DataType.values()[random.nextInt(DataType.values().length)];
    ReduceOp[] ops = ops(type);
    ReduceOp op = c == Collective.ALL_REDUCE || c == Collective.REDUCE_SCATTER ? ops[random.nextInt(ops.length)] : null;
    int root = c == Collective.BROADCAST ? random.nextInt(ranks) : -1;
    return new Op(id, c, random.nextInt(3), type, 1 + random.nextInt(64), op, root, random.nextBoolean());
  }

  /** The ops a plan may reduce {@code type} with: AVG on fp8 is refused ({@code [CommPlan/Fp8Average]}). */
  private static ReduceOp[] ops(DataType type) {
    return dev.commplan.conformance.CollectiveCorrectnessSuite.ops(type).toArray(ReduceOp[]::new);
  }

  /** The types a plan may reduce with {@code op} (null: any). */
  private static DataType[] types(ReduceOp op) {
    return java.util.Arrays.stream(DataType.values()).filter(t -> op == null || List.of(ops(t)).contains(op))
        .toArray(DataType[]::new);
  }

  /** Declares {@code ops} in list order; the counts follow NCCL's relations for the collective. */
  private static void declare(PlanBuilder b, List<Op> ops, int ranks) {
    for (Op o : ops) {
      long c = o.count();
      long whole = c * ranks;
      switch (o.collective()) {
        case ALL_REDUCE, BROADCAST -> {
          int s = b.buffer(o.send(), o.type(), c, "{\"c\"}", null);
          int r = o.inPlace() ? s : b.buffer(o.recv(), o.type(), c, "{\"c\"}", null);
          if (o.collective() == Collective.ALL_REDUCE) {
            b.allReduce(o.step(), s, r, o.op());
          } else {
            b.broadcast(o.step(), s, r, o.root());
          }
        }
        case ALL_GATHER -> {
          int s = b.buffer(o.send(), o.type(), o.inPlace() ? whole : c, "{\"c\"}", null);
          int r = o.inPlace() ? s : b.buffer(o.recv(), o.type(), whole, "{\"ranks\", \"c\"}", null);
          b.allGather(o.step(), s, r);
        }
        case REDUCE_SCATTER -> {
          int s = b.buffer(o.send(), o.type(), whole, "{\"ranks\", \"c\"}", null);
          int r = o.inPlace() ? s : b.buffer(o.recv(), o.type(), c, "{\"c\"}", null);
          b.reduceScatter(o.step(), s, r, o.op());
        }
      }
    }
  }

  private static List<Op> executionOrder(List<Op> ops) {
    List<Integer> idx = IntStream.range(0, ops.size()).boxed().toList();
    return idx.stream().sorted(Comparator.comparingInt((Integer i) -> ops.get(i).step()).thenComparingInt(i -> i))
        .map(ops::get).toList();
  }

  /** A mutated copy of {@code ops}; {@code changed[0]} receives the id of the op whose attribute changed. */
  private static List<Op> mutate(Random random, List<Op> ops, Kind kind, int ranks, int[] changed) {
    List<Op> m = new ArrayList<>(ops);
    changed[0] = -1;
    switch (kind) {
      case COUNT -> {
        int i = random.nextInt(m.size());
        Op o = m.get(i);
        m.set(i, new Op(o.id(), o.collective(), o.step(), o.type(), o.count() + 1 + random.nextInt(5), o.op(), o.root(),
            o.inPlace()));
        changed[0] = o.id();
      }
      case TYPE -> {
        int i = random.nextInt(m.size());
        Op o = m.get(i);
        DataType t = other(random, types(o.op()), o.type());
        m.set(i, new Op(o.id(), o.collective(), o.step(), t, o.count(), o.op(), o.root(), o.inPlace()));
        changed[0] = o.id();
      }
      case OP -> {
        List<Integer> reducing = IntStream.range(0, m.size()).filter(i -> m.get(i).op() != null).boxed().toList();
        int i = reducing.get(random.nextInt(reducing.size()));
        Op o = m.get(i);
        m.set(i, new Op(o.id(), o.collective(), o.step(), o.type(), o.count(), other(random, ops(o.type()), o.op()),
            o.root(), o.inPlace()));
        changed[0] = o.id();
      }
      case ROOT -> {
        List<Integer> bcasts = IntStream.range(0, m.size())
            .filter(i -> m.get(i).collective() == Collective.BROADCAST).boxed().toList();
        int i = bcasts.get(random.nextInt(bcasts.size()));
        Op o = m.get(i);
        int root = (o.root() + 1 + random.nextInt(ranks - 1)) % ranks;
        m.set(i, new Op(o.id(), o.collective(), o.step(), o.type(), o.count(), o.op(), root, o.inPlace()));
        changed[0] = o.id();
      }
      case ORDER -> { // two operations next to each other in execution order change places
        List<Op> exec = executionOrder(m);
        int p = random.nextInt(exec.size() - 1);
        Op x = exec.get(p);
        Op y = exec.get(p + 1);
        int ix = m.indexOf(x);
        int iy = m.indexOf(y);
        if (x.step() == y.step()) { // same step: swap their declarations
          m.set(ix, y);
          m.set(iy, x);
        } else { // different steps: swap their steps
          m.set(ix, new Op(x.id(), x.collective(), y.step(), x.type(), x.count(), x.op(), x.root(), x.inPlace()));
          m.set(iy, new Op(y.id(), y.collective(), x.step(), y.type(), y.count(), y.op(), y.root(), y.inPlace()));
        }
      }
      case MISSING -> m.remove(random.nextInt(m.size()));
      case EXTRA -> m.add(random.nextInt(m.size() + 1), randomOp(random, 900 + random.nextInt(99), ranks));
    }
    return m;
  }

  private static <T> T other(Random random, T[] values, T not) {
    T t;
    do {
      t = values[random.nextInt(values.length)];
    } while (t == not);
    return t;
  }

  private static boolean applies(Kind kind, List<Op> ops) {
    return switch (kind) {
      case OP -> ops.stream().anyMatch(o -> o.op() != null);
      case ROOT -> ops.stream().anyMatch(o -> o.collective() == Collective.BROADCAST);
      case ORDER -> ops.size() >= 2;
      default -> true;
    };
  }

  /** Each rank's result: null if built, else the exception. */
  /** Each rank's failure to build: a PlanBuildException of its own, or the PlanMismatchException every rank gets. */
  private static List<CommPlanException> build(LocalCluster cluster, List<Op> plan, List<Op> mutated, int mutatedRank) {
    return cluster.call(comm -> {
      PlanBuilder b = new PlanBuilder("fuzz.P", comm, 0);
      declare(b, comm.rank() == mutatedRank ? mutated : plan, comm.size());
      try (Plan p = b.build()) {
        return null;
      } catch (PlanBuildException | PlanMismatchException e) {
        return (CommPlanException) e;
      }
    });
  }

  @Test
  void everyOnePointMutationIsCaughtOnEveryRankWithTheOperationNamed() {
    Random random = new Random(SEED);
    Map<Kind, Integer> caught = new EnumMap<>(Kind.class);
    int[] bySize = new int[5];
    int[] controls = new int[1];
    long start = System.nanoTime();
    List<LocalCluster> clusters = List.of(new LocalCluster(2, Duration.ofSeconds(20)),
        new LocalCluster(3, Duration.ofSeconds(20)), new LocalCluster(4, Duration.ofSeconds(20)));
    try {
      assertTimeoutPreemptively(Duration.ofSeconds(120), () -> {
        for (int pair = 0; pair < PAIRS; pair++) {
          LocalCluster cluster = clusters.get(random.nextInt(clusters.size()));
          int ranks = cluster.size();
          List<Op> plan = new ArrayList<>();
          int n = 1 + random.nextInt(8);
          for (int i = 0; i < n; i++) {
            plan.add(randomOp(random, i, ranks));
          }
          Kind kind;
          do {
            kind = Kind.values()[random.nextInt(Kind.values().length)];
          } while (!applies(kind, plan));
          int[] changed = new int[1];
          List<Op> mutated = mutate(random, plan, kind, ranks, changed);
          int mutatedRank = random.nextInt(ranks);

          if (pair % 10 == 0) { // control: the unmutated plan builds everywhere
            for (CommPlanException e : build(cluster, plan, plan, -1)) {
              if (e != null) {
                fail("pair " + pair + ": the unmutated plan failed to build", e);
              }
            }
            controls[0]++;
          }

          List<CommPlanException> results = build(cluster, plan, mutated, mutatedRank);
          String context = "pair " + pair + " (" + kind + " on rank " + mutatedRank + " of " + ranks + ")\nplan: " + plan
              + "\nmutated: " + mutated;
          String message = null;
          for (int r = 0; r < ranks; r++) {
            CommPlanException e = results.get(r);
            if (!(e instanceof PlanMismatchException mismatch)) {
              throw new AssertionError(context + "\nrank " + r + " got " + e, e);
            }
            if (message == null) {
              message = e.getMessage();
            }
            assertEquals(message, e.getMessage(), context + ": rank " + r + "'s message");
            List<Integer> expected = ranks == 2 ? List.of(1) : List.of(mutatedRank);
            assertEquals(expected, mismatch.differingRanks(), context + "\n" + message);
          }
          // the first differing position in execution order, and the operation(s) there
          List<Op> a = executionOrder(plan);
          List<Op> b = executionOrder(mutated);
          int p = 0;
          while (p < a.size() && p < b.size() && a.get(p).id() == b.get(p).id() && a.get(p).id() != changed[0]
              && a.get(p).step() == b.get(p).step()) {
            p++;
          }
          assertTrue(message.contains("first difference: operation #" + (p + 1) + " (step "),
              context + "\nexpected operation #" + (p + 1) + " in:\n" + message);
          for (List<Op> side : List.of(a, b)) {
            if (p < side.size()) {
              String tag = side.get(p).tag();
              assertTrue(message.contains(" " + tag), context + "\nexpected " + tag + " in:\n" + message);
            }
          }
          caught.merge(kind, 1, Integer::sum);
          bySize[ranks]++;
        }
      });
    } finally {
      clusters.forEach(LocalCluster::close);
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    int total = caught.values().stream().mapToInt(Integer::intValue).sum();
    System.out.printf("MismatchFuzzTest: %d/%d pairs caught at build on every rank with the operation named"
        + " (%s; 2 ranks %d, 3 ranks %d, 4 ranks %d), %d unmutated controls built, %.1f s%n",
        total, PAIRS, caught, bySize[2], bySize[3], bySize[4], controls[0], seconds);
    assertEquals(PAIRS, total);
    for (Kind k : Kind.values()) {
      assertTrue(caught.getOrDefault(k, 0) > 50, "too few " + k + " mutations: " + caught);
    }
  }
}
