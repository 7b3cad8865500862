package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.Random;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The host-access guard on the NCCL backend (one GPU): reading what an execute writes before the CUDA
 * stream is synchronized throws; synchronize clears; a wrapped external stream is cleared by
 * synchronizing the wrapper.
 */
@NcclGpuTest
class NcclHostAccessGuardGpuTest {
  private static Cluster cluster;

  @BeforeAll
  static void start() {
    cluster = NcclBackend.cluster(1);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static Plan plan(Communicator comm, int n) {
    PlanBuilder b = new PlanBuilder("t.GpuGuard", comm, 0);
    int x = b.buffer("x", DataType.F32, n, "{\"n\"}", null);
    int part = b.buffer("part", DataType.F32, n, "{\"n\"}", null);
    int all = b.buffer("all", DataType.F32, n, "{\"ranks\", \"n\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    b.allGather(1, part, all);
    return b.build();
  }

  private static float[] random(long seed, int n) {
    Random random = new Random(seed);
    float[] values = new float[n];
    for (int i = 0; i < n; i++) {
      values[i] = random.nextInt(1000) - 500;
    }
    return values;
  }

  @Test
  void readingBeforeTheCudaStreamIsSynchronizedThrows() {
    cluster.run(comm -> {
      int n = 1 << 16;
      float[] data = random(5, n);
      try (Plan plan = plan(comm, n)) {
        F32Buffer x = (F32Buffer) plan.buffer(0);
        F32Buffer part = (F32Buffer) plan.buffer(1);
        F32Buffer all = (F32Buffer) plan.buffer(2);
        x.copyFrom(data);
        part.copyFrom(data);
        plan.execute(comm.stream());
        BufferInFlightException e = assertThrows(BufferInFlightException.class, () -> all.copyTo(new float[n]));
        assertTrue(e.getMessage().contains("field 'all'") && e.getMessage().contains("NcclStream"), e.getMessage());
        assertThrows(BufferInFlightException.class, () -> part.set(0, 1f));
        comm.stream().synchronize();
        assertArrayEquals(data, x.toArray()); // one rank: the sum is the data
        assertArrayEquals(data, all.toArray());
      }
    });
  }

  @Test
  void aWrappedStreamIsClearedBySynchronizingTheWrapper() {
    cluster.run(comm -> {
      int n = 1024;
      try (Plan plan = plan(comm, n)) {
        F32Buffer all = (F32Buffer) plan.buffer(2);
        Stream wrapped = NcclInterop.wrapStream(comm, NcclInterop.cudaStream(comm.stream()));
        plan.execute(wrapped);
        assertThrows(BufferInFlightException.class, () -> all.get(0));
        comm.stream().synchronize(); // the same CUDA stream, but another Stream object: does not clear
        assertThrows(BufferInFlightException.class, () -> all.get(0));
        wrapped.synchronize();
        assertEquals(0f, all.get(0));
      }
    });
  }
}
