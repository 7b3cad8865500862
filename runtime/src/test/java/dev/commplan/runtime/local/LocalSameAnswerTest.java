package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.U8Buffer;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * What must give the same answer on every backend (issue 25), on the local backend: a send to this rank
 * itself outside a group is refused before anything is enqueued (NCCL would deadlock), and works inside
 * one; a view at an offset that is not a multiple of its element size is refused (the GPU needs natural
 * alignment); a disagreement enqueued and never synchronized fails the run instead of vanishing at close.
 */
class LocalSameAnswerTest {
  private static final Duration GENEROUS = Duration.ofSeconds(30);
  private LocalCluster cluster;

  @AfterEach
  void close() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aSendToItselfOutsideAGroupIsRefusedAndWorksInsideOne() {
    cluster = new LocalCluster(2);
    cluster.run(comm -> {
      try (F32Buffer out = F32Buffer.allocate(comm, 3); F32Buffer in = F32Buffer.allocate(comm, 3)) {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> comm.send(out, comm.rank(), comm.stream()));
        assertTrue(e.getMessage().contains("[CommPlan/BadPeer]") && e.getMessage().contains("outside a group")
            && e.getMessage().contains("groupStart()"), e.getMessage());
        assertThrows(IllegalArgumentException.class, () -> comm.recv(in, comm.rank(), comm.stream()));
        out.copyFrom(new float[] {1, 2, comm.rank()});
        comm.groupStart();
        comm.send(out, comm.rank(), comm.stream());
        comm.recv(in, comm.rank(), comm.stream());
        comm.groupEnd();
        comm.stream().synchronize();
        assertArrayEquals(new float[] {1, 2, comm.rank()}, in.toArray());
      }
    });
  }

  @Test
  void aViewAtAnOffsetThatIsNotAMultipleOfItsElementSizeIsRefused() {
    cluster = new LocalCluster(1);
    try (U8Buffer bytes = U8Buffer.allocate(cluster.communicator(0), 64)) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> Buffer.view(DataType.F32, bytes.memory(), 2, 4));
      assertTrue(e.getMessage().contains("byte 2") && e.getMessage().contains("(4 bytes)")
          && e.getMessage().contains("at byte 0 or 4"), e.getMessage());
      Buffer.view(DataType.F32, bytes.memory(), 4, 4); // aligned: fine
      Buffer.view(DataType.U8, bytes.memory(), 3, 4); // one-byte elements are always aligned
    }
  }

  @Test
  void aDisagreementNeverSynchronizedFailsTheRunInsteadOfVanishing() {
    cluster = new LocalCluster(2);
    CommPlanException e = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          F32Buffer x = F32Buffer.allocate(comm, comm.rank() == 0 ? 4 : 8); // ranks disagree on the count
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream()); // ... and return without synchronizing
        })));
    StringBuilder chain = new StringBuilder();
    for (Throwable t = e; t != null; t = t.getCause()) {
      chain.append(t.getMessage()).append(" | ");
    }
    assertTrue(chain.toString().contains("world: the ranks disagree about their calls: call 1 was, on rank 0"),
        chain.toString());
  }
}
