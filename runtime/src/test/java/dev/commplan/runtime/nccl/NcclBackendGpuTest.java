package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I64Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.memory.HostCopies;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The NCCL binding on a real GPU: version, error mapping, memory, interop, in/out of place through the
 * direct calls, a compiled schedule and a Plan, groups, failure handling. Uses one rank on device 0
 * (on one GPU only a 1-rank communicator runs); with more GPUs the correctness suite covers N ranks.
 */
@NcclGpuTest
class NcclBackendGpuTest {
  private static Cluster cluster;

  @BeforeAll
  static void start() {
    System.err.println("[commplan] " + NcclBackend.describeEnvironment());
    cluster = NcclBackend.cluster(1);
  }

  @AfterAll
  static void stop() {
    if (cluster != null) {
      cluster.close();
    }
  }

  private static void onRank(dev.commplan.runtime.RankTask task) {
    cluster.run(task);
  }

  private static float[] iota(int n, float base) {
    float[] a = new float[n];
    for (int i = 0; i < n; i++) {
      a[i] = base + i;
    }
    return a;
  }

  // ---------------------------------------------------------------- environment

  @Test
  void versionIsReadAndNewEnoughForAvgAndBf16() {
    NcclVersion v = NcclBackend.version();
    System.err.println("[commplan] NCCL " + v + " (code " + v.code() + ")");
    assertEquals(2, v.major());
    assertTrue(v.atLeast(NcclVersion.AVG_AND_BF16), v.toString());
    onRank(c -> assertEquals(v, ((NcclCommunicator) c).ncclVersion()));
  }

  @Test
  void communicatorReportsRankSizeAndDevice() {
    onRank(c -> {
      NcclCommunicator nc = assertInstanceOf(NcclCommunicator.class, c);
      assertEquals(0, nc.rank());
      assertEquals(1, nc.size());
      assertEquals(0, nc.device());
      assertEquals("nccl", nc.backendName());
      assertEquals(0, CheckedCuda.cudaGetDevice(), "the rank's thread is on its device");
    });
  }

  @Test
  void moreRanksThanGpusSaysHowManyWereFound() {
    int devices = NcclBackend.deviceCount();
    String why = NcclBackend.unavailableReason(devices + 1);
    assumeTrue(why != null,
        "ranks may share a GPU in this JVM (NCCL 2.30 and the opt-in), so more ranks than GPUs are no error");
    BackendUnavailableException e =
        assertThrows(BackendUnavailableException.class, () -> NcclBackend.cluster(devices + 1));
    assertTrue(e.getMessage().contains("an NCCL cluster of " + (devices + 1) + " ranks on " + devices + " CUDA device"),
        e.getMessage());
  }

  // ---------------------------------------------------------------- error mapping

  @Test
  void ncclErrorsBecomeNcclExceptionsWithNcclsTexts() {
    // On a communicator of its own (initRank), so that whatever NCCL remembers of the error stays there.
    NcclCommunicator nc = NcclBackend.initRank(0, 1, NcclBackend.uniqueId(), 0);
    try {
      Communicator c = nc;
      F32Buffer b = F32Buffer.allocate(c, 16);
      long p = NcclInterop.devicePointer(b);
      // An invalid ncclDataType_t reaches NCCL only through the raw layer: the API cannot express it.
      int rc = NcclCollectives.ncclAllReduce(p, p, 16, 99, 0, nc.handle(), NcclInterop.cudaStream(c.stream()));
      assertEquals(NcclResult.INVALID_ARGUMENT.code(), rc);
      NcclException e = CheckedNccl.ncclError("ncclAllReduce", rc, nc.handle());
      assertEquals(NcclResult.INVALID_ARGUMENT, e.result());
      assertEquals("ncclAllReduce", e.function());
      assertNotNull(e.errorString());
      System.err.println("[commplan] mapped: " + e.getMessage());
      assertTrue(e.getMessage().startsWith("ncclAllReduce failed: ncclInvalidArgument (4): "), e.getMessage());
      assertTrue(e.lastError() != null && !e.lastError().isBlank(), "ncclGetLastError said nothing");
      b.close();
    } finally {
      nc.abort();
    }
  }

