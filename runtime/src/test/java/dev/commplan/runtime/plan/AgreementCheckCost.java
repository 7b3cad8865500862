package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.mpi.MpiBackend;
import dev.commplan.timing.SteadyState;
import java.util.Locale;

/**
 * What the agreement check costs (docs/reliability/agreement-cost.md): the time of a direct in-place
 * F32 all-reduce of {@code count} + synchronize, and of a one-step plan's execute + synchronize, on a
 * communicator with the check off, then on, then off again. The check runs once every {@value
 * Agreement#MAX_INTERVAL} units in the steady state, so each timed unit is {@value Agreement#MAX_INTERVAL}
 * runs: a median of single runs would miss the one that carries the check. Each variant warms up by
 * {@link SteadyState}'s default rule (the ranks agree when to stop) and prints its warm-up.
 *
 * <pre>
 *   java -cp ... dev.commplan.runtime.plan.AgreementCheckCost local|nccl RANKS [units] [count]
 *   mpirun -np 2 java -cp ... dev.commplan.runtime.plan.AgreementCheckCost mpi [units] [count]
 * </pre>
 */
public final class AgreementCheckCost {
  private static final int RUNS = Agreement.MAX_INTERVAL;

  private AgreementCheckCost() {}

  public static void main(String[] args) {
    CostArgs a = CostArgs.parse(args, 200, 1024);
    int units = a.units();
    long count = a.count();
    double[][] results = new double[3][];
    boolean[] settings = {false, true, false};
    for (int i = 0; i < settings.length; i++) {
      CommOptions options = CommOptions.defaults().withAgreementCheck(settings[i]);
      int variant = i;
      if (a.mpi()) {
        try (Communicator comm = MpiBackend.world(options)) {
          double[] r = measure(comm, settings[variant], units, count);
          if (comm.rank() == 0) {
            results[variant] = r;
          }
        }
      } else {
        try (Cluster cluster = Backends.cluster(a.backend(), a.ranks(), options)) {
          cluster.run(comm -> {
            double[] r = measure(comm, settings[variant], units, count);
            if (comm.rank() == 0) {
              results[variant] = r;
            }
          });
        }
      }
    }
    if (results[0] != null) {
      String[] what = {"direct all-reduce + synchronize", "plan execute + synchronize"};
      for (int k = 0; k < what.length; k++) {
        double off = Math.min(results[0][k], results[2][k]);
        double on = results[1][k];
        System.out.printf(Locale.ROOT, "%s, F32 x %d: off %.3f us (%.3f, %.3f), on %.3f us: %+.3f us, %+.1f %%%n",
            what[k], count, off, results[0][k], results[2][k], on, on - off, 100 * (on - off) / off);
      }
    }
    if (a.mpi()) {
      MpiBackend.finalizeMpi();
    }
  }

  /** Per-run medians in µs: {direct call, plan execute}. */
  private static double[] measure(Communicator comm, boolean check, int units, long count) {
    PlanBuilder b = new PlanBuilder("cost.Agreement", comm, 0);
    int x = b.buffer("x", DataType.F32, count, "{\"n\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    try (Plan plan = b.build(); F32Buffer y = F32Buffer.allocate(comm, count)) {
      SteadyState.Unit direct = () -> {
        for (int i = 0; i < RUNS; i++) {
          comm.allReduce(y, y, ReduceOp.SUM, comm.stream());
          comm.stream().synchronize();
        }
      };
      SteadyState.Unit execute = () -> {
        for (int i = 0; i < RUNS; i++) {
          plan.execute(comm.stream());
          comm.stream().synchronize();
        }
      };
      return new double[] {time(comm, check, "direct", direct, units), time(comm, check, "plan", execute, units)};
    }
  }

  private static double time(Communicator comm, boolean check, String what, SteadyState.Unit unit, int units) {
    SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
    SteadyState.WarmUp warm = steady.warmUp(SteadyState.Rule.DEFAULT, RUNS, unit);
    SteadyState.Samples timed = steady.measure(RUNS, units, Long.MAX_VALUE, unit);
    if (comm.rank() == 0) {
      System.out.printf(Locale.ROOT, "  %s, %d ranks, agreement check %s, %s: median %.3f us per run (%d units of %d"
          + " runs); warm-up %s%n", comm.backendName(), comm.size(), check ? "on " : "off", what, timed.median() / 1e3,
          timed.count(), RUNS, warm.summary("runs"));
    }
    return timed.median() / 1e3;
  }
}
