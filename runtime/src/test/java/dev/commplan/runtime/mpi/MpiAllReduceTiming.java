package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.Arrays;
import java.util.Locale;

/**
 * The MPI backend's all-reduce in its steady state, for docs/mpi.md, beside {@code bench/native/mpi_allreduce.c}
 * (which does the same with {@code MPI_Iallreduce} + {@code MPI_Wait}; {@code bench/native/mpi_compare.sh} runs
 * both). One call is a one-field plan's {@code execute} + {@code synchronize}: one in-place F32 SUM all-reduce.
 *
 * <p>The method is the C program's, step for step: warm up in batches (a batch's time is the median of its calls)
 * until it has run at least {@value #MIN_WARM_MS} ms and {@value #MIN_WARM_CALLS} calls (past the JIT's
 * thresholds; or {@value #CALLS_OR_MS} ms, for large messages) and the last {@value #STABLE_BATCHES} batch medians lie
 * within 5 % of their smallest, on every rank (an all-reduce MIN of each rank's verdict after each batch, outside
 * the timed calls), or give up after {@value #MAX_WARM_MS} ms and say "not-stable"; then time {@value
 * #MEASURE_BATCHES} batches call by call and print the slowest rank's median, p10 and p90, with the warm-up (calls,
 * milliseconds) and the first call. Then a plan of 64 fields of 1,024 that coalesce into one call, and the direct
 * call {@code comm.allReduce(x, x, SUM)} + {@code synchronize} of 1 and 1,024 floats.
 * Rank 0 prints. Not a test: run it with mpirun (docs/mpi.md); arguments, if any, are the counts.
 */
public final class MpiAllReduceTiming {
  private static final double MIN_WARM_MS = 1000;
  private static final long MIN_WARM_CALLS = 20000;
  private static final double CALLS_OR_MS = 5000;
  private static final double MAX_WARM_MS = 10000;
  private static final int STABLE_BATCHES = 5;
  private static final double STABLE_SPREAD = 0.05;
  private static final int MEASURE_BATCHES = 10;

  private MpiAllReduceTiming() {}

  public static void main(String[] args) {
    long[] counts = args.length > 0 ? Arrays.stream(args).mapToLong(Long::parseLong).toArray()
        : new long[] {1, 1 << 10, 1 << 16, 1 << 20, 1 << 22};
    try (MpiCommunicator comm = MpiBackend.world();
        I32Buffer verdict = I32Buffer.allocate(comm, 1);
        F64Buffer figures = F64Buffer.allocate(comm, 3)) {
      if (comm.rank() == 0) {
        System.out.printf(Locale.ROOT, "# java MpiAllReduceTiming: in-place F32 SUM, plan execute + synchronize, %d"
            + " processes, %s, %s%n", comm.size(), MpiBackend.libraryVersion().lines().findFirst().orElse(""),
            Runtime.version());
        System.out.printf(Locale.ROOT, "# steady state: batches until %.0f ms, %d calls (or %.0f ms) and %d batch"
            + " medians within %.0f%%; then %d batches timed; us, slowest rank%n", MIN_WARM_MS, MIN_WARM_CALLS,
            CALLS_OR_MS, STABLE_BATCHES, STABLE_SPREAD * 100, MEASURE_BATCHES);
        System.out.printf(Locale.ROOT, "%10s %12s %10s %10s %10s %8s %9s %9s %10s %s%n", "count", "bytes", "median_us",
            "p10_us", "p90_us", "calls", "warm_calls", "warm_ms", "first_us", "warm-up");
      }
      Agreement agree = new Agreement(comm, verdict, figures);
      for (long count : counts) {
        time(comm, agree, count, 1);
      }
      time(comm, agree, 1024, 64);
      for (long count : new long[] {1, 1024}) {
        timeDirect(comm, agree, count);
      }
    }
    MpiBackend.finalizeMpi();
  }

  /** The collectives the ranks agree through, outside the timed calls. */
  private record Agreement(MpiCommunicator comm, I32Buffer verdict, F64Buffer figures) {
    /** Whether every rank says yes. */
    boolean all(boolean mine) {
      verdict.set(0, mine ? 1 : 0);
      comm.allReduce(verdict, verdict, ReduceOp.MIN, comm.stream());
      comm.stream().synchronize();
      return verdict.get(0) != 0;
    }

