package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.util.Locale;

/**
 * What the execute-order check costs (docs/reliability/execute-order.md): median time of execute + synchronize of a
 * one-step plan (an F32 all-reduce of {@code count}), with the check off and on, each measured over
 * {@code iters} runs after {@link SteadyState}'s warm-up (its runs and time printed per variant; the ranks
 * agree when to stop through {@link CollectiveConsensus}).
 *
 * <pre>
 *   java -cp ... dev.commplan.runtime.plan.OrderCheckCost local 2 [iters] [count]
 *   mpirun -np 2 java -cp ... dev.commplan.runtime.plan.OrderCheckCost mpi [iters] [count]
 * </pre>
 */
public final class OrderCheckCost {
  private OrderCheckCost() {}

  public static void main(String[] args) {
    CostArgs a = CostArgs.parse(args, 2000, 256);
    if (a.mpi()) {
      try (Communicator comm = Backends.processCommunicator("mpi")) {
        run(comm, a.units(), a.count());
      }
      dev.commplan.runtime.mpi.MpiBackend.finalizeMpi();
    } else {
      try (Cluster cluster = Backends.cluster(a.backend(), a.ranks())) {
        cluster.run(comm -> run(comm, a.units(), a.count()));
      }
    }
  }

  private static void run(Communicator comm, int iters, long count) {
    double off = median(comm, false, iters, count);
    double on = median(comm, true, iters, count);
    double offAgain = median(comm, false, iters, count);
    if (comm.rank() == 0) {
      System.out.printf(Locale.ROOT, "%s, %d ranks, all-reduce F32 x %d, %d iterations: execute+synchronize median"
              + " %.2f us with the order check off (%.2f again), %.2f us on: +%.2f us%n", comm.backendName(), comm.size(),
          count, iters, off, offAgain, on, on - Math.min(off, offAgain));
    }
  }

  private static double median(Communicator comm, boolean check, int iters, long count) {
    PlanBuilder b = new PlanBuilder("cost.Order" + check, comm, 0).orderCheck(check);
    int x = b.buffer("x", DataType.F32, count, "{\"n\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    try (Plan plan = b.build()) {
      SteadyState.Unit run = () -> {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      };
      SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
      SteadyState.WarmUp warm = steady.warmUp(SteadyState.Rule.DEFAULT, 1, run);
      SteadyState.Samples timed = steady.measure(1, iters, Long.MAX_VALUE, run);
      if (comm.rank() == 0) {
        System.out.printf(Locale.ROOT, "  order check %s: median %.2f us of %d runs; warm-up %s%n", check ? "on " : "off",
            timed.median() / 1e3, timed.count(), warm.summary("runs"));
      }
      return timed.median() / 1e3;
    }
  }
}
