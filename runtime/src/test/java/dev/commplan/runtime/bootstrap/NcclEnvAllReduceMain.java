package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.launch.LaunchEnvironment;
import dev.commplan.runtime.launch.ProcessInfo;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.runtime.nccl.NcclCommunicator;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;

/**
 * One process of a multi-process NCCL job, bootstrapped from the launcher's variables: builds the
 * communicator through {@link NcclBackend#processCommunicator}, all-reduces rank-dependent data directly and through
 * a plan (whose fingerprint is checked across the processes at build), checks the sums, and prints
 * {@code OK rank r of n on device d} (exit 0) or {@code FAIL ...} (exit 2). Run it under torchrun-style
 * variables, srun or mpirun; {@code ProcessBootstrapGpuTest} starts one per GPU.
 *
 * <pre>RANK=0 WORLD_SIZE=1 LOCAL_RANK=0 MASTER_ADDR=127.0.0.1 MASTER_PORT=29500 \
 *   java --enable-native-access=ALL-UNNAMED -cp ... dev.commplan.runtime.bootstrap.NcclEnvAllReduceMain</pre>
 */
public final class NcclEnvAllReduceMain {
  private NcclEnvAllReduceMain() {}

  public static void main(String[] args) {
    try {
      ProcessInfo me = LaunchEnvironment.fromEnvironment();
      Rendezvous.Options options = Rendezvous.Options.defaults().withJoinTimeout(Duration.ofSeconds(60))
          .withOpTimeout(Duration.ofSeconds(60));
      int n = 1 << 16;
      try (NcclCommunicator comm = NcclBackend.processCommunicator(me, options, CommOptions.defaults());
          F32Buffer x = F32Buffer.allocate(comm, n)) {
        float[] data = new float[n];
        for (int i = 0; i < n; i++) {
          data[i] = (me.rank() + 1) * (i % 7);
        }
        x.copyFrom(data);
        comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
        comm.stream().synchronize();
        float[] got = x.toArray();
        float ranksSum = me.size() * (me.size() + 1) / 2f;
        for (int i = 0; i < n; i++) {
          if (got[i] != ranksSum * (i % 7)) {
            throw new AssertionError("element " + i + " is " + got[i] + ", expected " + ranksSum * (i % 7));
          }
        }
        PlanBuilder b = new PlanBuilder("bootstrap.EnvPlan", comm, 0);
        int g = b.buffer("grads", DataType.F32, 4096, "{\"4096\"}", null);
        b.allReduce(0, g, g, ReduceOp.AVG);
        try (Plan plan = b.build()) {
          F32Buffer grads = (F32Buffer) plan.buffer(g);
          grads.fill(me.rank());
          plan.execute(comm.stream());
          comm.stream().synchronize();
          float avg = (me.size() - 1) / 2f;
          if (grads.get(4095) != avg) {
            throw new AssertionError("plan AVG gave " + grads.get(4095) + ", expected " + avg);
          }
        }
        System.out.println("OK rank " + me.rank() + " of " + me.size() + " on device " + comm.device() + " (" + me
            + "; " + comm + ")");
      }
      System.exit(0);
    } catch (RuntimeException | AssertionError e) {
      System.out.println("FAIL " + e);
      e.printStackTrace(System.out);
      System.exit(2);
    }
  }
}
