package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;

/**
 * Plans executed in opposite orders on one rank, for any backend: the scenarios that {@code OrderCheckTest},
 * {@code LocalExecuteOrderTest} (the local backend) and {@code MpiErrorsMain} (MPI) share. Plans of one shape
 * (each an F32 all-reduce of 256, summed in place), executed first then second on every rank but one, second
 * then first on that one: two instances of one plan class (the same name; issue 34, item 3), two plans of
 * different names (issue 20, case 1), or a plan against a direct call of the same shape (issue 25). What each
 * backend expects of the run (its assertions, its output) stays with its test.
 */
public final class OppositeOrders {
  private OppositeOrders() {}

  /**
   * The plan named {@code name} on {@code comm}: its buffer 0 ({@code x}, F32, 256) all-reduced (SUM) in place;
   * the order check at its default (the system property {@value PlanBuilder#ORDER_CHECK_PROPERTY}, else off).
   */
  public static Plan sumPlan(Communicator comm, String name) {
    return sum(new PlanBuilder(name, comm, 0));
  }

  /** {@link #sumPlan(Communicator, String)}, with the execute-order check {@code orderCheck}. */
  public static Plan sumPlan(Communicator comm, String name, boolean orderCheck) {
    return sum(new PlanBuilder(name, comm, 0).orderCheck(orderCheck));
  }

  private static Plan sum(PlanBuilder b) {
    int x = b.buffer("x", DataType.F32, 256, "{\"256\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    return b.build();
  }

  /**
   * Fills {@code first}'s buffer 0 with {@code firstFill} and {@code second}'s with {@code secondFill}, executes
   * {@code first} then {@code second} on {@code comm}'s stream, but {@code second} then {@code first} on rank
   * {@code reversedRank}, and synchronizes the stream.
   */
  public static void execute(Communicator comm, Plan first, float firstFill, Plan second, float secondFill,
      int reversedRank) {
    ((F32Buffer) first.buffer(0)).fill(firstFill);
    ((F32Buffer) second.buffer(0)).fill(secondFill);
    if (comm.rank() == reversedRank) {
      second.execute(comm.stream());
      first.execute(comm.stream());
    } else {
      first.execute(comm.stream());
      second.execute(comm.stream());
    }
    comm.stream().synchronize();
  }

  /**
   * Executes {@code plan}, then a direct in-place all-reduce (SUM) of {@code direct}, on {@code comm}'s stream,
   * but the direct call first on rank {@code reversedRank}, and synchronizes the stream: a plan step and a
   * direct call of the same shape in opposite orders (issue 25).
   */
  public static void executeAgainstDirectCall(Communicator comm, Plan plan, F32Buffer direct, int reversedRank) {
    if (comm.rank() == reversedRank) {
      comm.allReduce(direct, direct, ReduceOp.SUM, comm.stream());
      plan.execute(comm.stream());
    } else {
      plan.execute(comm.stream());
      comm.allReduce(direct, direct, ReduceOp.SUM, comm.stream());
    }
    comm.stream().synchronize();
  }

  /** {@code "p P, q Q"}: element 0 of {@code p}'s and of {@code q}'s buffer 0, for a run nothing stopped. */
  public static String sums(Plan p, Plan q) {
    return "p " + ((F32Buffer) p.buffer(0)).get(0) + ", q " + ((F32Buffer) q.buffer(0)).get(0);
  }
}
