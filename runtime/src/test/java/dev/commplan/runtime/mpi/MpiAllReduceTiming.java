package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.timing.SteadyState;
import java.util.Locale;

/**
 * A simple timing of the MPI backend, for docs/mpi.md: a one-field plan (an in-place F32 all-reduce SUM)
 * of several sizes, {@code execute} then {@code synchronize}, median of 30 runs after {@link SteadyState}'s
 * warm-up (at least 0.5 s, at most 3 s a size, so that the whole run fits bin/gpu-run's 40 s; the
 * processes agree when to stop through {@link CollectiveConsensus}); and a 64-field plan whose fields
 * coalesce into one call. Rank 0 prints. Not a test: run it with mpirun (see docs/mpi.md).
 */
public final class MpiAllReduceTiming {
  private MpiAllReduceTiming() {}

  public static void main(String[] args) {
    try (MpiCommunicator comm = MpiBackend.world()) {
      if (comm.rank() == 0) {
        System.out.println("mpi all-reduce timing, " + comm.size() + " processes, " + MpiBackend.libraryVersion().lines().findFirst().orElse(""));
      }
      for (long count : new long[] {1, 1 << 10, 1 << 16, 1 << 20, 1 << 22}) {
        time(comm, "1 field", count, 1);
      }
      time(comm, "64 fields of 1024 (coalesced)", 1024, 64);
    }
    MpiBackend.finalizeMpi();
  }

  private static void time(MpiCommunicator comm, String what, long count, int fields) {
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
      SteadyState.Unit run = () -> {
        plan.execute(comm.stream());
        comm.stream().synchronize();
      };
      SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
      SteadyState.WarmUp warm = steady.warmUp(SteadyState.Rule.DEFAULT.withTimes(0.5, 3), 1, run);
      double micros = steady.measure(1, 30, Long.MAX_VALUE, run).median() / 1e3;
      double bytes = 4.0 * count * fields;
      if (comm.rank() == 0) {
        System.out.println(String.format(Locale.ROOT, "  %-32s %,12d B  median %10.1f us  %8.1f MB/s (bytes/time)"
                + "  warm-up %s", what + (fields == 1 ? ", count " + count : ""), (long) bytes, micros, bytes / micros,
            warm.summary("runs")));
      }
    }
  }
}
