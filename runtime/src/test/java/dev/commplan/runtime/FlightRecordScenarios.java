package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.List;

/**
 * The runs issue 43 proves the flight records and the doctor with, for any backend (docs/doctor.md, its worked
 * example): a rank that never calls step 3 of a plan, a rank that sleeps before every collective, two ranks that
 * execute plans in another order than the others. Each is what every rank's task does; what a backend expects of
 * the run (its failures, the files, the doctor's words) stays with its test.
 */
public final class FlightRecordScenarios {
  /** The plan of {@link #neverEntersStep3}: {@value}. */
  public static final String STEP_PLAN = "train.Step";
  /** The plan of {@link #sleepsBeforeEveryCollective}: {@value}. */
  public static final String GRADS_PLAN = "train.Grads";

  private FlightRecordScenarios() {}

  /**
   * Plan {@value #STEP_PLAN} on {@code comm}: step 0 an all-reduce (SUM) of {@code grads} (F32, 1024) in place;
   * step 1 an all-gather of {@code shard} (F32, 256) into {@code full}; step 2 a broadcast of {@code config}
   * (I32, 4) from rank 0, in place; step 3 a reduce-scatter (SUM) of {@code full} into {@code shardSum}.
   */
  public static Plan stepPlan(Communicator comm) {
    PlanBuilder b = new PlanBuilder(STEP_PLAN, comm, 0);
    long n = comm.size();
    int grads = b.buffer("grads", DataType.F32, 1024, "{\"1024\"}", null);
    int shard = b.buffer("shard", DataType.F32, 256, "{\"256\"}", null);
    int full = b.buffer("full", DataType.F32, 256 * n, "{\"ranks\", \"256\"}", null);
    int config = b.buffer("config", DataType.I32, 4, "{\"4\"}", null);
    int shardSum = b.buffer("shardSum", DataType.F32, 256, "{\"256\"}", null);
    b.allReduce(0, grads, grads, ReduceOp.SUM);
    b.allGather(1, shard, full);
    b.broadcast(2, config, config, 0);
    b.reduceScatter(3, full, shardSum, ReduceOp.SUM);
    return b.build();
  }

  /**
   * A rank that never calls step 3: every rank executes {@code plan} ({@link #stepPlan}) once whole and
   * synchronizes; then steps 0, 1 and 2 one by one, and every rank but {@code stuck} step 3; then synchronizes.
   * The others wait in step 3 until their timeout; {@code stuck} returns from here (into its own code).
   */
  public static void neverEntersStep3(Communicator comm, Plan plan, int stuck) {
    Stream s = comm.stream();
    plan.execute(s);
    s.synchronize();
    for (int step = 0; step < 3; step++) {
      plan.executeStep(step, s);
    }
    if (comm.rank() != stuck) {
      plan.executeStep(3, s);
    }
    s.synchronize();
  }

  /** Plan {@value #GRADS_PLAN} on {@code comm}: one step, an all-reduce (SUM) of {@code grads} (F32, 65536) in place. */
  public static Plan gradsPlan(Communicator comm) {
    return onePlan(comm, GRADS_PLAN, "grads", 65536);
  }

  /**
   * A rank that is late to every collective: {@code collectives} times, rank {@code sleeper} sleeps {@code
   * sleepMillis}, then every rank executes {@code grads} ({@link #gradsPlan}) and synchronizes. Each time, the
   * others wait for the sleeper about {@code sleepMillis} in the all-reduce, and the sleeper waits for nobody.
   */
  public static void sleepsBeforeEveryCollective(Communicator comm, Plan grads, int sleeper, int collectives,
      long sleepMillis) throws InterruptedException {
    Stream s = comm.stream();
    for (int i = 0; i < collectives; i++) {
      if (comm.rank() == sleeper) {
        Thread.sleep(sleepMillis);
      }
      grads.execute(s);
      s.synchronize();
    }
  }

  /** Plans {@code model.Grads} (an all-reduce of {@code w}) and {@code model.Stats} (of {@code loss}), one shape. */
  public static List<Plan> orderPlans(Communicator comm) {
    return List.of(onePlan(comm, "model.Grads", "w", 1024), onePlan(comm, "model.Stats", "loss", 1024));
  }

  /**
   * Two ranks that execute plans in another order: every rank executes {@code plans} ({@link #orderPlans}) first
   * then second, but the ranks in {@code reversed} second then first, then synchronizes. The plans have one shape
   * (every backend completes them), and differ in their names and fields.
   */
  public static void executeInDifferentOrders(Communicator comm, List<Plan> plans, List<Integer> reversed) {
    Stream s = comm.stream();
    plans.get(0).execute(s); // a common start: the rings hold an operation every rank completed
    s.synchronize();
    boolean flip = reversed.contains(comm.rank());
    plans.get(flip ? 1 : 0).execute(s);
    plans.get(flip ? 0 : 1).execute(s);
    s.synchronize();
  }

  private static Plan onePlan(Communicator comm, String name, String field, long count) {
    PlanBuilder b = new PlanBuilder(name, comm, 0);
    int x = b.buffer(field, DataType.F32, count, "{\"" + count + "\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    return b.build();
  }
}
