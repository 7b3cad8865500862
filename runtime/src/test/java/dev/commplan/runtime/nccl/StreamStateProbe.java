package dev.commplan.runtime.nccl;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveConsensus;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.memory.NcclMemory;
import dev.commplan.timing.SteadyState;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.Locale;

/**
 * Whether a stream that has never held work synchronizes faster than one that has (docs/reliability/agreement-cost.md,
 * its cost on one rank). On one rank an in-place all-reduce enqueues nothing, so in
 * {@code AgreementCheckCost nccl 1} the stream of the check-off runs never holds work, while the check's
 * all-gathers put work on the other one. Timed here, each in the steady state:
 *
 * <ol>
 *   <li>{@code cudaStreamQuery} of a new stream, and of the same stream once a copy on it has finished;
 *   <li>in-place F32 all-reduce + synchronize (the check off), on the communicator's stream before any
 *       work, then after one out-of-place all-gather on it, then with the check on.
 * </ol>
 *
 * <pre>
 *   .device/run dev.commplan.runtime.nccl.StreamStateProbe [units] [count]
 * </pre>
 */
public final class StreamStateProbe {
  private static final int RUNS = Agreement.MAX_INTERVAL;
  private static final int QUERIES = 200_000;

  private StreamStateProbe() {}

  public static void main(String[] args) {
    int units = args.length > 0 ? Integer.parseInt(args[0]) : 200;
    long count = args.length > 1 ? Long.parseLong(args[1]) : 1024;
    String why = NcclBackend.unavailableReason(1);
    if (why != null) {
      System.out.println("# StreamStateProbe skipped: " + why);
      return;
    }
    try (Cluster cluster = NcclBackend.cluster(1, CommOptions.defaults().withAgreementCheck(false))) {
      cluster.run(comm -> queries((NcclCommunicator) comm));
    }
    for (int round = 1; round <= 2; round++) {
      try (Cluster cluster = NcclBackend.cluster(1, CommOptions.defaults().withAgreementCheck(false))) {
        int r = round;
        cluster.run(comm -> {
          try (F32Buffer y = F32Buffer.allocate(comm, count); F32Buffer all = F32Buffer.allocate(comm, count)) {
            runs(comm, y, units, "round " + r + ", check off, stream never held work");
            comm.allGather(y, all, comm.stream());
            comm.stream().synchronize();
            runs(comm, y, units, "round " + r + ", check off, after one all-gather on it");
          }
        });
      }
      try (Cluster cluster = NcclBackend.cluster(1, CommOptions.defaults().withAgreementCheck(true))) {
        int r = round;
        cluster.run(comm -> {
          try (F32Buffer y = F32Buffer.allocate(comm, count)) {
            runs(comm, y, units, "round " + r + ", check on");
          }
        });
      }
    }
  }

  private static void queries(NcclCommunicator comm) {
    CheckedCuda.cudaSetDevice(comm.device());
    long stream = CheckedCuda.cudaStreamCreateNonBlocking();
    try (F32Buffer y = F32Buffer.allocate(comm, 1)) {
      print("cudaStreamQuery, new stream", query(stream));
      long[] one = {1};
      int rc = dev.commplan.runtime.nccl.binding.raw.Cuda.cudaMemcpyAsyncToDevice(NcclMemory.pointer(y),
          MemorySegment.ofArray(one), 4, stream);
      CheckedCuda.cuda("cudaMemcpyAsync", rc);
      CheckedCuda.cudaStreamSynchronize(stream);
      print("cudaStreamQuery, after a finished copy on it", query(stream));
    } finally {
      CheckedCuda.cudaStreamDestroy(stream);
    }
  }

  private static double[] query(long stream) {
    for (int i = 0; i < QUERIES; i++) {
      CheckedCuda.cudaStreamQuery(stream);
    }
    long[] t = new long[200];
    for (int k = 0; k < t.length; k++) {
      long t0 = System.nanoTime();
      for (int i = 0; i < 1000; i++) {
        CheckedCuda.cudaStreamQuery(stream);
      }
      t[k] = System.nanoTime() - t0;
    }
    Arrays.sort(t);
    return new double[] {t[t.length / 2] / 1e6, t[0] / 1e6, t[t.length * 9 / 10] / 1e6};
  }

  private static void runs(Communicator comm, F32Buffer y, int units, String what) {
    SteadyState.Unit unit = () -> {
      for (int i = 0; i < RUNS; i++) {
        comm.allReduce(y, y, ReduceOp.SUM, comm.stream());
        comm.stream().synchronize();
      }
    };
    SteadyState steady = new SteadyState(CollectiveConsensus.of(comm));
    SteadyState.WarmUp warm = steady.warmUp(SteadyState.Rule.DEFAULT, RUNS, unit);
    SteadyState.Samples timed = steady.measure(RUNS, units, Long.MAX_VALUE, unit);
    print("in-place all-reduce F32 x " + y.length() + " + synchronize, " + what + " (warm-up " + warm.summary("runs")
        + ")", new double[] {timed.median() / 1e3, timed.min() / 1e3, timed.p90() / 1e3});
  }

  private static void print(String what, double[] us) {
    System.out.printf(Locale.ROOT, "%-120s median %.3f us  min %.3f  p90 %.3f%n", what, us[0], us[1], us[2]);
  }
}