    /** The element-wise maximum over the ranks. */
    double[] slowest(double... mine) {
      for (int i = 0; i < mine.length; i++) {
        figures.set(i, mine[i]);
      }
      comm.allReduce(figures, figures, ReduceOp.MAX, comm.stream());
      comm.stream().synchronize();
      return new double[] {figures.get(0), figures.get(1), figures.get(2)};
    }
  }

  /** One timed call: an enqueue and the wait for it. */
  private interface Call {
    void run();
  }

  /** A plan of {@code fields} fields of {@code count} floats, each all-reduced in place in step 0. */
  private static void time(MpiCommunicator comm, Agreement agree, long count, int fields) {
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
      time(comm, agree, label, 4L * count * fields, () -> {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      });
    }
  }

  /** The direct call {@code comm.allReduce(x, x, SUM)} of {@code count} floats, then the wait. */
  private static void timeDirect(MpiCommunicator comm, Agreement agree, long count) {
    try (F32Buffer x = F32Buffer.allocate(comm, count)) {
      x.fill(1f);
      time(comm, agree, "direct-" + count, 4L * count, () -> {
        comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
        comm.stream().synchronize();
      });
    }
  }

  private static void time(MpiCommunicator comm, Agreement agree, String label, long bytes, Call call) {
    int calls = (int) Math.max(5, bytes <= 4096 ? 500 : 2097152 / bytes);
    long[] times = new long[calls * MEASURE_BATCHES];
    long first = System.nanoTime();
    call.run();
    double firstUs = (System.nanoTime() - first) / 1e3;
    double[] medians = new double[16];
    int batches = 0;
    long warmCalls = 0;
    long start = System.nanoTime();
    boolean done = false;
    while (!done) {
      if (batches == medians.length) {
        medians = Arrays.copyOf(medians, batches * 2);
      }
      medians[batches++] = batch(call, times, 0, calls);
      warmCalls += calls;
      double elapsedMs = (System.nanoTime() - start) / 1e6;
      boolean longEnough = elapsedMs >= MIN_WARM_MS && (warmCalls >= MIN_WARM_CALLS || elapsedMs >= CALLS_OR_MS);
      done = agree.all(longEnough && stable(medians, batches) || elapsedMs >= MAX_WARM_MS);
    }
    double warmMs = (System.nanoTime() - start) / 1e6;
    boolean allStable = agree.all(stable(medians, batches));
    for (int k = 0; k < MEASURE_BATCHES; k++) {
      batch(call, times, k * calls, calls);
    }
    Arrays.sort(times);
    int total = times.length;
    double[] slowest = agree.slowest(times[total / 10] / 1e3, times[total / 2] / 1e3, times[total * 9 / 10] / 1e3);
    if (comm.rank() == 0) {
      System.out.printf(Locale.ROOT, "%10s %12d %10.2f %10.2f %10.2f %8d %9d %9.0f %10.1f %s%n", label, bytes,
          slowest[1], slowest[0], slowest[2], total, warmCalls, warmMs, firstUs, allStable ? "stable" : "not-stable");
    }
  }

  /** Times {@code calls} calls into {@code times[from..]}; returns their median in µs. */
  private static double batch(Call call, long[] times, int from, int calls) {
    for (int i = from; i < from + calls; i++) {
      long t0 = System.nanoTime();
      call.run();
      times[i] = System.nanoTime() - t0;
    }
    long[] sorted = Arrays.copyOfRange(times, from, from + calls);
    Arrays.sort(sorted);
    return sorted[calls / 2] / 1e3;
  }

  /** Whether the last {@value #STABLE_BATCHES} medians lie within {@value #STABLE_SPREAD} of their smallest. */
  private static boolean stable(double[] medians, int n) {
    if (n < STABLE_BATCHES) {
      return false;
    }
    double lo = Double.MAX_VALUE;
    double hi = 0;
    for (int i = n - STABLE_BATCHES; i < n; i++) {
      lo = Math.min(lo, medians[i]);
      hi = Math.max(hi, medians[i]);
    }
    return hi <= lo * (1 + STABLE_SPREAD);
  }
}
