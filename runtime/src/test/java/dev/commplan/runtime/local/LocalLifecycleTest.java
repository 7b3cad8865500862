package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BF16Buffer;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I64Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U8Buffer;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.DeviceMemory;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

/**
 * Use after close on the local backend: every public type (buffer, plan, communicator, stream, cluster,
 * device memory) refuses with an {@link IllegalStateException} that names the object, close is
 * idempotent, and closing frees the native memory (the local allocation accounting goes back).
 */
class LocalLifecycleTest {
  private static final String N = "{\"n\"}";

  private static void refused(Executable use, String... mentions) {
    IllegalStateException e = assertThrows(IllegalStateException.class, use);
    for (String part : mentions) {
      assertTrue(e.getMessage().contains(part), () -> "'" + part + "' missing from: " + e.getMessage());
    }
  }

  private static Plan smallPlan(Communicator comm) {
    PlanBuilder b = new PlanBuilder("t.Life", comm, 0);
    int x = b.buffer("x", DataType.F32, 8, N, null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    return b.build();
  }

  @Test
  void aClosedBufferRefusesEveryAccessAndClosingTwiceIsFine() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        long bytesBefore = cluster.openBytes();
        F32Buffer f = F32Buffer.allocate(comm, 100);
        BF16Buffer h = BF16Buffer.allocate(comm, 10);
        U8Buffer u = U8Buffer.allocate(comm, 10);
        I64Buffer l = I64Buffer.allocate(comm, 10);
        assertEquals(bytesBefore + 400 + 20 + 10 + 80, cluster.openBytes());
        for (Buffer b : List.of(f, h, u, l)) {
          b.close();
          b.close();
          assertTrue(b.isClosed());
        }
        assertEquals(bytesBefore, cluster.openBytes(), "close frees the native memory");
        refused(() -> f.get(0), "F32Buffer[length=100", "closed", "freed");
        refused(() -> f.set(0, 1f), "F32Buffer", "closed");
        refused(() -> f.copyTo(new float[100]), "closed");
        refused(() -> f.copyFrom(new float[100]), "closed");
        refused(f::toArray, "closed");
        refused(() -> f.fill(1f), "closed");
        refused(() -> h.getBits(0), "BF16Buffer", "closed");
        refused(() -> h.copyTo(new float[10]), "BF16Buffer", "closed");
        refused(() -> u.getUnsigned(0), "U8Buffer", "closed");
        refused(() -> l.toArray(), "I64Buffer", "closed");
        refused(() -> f.memory().copyToHost(0, MemorySegment.ofArray(new byte[4]), 0, 4), "LocalMemory", "closed");
      });
    }
  }

  @Test
  void aClosedPlanRefusesToRunItsViewsAreFreedAndClosingTwiceIsFine() {
    // off: the agreement check's own buffers belong to the communicator and stay until it closes
    try (LocalCluster cluster = new LocalCluster(1, CommOptions.defaults().withAgreementCheck(false))) {
      cluster.run(comm -> {
        long bytesBefore = cluster.openBytes();
        Plan plan = smallPlan(comm);
        F32Buffer x = (F32Buffer) plan.buffer(0);
        assertTrue(cluster.openBytes() > bytesBefore);
        plan.execute(comm.stream());
        comm.stream().synchronize();
        plan.close();
        plan.close();
        assertTrue(plan.isClosed());
        assertEquals(bytesBefore, cluster.openBytes(), "plan.close() frees the plan-owned memory");
        refused(() -> plan.execute(comm.stream()), "plan t.Life", "closed");
        refused(() -> plan.executeStep(0, comm.stream()), "plan t.Life", "closed");
        refused(() -> x.get(0), "F32Buffer", "closed", "view");
        x.close(); // a view: closing it does nothing, and is allowed
        assertTrue(plan.describe().contains("t.Life"), "describe() still answers");
      });
    }
  }

  @Test
  void aClosedCommunicatorRefusesEveryCallAndItsStreamToo() {
    LocalCluster cluster = new LocalCluster(1);
    List<Communicator> comms = cluster.call(c -> c);
    Communicator comm = comms.getFirst();
    Stream stream = comm.stream();
    Plan plan = smallPlan(comm);
    F32Buffer owned = F32Buffer.allocate(comm, 4);
    F32Buffer other = F32Buffer.allocate(comm, 4);
    long bytesBefore = cluster.openBytes();
    comm.close();
    comm.close();
    assertTrue(comm.isClosed());
    assertTrue(cluster.openBytes() < bytesBefore, "the communicator's blocks are freed");
    assertTrue(owned.isClosed() && plan.buffer(0).isClosed());
    String who = "rank 0";
    refused(() -> DeviceMemory.allocate(comm, 8), "local communicator of rank 0", "closed");
    refused(() -> F32Buffer.allocate(comm, 8), "local communicator of rank 0", "closed");
    refused(() -> comm.allReduce(owned, other, ReduceOp.SUM, stream), "closed");
    refused(comm::groupStart, who, "closed");
    refused(comm::groupEnd, who, "closed");
    refused(() -> CompiledSchedule.compile(comm, new Schedule("t.Empty", 1, List.of())), who, "closed");
    refused(() -> plan.execute(stream), "plan t.Life", "communicator", "closed");
    refused(stream::synchronize, "rank 0's stream", "shut down");
    refused(() -> new PlanBuilder("t.Late", comm, 0), "plan t.Late", "local communicator of rank 0 is closed");
    refused(comm::stream, "LocalCommunicator[rank 0 of 1, closed] is closed");
    cluster.close();
  }

  @Test
  void aClosedClusterRefusesToRunClosesEverythingAndClosingTwiceIsFine() {
    LocalCluster cluster = new LocalCluster(2);
    long bytesBefore = cluster.openBytes();
    assertEquals(0, bytesBefore, "a new cluster has allocated nothing");
    List<Communicator> comms = cluster.call(comm -> {
      F32Buffer.allocate(comm, 1000); // left open on purpose: the cluster frees it
      smallPlan(comm); // likewise
      return comm;
    });
    assertTrue(cluster.openBytes() >= bytesBefore + 2 * 4000);
    cluster.close();
    cluster.close();
    assertEquals(bytesBefore, cluster.openBytes(), "closing the cluster frees all its ranks' memory");
    for (Communicator comm : comms) {
      assertTrue(comm.isClosed());
      refused(comm::stream, "LocalCommunicator", "is closed");
    }
    refused(() -> cluster.run(comm -> {}), "local cluster", "closed");
    refused(() -> cluster.call(comm -> 1), "local cluster", "closed");
    assertFalse(cluster.isAborted());
  }

  @Test
  void aClosedBlockRefusesCopiesAndClosingTwiceIsFine() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        DeviceMemory block = DeviceMemory.allocate(comm, 64);
        block.close();
        block.close();
        assertTrue(block.isClosed());
        refused(() -> block.copyFromHost(MemorySegment.ofArray(new byte[8]), 0, 0, 8), "LocalMemory[64 bytes", "closed");
      });
    }
  }
}