  @Test
  void cudaErrorsBecomeCudaExceptionsWithCudasTexts() {
    onRank(c -> {
      CudaException e = assertThrows(CudaException.class, () -> CheckedCuda.cudaSetDevice(9999));
      System.err.println("[commplan] mapped: " + e.getMessage());
      assertEquals(CudaError.INVALID_DEVICE, e.error());
      assertEquals("cudaErrorInvalidDevice", e.cudaName());
      assertEquals("cudaSetDevice", e.function());
      assertTrue(e.getMessage().startsWith("cudaSetDevice failed: cudaErrorInvalidDevice (101): "), e.getMessage());
      CheckedCuda.cudaSetDevice(((NcclCommunicator) c).device());
    });
  }

  @Test
  void argumentErrorsAreCaughtBeforeNccl() {
    onRank(c -> {
      try (F32Buffer a = F32Buffer.allocate(c, 8); F32Buffer b = F32Buffer.allocate(c, 9)) {
        // The shared rules (CallRules): the local backend rejects the same calls with the same messages.
        assertThrows(BufferBindingException.class, () -> c.allReduce(a, b, ReduceOp.SUM, c.stream()));
        assertThrows(IllegalArgumentException.class, () -> c.broadcast(a, a, 1, c.stream()));
        assertThrows(BufferBindingException.class, () -> c.allGather(a, b, c.stream()));
        Buffer shifted = Buffer.view(DataType.F32, b.memory(), 4, 8);
        assertThrows(BufferBindingException.class, () -> c.allReduce(shifted, b8(b), ReduceOp.SUM, c.stream()));
        assertThrows(IllegalStateException.class, c::groupEnd);
      }
    });
  }

  private static Buffer b8(F32Buffer b) {
    return Buffer.view(DataType.F32, b.memory(), 0, 8);
  }

  // ---------------------------------------------------------------- memory

  @Test
  void allocationIsZeroedAndCopiesRoundTripInChunks() {
    onRank(c -> {
      int n = (int) (HostCopies.CHUNK_BYTES / 4 * 2 + 12345); // more than two chunks
      try (F32Buffer b = F32Buffer.allocate(c, n)) {
        float[] back = b.toArray();
        for (float f : back) {
          assertEquals(0f, f);
        }
        float[] data = iota(n, 0.5f);
        b.copyFrom(data);
        assertArrayEquals(data, b.toArray());
        b.set(n - 1, -7f);
        assertEquals(-7f, b.get(n - 1));
      }
      DeviceMemory m = DeviceMemory.allocate(c, 64);
      m.close();
      m.close(); // idempotent
      assertTrue(m.isClosed());
    });
  }

  // ---------------------------------------------------------------- collectives, direct

  @Test
  void directCollectivesInAndOutOfPlace() {
    onRank(c -> {
      Stream s = c.stream();
      try (F32Buffer a = F32Buffer.allocate(c, 1000); F32Buffer b = F32Buffer.allocate(c, 1000)) {
        float[] data = iota(1000, 1f);
        a.copyFrom(data);
        c.allReduce(a, b, ReduceOp.SUM, s); // out of place: one rank, so b = a
        c.allReduce(a, a, ReduceOp.AVG, s); // in place, ncclAvg
        s.synchronize();
        assertArrayEquals(data, b.toArray());
        assertArrayEquals(data, a.toArray());
        b.fill(0);
        c.broadcast(a, b, 0, s);
        s.synchronize();
        assertArrayEquals(data, b.toArray());
        // AllGather in place: send is recv's rank-th slice (rank 0 of 1: the whole buffer).
        Buffer slice = Buffer.view(DataType.F32, b.memory(), b.byteOffset(), 1000);
        c.allGather(slice, b, s);
        c.reduceScatter(b, Buffer.view(DataType.F32, b.memory(), b.byteOffset(), 1000), ReduceOp.MAX, s);
        s.synchronize();
        assertArrayEquals(data, b.toArray());
      }
      try (BF16Buffer h = BF16Buffer.allocate(c, 64); I64Buffer l = I64Buffer.allocate(c, 64)) {
        c.allReduce(h, h, ReduceOp.SUM, s);
        c.allReduce(l, l, ReduceOp.PROD, s);
        s.synchronize();
      }
    });
  }

