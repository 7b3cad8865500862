package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.Random;
import org.junit.jupiter.api.Test;

/**
 * No growth in native memory or threads over many life cycles: 1,000 build / execute / synchronize /
 * close cycles of a plan on one local cluster, and 100 cluster create / run / close cycles. Native memory
 * is the local backend's allocation accounting ({@link LocalCluster#openBytes()}: each cluster's off-heap
 * blocks not yet freed); threads are the JVM's live threads named {@code commplan-*} (rank threads and stream
 * workers), exactly, and all live threads, within a small allowance for the JVM's own (JIT, GC).
 */
class LocalLeakCycleTest {
  private static final int N = 256;

  private static long commplanThreads() {
    return LiveThreads.named("commplan-").size();
  }

  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  /** x all-reduced in place (step 0), part gathered into all (step 1), bias bound by the caller. */
  private static Plan plan(Communicator comm, I32Buffer bias) {
    PlanBuilder b = new PlanBuilder("t.Cycle", comm, 0);
    int x = b.buffer("x", DataType.F32, N, "{\"n\"}", null);
    int part = b.buffer("part", DataType.F32, N, "{\"n\"}", null);
    int all = b.buffer("all", DataType.F32, (long) N * comm.size(), "{\"ranks\", \"n\"}", null);
    int bi = b.buffer("bias", DataType.I32, 16, "{\"16\"}", bias);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allReduce(0, bi, bi, ReduceOp.MAX);
    b.allGather(1, part, all);
    return b.build();
  }

  /** One cycle: build, fill with seeded data, execute, synchronize, check, close. */
  private static void cycle(Communicator comm, I32Buffer bias, int iteration) {
    int ranks = comm.size();
    float[][] xs = new float[ranks][N];
    for (int r = 0; r < ranks; r++) {
      Random random = new Random(31L * iteration + r);
      for (int i = 0; i < N; i++) {
        xs[r][i] = random.nextInt(2000) - 1000;
      }
    }
    try (Plan plan = plan(comm, bias)) {
      F32Buffer x = (F32Buffer) plan.buffer(0);
      F32Buffer part = (F32Buffer) plan.buffer(1);
      F32Buffer all = (F32Buffer) plan.buffer(2);
      x.copyFrom(xs[comm.rank()]);
      part.fill(iteration + comm.rank());
      bias.set(iteration % 16, iteration * ranks + comm.rank());
      plan.execute(comm.stream());
      comm.stream().synchronize();
      float[] sum = new float[N];
      for (int r = 0; r < ranks; r++) {
        for (int i = 0; i < N; i++) {
          sum[i] += xs[r][i];
        }
      }
      assertArrayEquals(sum, x.toArray());
      for (int r = 0; r < ranks; r++) {
        assertEquals(iteration + r, all.get((long) r * N + N - 1));
      }
      assertEquals(iteration * ranks + ranks - 1, bias.get(iteration % 16));
    }
  }

  @Test
  void aThousandPlanCyclesOnOneClusterLeakNoMemoryAndNoThreads() {
    int cycles = 1000;
    try (LocalCluster cluster = new LocalCluster(2)) {
      I32Buffer[] biases = new I32Buffer[cluster.size()];
      cluster.run(comm -> {
        biases[comm.rank()] = I32Buffer.allocate(comm, 16); // bound to every plan, lives across the cycles
        cycle(comm, biases[comm.rank()], 0); // warm up: JIT, lazily made objects
      });
      // Measured between runs, when every rank is idle: the figures are exact.
      long bytes0 = cluster.openBytes();
      long blocks0 = cluster.openBlocks();
      long commThreads0 = commplanThreads();
      long threads0 = THREADS.getThreadCount();
      long start = System.nanoTime();
      cluster.run(comm -> {
        for (int i = 1; i <= 100; i++) {
          cycle(comm, biases[comm.rank()], i);
        }
      });
      long bytes100 = cluster.openBytes();
      long threads100 = THREADS.getThreadCount();
      cluster.run(comm -> {
        for (int i = 101; i <= cycles; i++) {
          cycle(comm, biases[comm.rank()], i);
        }
      });
      long elapsed = System.nanoTime() - start;
      long bytes = cluster.openBytes();
      long blocks = cluster.openBlocks();
      long commThreads = commplanThreads();
      long threads = THREADS.getThreadCount();
      System.err.printf("[commplan] %d plan cycles on 2 ranks: %.1f ms; open local bytes %d at start, %d after 100,"
              + " %d after %d; open blocks %d -> %d; commplan threads %d -> %d; all threads %d, %d after 100, %d"
              + " after %d%n", cycles, elapsed / 1e6, bytes0, bytes100, bytes, cycles, blocks0, blocks,
          commThreads0, commThreads, threads0, threads100, threads, cycles);
      assertEquals(bytes0, bytes100, "open local bytes after 100 cycles");
      assertEquals(bytes0, bytes, "open local bytes after " + cycles + " cycles");
      assertEquals(blocks0, blocks, "open local blocks");
      assertEquals(commThreads0, commThreads, "commplan threads");
      assertTrue(threads - threads0 <= 4, "live threads grew: " + threads0 + " -> " + threads);
    }
  }

  @Test
  void aHundredClusterCyclesLeakNoMemoryAndNoThreads() {
    int cycles = 100;
    cycleOneCluster(0); // warm up
    long commThreads0 = commplanThreads();
    long threads0 = THREADS.getThreadCount();
    long start = System.nanoTime();
    long leftBytes = 0;
    long leftBlocks = 0;
    for (int i = 1; i <= cycles; i++) {
      LocalCluster closed = cycleOneCluster(i);
      leftBytes += closed.openBytes();
      leftBlocks += closed.openBlocks();
    }
    long elapsed = System.nanoTime() - start;
    long commThreads = commplanThreads();
    long threads = THREADS.getThreadCount();
    System.err.printf("[commplan] %d cluster cycles of 4 ranks: %.1f ms; local bytes / blocks left open after"
            + " close, summed over the clusters: %d / %d; commplan threads %d -> %d; all threads %d -> %d (peak %d)%n",
        cycles, elapsed / 1e6, leftBytes, leftBlocks, commThreads0, commThreads, threads0, threads,
        THREADS.getPeakThreadCount());
    assertEquals(0, leftBytes, "local bytes left open by closed clusters");
    assertEquals(0, leftBlocks, "local blocks left open by closed clusters");
    assertEquals(commThreads0, commThreads, "commplan threads");
    assertTrue(threads - threads0 <= 4, "live threads grew: " + threads0 + " -> " + threads);
  }

  /** One cluster's life, returned closed; it allocated, and left to its close, a plan and a buffer per rank. */
  private static LocalCluster cycleOneCluster(int iteration) {
    LocalCluster cluster = new LocalCluster(4);
    try (cluster) {
      cluster.run(comm -> {
        I32Buffer bias = I32Buffer.allocate(comm, 16);
        cycle(comm, bias, iteration);
        plan(comm, bias); // not closed: the cluster's close frees it, and bias
      });
      if (cluster.openBlocks() < 2L * cluster.size()) {
        throw new AssertionError("accounting saw only " + cluster.openBlocks() + " open blocks before close");
      }
    }
    return cluster;
  }
}
