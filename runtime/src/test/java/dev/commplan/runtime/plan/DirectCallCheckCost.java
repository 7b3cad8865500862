package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.agreement.RecordOnly;
import dev.commplan.timing.SteadyState;
import java.util.Locale;

/**
 * What the agreement check costs a direct call (issue 34, item 9), measured on exactly the loop an outside
 * tester timed on an H200: batches of {@value #BATCH} in-place all-reduces of F32 x {@code count} (256) and
 * one synchronize, on one rank. The check off, on, off, on, each on a fresh cluster (as a program starts), then
 * the check off on a stream that has held work (one all-gather first: the check's own calls put work on the
 * stream, which makes a synchronize slower on NCCL, docs/reliability/agreement-cost.md); each variant warms up
 * until the per-call time is stable ({@link SteadyState}'s default rule) and prints its warm-up. A timed unit is
 * {@value #BATCHES} batches, a multiple of every check interval, so each carries the same number of checks. First, the
 * host's own work per call with the check on, without any device work: an {@link Agreement} whose checks are
 * skipped, recording {@code 10^7} calls.
 *
 * <pre>
 *   .device/run dev.commplan.runtime.plan.DirectCallCheckCost nccl [units] [count]     (the H200, one GPU)
 *   java -cp ... dev.commplan.runtime.plan.DirectCallCheckCost local [units] [count]   (here, for the method)
 * </pre>
 */
public final class DirectCallCheckCost {
  static final int BATCH = 100;
  static final int BATCHES = 256;
  private static final long RECORDED = 10_000_000;

  private DirectCallCheckCost() {}

  public static void main(String[] args) {
    String backend = args.length > 0 ? args[0] : "nccl";
    int units = args.length > 1 ? Integer.parseInt(args[1]) : 100;
    long count = args.length > 2 ? Long.parseLong(args[2]) : 256;
    System.out.printf(Locale.ROOT, "# DirectCallCheckCost %s: batches of %d in-place all-reduce F32 x %d + one"
        + " synchronize, 1 rank; %d units of %d batches each; check interval up to %d calls%n", backend, BATCH, count,
        units, BATCHES, Agreement.MAX_INTERVAL);
    try (Cluster cluster = Backends.cluster(backend, 1, CommOptions.defaults().withAgreementCheck(false))) {
      cluster.run(comm -> recordingOnly(comm.stream()));
    }
    String[] names = {"off", "on", "off", "on", "off, stream has held work"};
    boolean[] check = {false, true, false, true, false};
    double[] median = new double[names.length];
    for (int v = 0; v < names.length; v++) {
      int variant = v;
      try (Cluster cluster = Backends.cluster(backend, 1, CommOptions.defaults().withAgreementCheck(check[v]))) {
        cluster.run(comm -> median[variant] = time(comm, names[variant], variant == 4, units, count));
      }
    }
    double off = (median[0] + median[2]) / 2;
    double on = (median[1] + median[3]) / 2;
    System.out.printf(Locale.ROOT, "check on - off: %+.3f us per call (off %.3f, %.3f; on %.3f, %.3f); against the"
        + " stream that has held work: %+.3f us%n", on - off, median[0], median[2], median[1], median[3],
        on - median[4]);
  }

  /** Per-call median in µs of the tester's loop on {@code comm}. */
  private static double time(Communicator comm, String name, boolean warmStream, int units, long count) {
    try (F32Buffer y = F32Buffer.allocate(comm, count); F32Buffer all = F32Buffer.allocate(comm, count)) {
      Stream stream = comm.stream();
      if (warmStream) {
        comm.allGather(y, all, stream);
        stream.synchronize();
      }
      SteadyState.Unit unit = () -> {
        for (int b = 0; b < BATCHES; b++) {
          for (int i = 0; i < BATCH; i++) {
            comm.allReduce(y, y, ReduceOp.SUM, stream);
          }
          stream.synchronize();
        }
      };
      long calls = (long) BATCH * BATCHES;
      SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
      SteadyState.WarmUp warm = steady.warmUp(SteadyState.Rule.DEFAULT, calls, unit);
      SteadyState.Samples timed = steady.measure(calls, units, Long.MAX_VALUE, unit);
      System.out.printf(Locale.ROOT, "  %s, check %-27s median %.3f us per call (p90 %.3f, %d units of %d calls);"
          + " warm-up %s%n", comm.backendName(), name + ":", timed.median() / 1e3, timed.p90() / 1e3, timed.count(),
          calls, warm.summary("calls"));
      return timed.median() / 1e3;
    }
  }

  /** The check's host work per call, alone: an agreement check that records and whose comparisons are skipped. */
  private static void recordingOnly(Stream stream) {
    Agreement check = new Agreement(new RecordOnly(), 0, 1, "world", true);
    for (int round = 0; round < 5; round++) {
      long start = System.nanoTime();
      for (long i = 0; i < RECORDED; i++) {
        check.collective(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, 256, stream);
      }
      double ns = (System.nanoTime() - start) / (double) RECORDED;
      System.out.printf(Locale.ROOT, "  host work of the check alone, round %d: %.2f ns per call (%d calls)%n", round,
          ns, RECORDED);
    }
  }
}