  @Test
  void groupsIssueTogether() {
    onRank(c -> {
      try (F32Buffer a = F32Buffer.allocate(c, 256 * 4); F32Buffer b = F32Buffer.allocate(c, 256 * 4)) {
        float[] data = iota(1024, 3f);
        a.copyFrom(data);
        c.groupStart();
        for (int i = 0; i < 4; i++) {
          c.allReduce(Buffer.view(DataType.F32, a.memory(), i * 1024L, 256),
              Buffer.view(DataType.F32, b.memory(), i * 1024L, 256), ReduceOp.SUM, c.stream());
        }
        c.groupEnd();
        c.stream().synchronize();
        assertArrayEquals(data, b.toArray());
      }
    });
  }

  // ---------------------------------------------------------------- compiled schedules and plans

  @Test
  void compiledScheduleUsesInPlaceOffsetsAndAllocatesNothing() {
    onRank(c -> {
      DeviceMemory mem = DeviceMemory.allocate(c, 4 * 4096);
      List<CollectiveCall> calls = new ArrayList<>();
      for (int i = 0; i < 8; i++) { // out of place: [0, 2048) -> [2048, 4096) floats, 256 each
        calls.add(new CollectiveCall(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, -1, mem, i * 1024L, mem,
            8192 + i * 1024L, 256, List.of("f" + i), false));
      }
      List<CollectiveCall> inPlace = List.of(
          new CollectiveCall(Collective.ALL_GATHER, DataType.F32, null, -1, mem, 0, mem, 0, 2048, List.of("g"), true),
          new CollectiveCall(Collective.BROADCAST, DataType.F32, null, 0, mem, 8192, mem, 8192, 2048, List.of("h"), true));
      Schedule schedule = new Schedule("test.Compiled", 1, List.of(new Step(0, calls), new Step(1, inPlace)));
      CompiledSchedule compiled = CompiledSchedule.compile(c, schedule);
      float[] data = iota(2048, 10f);
      mem.copyFromHost(java.lang.foreign.MemorySegment.ofArray(data), 0, 0, 8192);
      compiled.enqueue(c.stream());
      c.stream().synchronize();
      float[] out = new float[2048];
      mem.copyToHost(8192, java.lang.foreign.MemorySegment.ofArray(out), 0, 8192);
      assertArrayEquals(data, out);

      com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
      for (int i = 0; i < 2000; i++) {
        compiled.enqueue(c.stream()); // warm up: JIT, NCCL's first-use paths
      }
      c.stream().synchronize();
      long id = Thread.currentThread().threadId();
      double perEnqueue = Double.MAX_VALUE;
      for (int round = 0; round < 3 && perEnqueue > 0; round++) { // the least of three: a JIT still busy on a loaded host allocates
        long before = threads.getThreadAllocatedBytes(id);
        for (int i = 0; i < 1000; i++) {
          compiled.enqueue(c.stream());
        }
        long after = threads.getThreadAllocatedBytes(id);
        c.stream().synchronize();
        perEnqueue = Math.min(perEnqueue, (after - before) / 1000.0);
      }
      System.err.println("[commplan] heap bytes per compiled enqueue (10 calls, 2 groups): " + perEnqueue);
      assertTrue(perEnqueue < 8, "enqueue allocated " + perEnqueue + " bytes");
      mem.close();
      IllegalStateException closed = assertThrows(IllegalStateException.class, () -> compiled.enqueue(c.stream()));
      assertTrue(closed.getMessage().contains("freed"), closed.getMessage());
    });
  }

