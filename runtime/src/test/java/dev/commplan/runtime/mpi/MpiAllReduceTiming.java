package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.timing.SteadyState;
import java.util.Arrays;
import java.util.Locale;

/**
 * The MPI backend's all-reduce in its steady state, for docs/mpi/figures.md, beside {@code
 * bench/native/mpi_allreduce.c}
 * (the same calls as {@code MPI_Iallreduce} + {@code MPI_Wait}; {@code bench/native/mpi_compare.sh} runs both).
 * One call is a one-field plan's {@code execute} + {@code synchronize}: one in-place F32 SUM all-reduce.
 *
 * <p>{@link SteadyState}'s rule ({@link SteadyState.Rule#DEFAULT}: windows of 10 units within 5 %, the JIT
 * quiet, at least 1 s; capped at 3 s a row here), the ranks agreeing through {@link CollectiveConsensus}. A unit is a batch of calls (500 up
 * to 4 KiB, fewer above: about 2 MiB a batch, at least 5); then {@value #MEASURED_UNITS} units are timed, and
 * each row is the median, fastest and p90 unit's time per call (averaged over the ranks), with the warm-up
 * (calls, milliseconds, stable or cap) and the first call. The C program follows the same rule but for the JIT.
 * Then a plan of 64 fields of 1,024 that coalesce into one call, and the direct call {@code comm.allReduce(x, x,
 * SUM)} + {@code synchronize} of 1 and 1,024 floats. Rank 0 prints. Not a test: run it with mpirun
 * (docs/mpi/figures.md); arguments, if any, are the counts.
 */
public final class MpiAllReduceTiming {
  private static final int MEASURED_UNITS = 30;
  /** The default rule capped at 3 s a row, so that the 8 rows fit bin/gpu-run's 40 s per command. */
  private static final SteadyState.Rule RULE = SteadyState.Rule.DEFAULT.withTimes(-1, 3);

  private MpiAllReduceTiming() {}

  public static void main(String[] args) {
    long[] counts = args.length > 0 ? Arrays.stream(args).mapToLong(Long::parseLong).toArray()
        : new long[] {1, 1 << 10, 1 << 16, 1 << 20, 1 << 22};
    try (MpiCommunicator comm = MpiBackend.world()) {
      if (comm.rank() == 0) {
        System.out.printf(Locale.ROOT, "# java MpiAllReduceTiming: in-place F32 SUM, plan execute + synchronize, %d"
            + " processes, %s, %s%n", comm.size(), MpiBackend.libraryVersion().lines().findFirst().orElse(""),
            Runtime.version());
        System.out.println("# " + RULE.describe("batch of calls", "call") + "; then "
            + MEASURED_UNITS + " batches timed; us per call, averaged over the ranks");
        System.out.printf(Locale.ROOT, "%10s %12s %10s %10s %10s %8s %10s %9s %10s %s%n", "count", "bytes", "median_us",
            "min_us", "p90_us", "batch", "warm_calls", "warm_ms", "first_us", "warm-up");
      }
      SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
      for (long count : counts) {
        time(comm, steady, count, 1);
      }
      time(comm, steady, 1024, 64);
      for (long count : new long[] {1, 1024}) {
        timeDirect(comm, steady, count);
      }
    }
    MpiBackend.finalizeMpi();
  }

  /** A plan of {@code fields} fields of {@code count} floats, each all-reduced in place in step 0. */
  private static void time(MpiCommunicator comm, SteadyState steady, long count, int fields) {
    PlanBuilder b = new PlanBuilder("timing.AllReduce", comm, 0);
    int[] handles = new int[fields];
    for (int f = 0; f < fields; f++) {
      handles[f] = b.buffer("f" + f, DataType.F32, count, "{\"" + count + "\"}", null);
      b.allReduce(0, handles[f], handles[f], ReduceOp.SUM);
    }
    try (Plan plan = b.build()) {
      for (int h : handles) {
        ((F32Buffer) plan.buffer(h)).fill(1f);
      }
      String label = fields == 1 ? Long.toString(count) : fields + "x" + count;
      time(comm, steady, label, 4L * count * fields, () -> {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      });
    }
  }

  /** The direct call {@code comm.allReduce(x, x, SUM)} of {@code count} floats, then the wait. */
  private static void timeDirect(MpiCommunicator comm, SteadyState steady, long count) {
    try (F32Buffer x = F32Buffer.allocate(comm, count)) {
      x.fill(1f);
      time(comm, steady, "direct-" + count, 4L * count, () -> {
        comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
        comm.stream().synchronize();
      });
    }
  }

  private static void time(MpiCommunicator comm, SteadyState steady, String label, long bytes, Runnable call) {
    int calls = (int) Math.max(5, bytes <= 4096 ? 500 : 2097152 / bytes);
    long first = System.nanoTime();
    call.run();
    double firstUs = (System.nanoTime() - first) / 1e3;
    SteadyState.Unit batch = () -> {
      for (int i = 0; i < calls; i++) {
        call.run();
      }
    };
    SteadyState.WarmUp warm = steady.warmUp(RULE, calls, batch);
    SteadyState.Samples samples = steady.measure(calls, MEASURED_UNITS, Long.MAX_VALUE, batch);
    if (comm.rank() == 0) {
      System.out.printf(Locale.ROOT, "%10s %12d %10.2f %10.2f %10.2f %8d %10d %9.0f %10.1f %s%n", label, bytes,
          samples.median() / 1e3, samples.min() / 1e3, samples.p90() / 1e3, calls, warm.calls(), warm.millis(), firstUs,
          warm.ending().label());
    }
  }
}