  @Test
  void planInAndOutOfPlace() {
    onRank(c -> {
      PlanBuilder b = new PlanBuilder("test.GpuPlan", c, 0);
      int w = b.buffer("w", DataType.F32, 4096, "{\"4096\"}", null);
      int g = b.buffer("g", DataType.F32, 512, "{\"512\"}", null);
      int all = b.buffer("all", DataType.F32, 512, "{\"ranks\", \"512\"}", null);
      int p = b.buffer("p", DataType.F32, 512, "{\"512\"}", null);
      int q = b.buffer("q", DataType.F32, 512, "{\"512\"}", null);
      b.allReduce(0, w, w, ReduceOp.AVG);
      b.allGather(1, g, all);
      b.allReduce(0, p, p, ReduceOp.SUM);
      b.reduceScatter(2, q, q, ReduceOp.SUM);
      try (Plan plan = b.build()) {
        float[] wd = iota(4096, 1f);
        float[] gd = iota(512, 100f);
        ((F32Buffer) plan.buffer(w)).copyFrom(wd);
        ((F32Buffer) plan.buffer(g)).copyFrom(gd);
        ((F32Buffer) plan.buffer(q)).copyFrom(gd);
        plan.execute(c.stream());
        c.stream().synchronize();
        assertArrayEquals(wd, ((F32Buffer) plan.buffer(w)).toArray());
        assertArrayEquals(gd, ((F32Buffer) plan.buffer(all)).toArray());
        assertArrayEquals(gd, ((F32Buffer) plan.buffer(q)).toArray());
        System.err.println("[commplan] " + plan.describe().replace("\n", "\n[commplan] "));
      }
    });
  }

  // ---------------------------------------------------------------- interop

  @Test
  void wrappedPointersAndStreamsAreViewsNotOwners() {
    onRank(c -> {
      try (F32Buffer owner = F32Buffer.allocate(c, 512)) {
        float[] data = iota(512, 5f);
        owner.copyFrom(data);
        long p = NcclInterop.devicePointer(owner);
        Buffer upper = NcclInterop.wrapBuffer(c, DataType.F32, p + 256 * 4, 256);
        Buffer lower = NcclInterop.wrapBuffer(c, DataType.F32, p, 256);
        Stream external = NcclInterop.wrapStream(c, NcclInterop.cudaStream(c.stream()));
        assertSame(c, external.communicator());
        c.allReduce(upper, lower, ReduceOp.SUM, external);
        external.synchronize();
        float[] expect = data.clone();
        System.arraycopy(data, 256, expect, 0, 256);
        assertArrayEquals(expect, owner.toArray());
        upper.memory().close(); // not owned: frees nothing
        assertFalse(owner.isClosed());
        assertArrayEquals(expect, owner.toArray());
      }
      Stream legacy = NcclInterop.wrapStream(c, 0); // CUDA's legacy default stream
      legacy.synchronize();
    });
  }

  // ---------------------------------------------------------------- failures, abort, initRank

  @Test
  void aFailingRankIsRethrownAndTheClusterStaysUsable() {
    CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(c -> {
      throw new IllegalStateException("boom on rank " + c.rank());
    }));
    assertInstanceOf(IllegalStateException.class, e.getCause());
    assertTrue(e.getMessage().contains("boom on rank 0"), e.getMessage());
    assertEquals(List.of(1), cluster.call(Communicator::size));
  }

  @Test
  void initRankWithAUniqueIdAndAbort() {
    byte[] id = NcclBackend.uniqueId();
    assertEquals(128, id.length);
    NcclCommunicator comm = NcclBackend.initRank(0, 1, id, 0);
    try {
      assertEquals(1, comm.size());
      try (F32Buffer b = F32Buffer.allocate(comm, 32)) {
        b.fill(2f);
        comm.allReduce(b, b, ReduceOp.SUM, comm.stream());
        comm.stream().synchronize();
        assertEquals(2f, b.get(31));
      }
      F32Buffer leftOver = F32Buffer.allocate(comm, 32);
      comm.abort();
      assertTrue(comm.isAborted());
      assertTrue(comm.isClosed());
      assertTrue(leftOver.isClosed(), "abort frees what was allocated through the communicator");
      assertThrows(IllegalStateException.class, () -> comm.allocate(4));
    } finally {
      comm.close();
    }
    assertThrows(IllegalArgumentException.class, () -> NcclBackend.initRank(0, 1, new byte[3], 0));
  }
}
