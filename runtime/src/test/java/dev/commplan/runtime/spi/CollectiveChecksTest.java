package dev.commplan.runtime.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.local.LocalCluster;
import dev.commplan.model.Collective;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.function.Executable;

/** The argument checks of the direct collective API, shared by the backends, and their messages. */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class CollectiveChecksTest {
  private LocalCluster cluster;
  private Communicator comm; // rank 1 of 2
  private Communicator other;

  @BeforeAll
  void start() {
    cluster = new LocalCluster(2);
    List<Communicator> comms = cluster.call(c -> c);
    comm = comms.get(1);
    other = comms.get(0);
  }

  @AfterAll
  void stop() {
    cluster.close();
  }

  private static void assertMessage(Class<? extends Throwable> type, Executable call, String... parts) {
    String message = assertThrows(type, call).getMessage();
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
  }

  @Test
  void countsAreCheckedWithTheCountsInTheMessage() {
    try (F32Buffer four = F32Buffer.allocate(comm, 4); F32Buffer seven = F32Buffer.allocate(comm, 7)) {
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkAllReduce(comm, four, seven, ReduceOp.SUM, comm.stream()),
          "all-reduce on rank 1", "4", "7");
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkBroadcast(comm, four, seven, 0, comm.stream()), "broadcast", "4", "7");
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkAllGather(comm, four, seven, comm.stream()),
          "all-gather", "recv has 7", "2 × 4 = 8");
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkReduceScatter(comm, seven, four, ReduceOp.SUM, comm.stream()),
          "reduce-scatter", "send has 7", "2 × 4 = 8");
    }
  }

  @Test
  void validCallsReturnNcclsCount() {
    try (F32Buffer three = F32Buffer.allocate(comm, 3); F32Buffer six = F32Buffer.allocate(comm, 6)) {
      assertEquals(3, CollectiveChecks.checkAllReduce(comm, three, three, ReduceOp.MAX, comm.stream()));
      assertEquals(3, CollectiveChecks.checkAllGather(comm, three, six, comm.stream()));
      assertEquals(3, CollectiveChecks.checkReduceScatter(comm, six, three, ReduceOp.AVG, comm.stream()));
      assertEquals(6, CollectiveChecks.checkBroadcast(comm, six, six, 1, comm.stream()));
    }
  }

  @Test
  void typesCommunicatorsStreamsRootsAndClosedBuffersAreChecked() {
    try (F32Buffer f = F32Buffer.allocate(comm, 4);
        I32Buffer i = I32Buffer.allocate(comm, 4);
        F32Buffer elsewhere = F32Buffer.allocate(other, 4)) {
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkAllReduce(comm, f, i, ReduceOp.SUM, comm.stream()), "F32", "I32");
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkAllReduce(comm, elsewhere, f, ReduceOp.SUM, comm.stream()),
          "send", "rank 0");
      assertMessage(IllegalArgumentException.class,
          () -> CollectiveChecks.checkAllReduce(comm, f, f, ReduceOp.SUM, other.stream()), "stream", "rank 0");
      assertMessage(IllegalArgumentException.class,
          () -> CollectiveChecks.checkBroadcast(comm, f, f, 2, comm.stream()), "root 2", "[0, 2)");
      assertThrows(NullPointerException.class,
          () -> CollectiveChecks.checkAllReduce(comm, f, f, null, comm.stream()));
    }
    F32Buffer closed = F32Buffer.allocate(comm, 4);
    closed.close();
    assertMessage(BufferBindingException.class,
        () -> CollectiveChecks.checkAllReduce(comm, closed, closed, ReduceOp.SUM, comm.stream()), "closed");
  }

  @Test
  void overlapOtherThanNcclsInPlaceArrangementIsRefused() {
    try (F32Buffer block = F32Buffer.allocate(comm, 8)) {
      Buffer firstHalf = Buffer.view(DataType.F32, block.memory(), 0, 4);
      Buffer secondHalf = Buffer.view(DataType.F32, block.memory(), 16, 4);
      Buffer shifted = Buffer.view(DataType.F32, block.memory(), 4, 4);
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkAllReduce(comm, firstHalf, shifted, ReduceOp.SUM, comm.stream()), "overlap");
      // AllGather in place on rank 1 of 2: send is recv's second half, not its first.
      assertEquals(4, CollectiveChecks.checkAllGather(comm, secondHalf, block, comm.stream()));
      assertMessage(BufferBindingException.class,
          () -> CollectiveChecks.checkAllGather(comm, firstHalf, block, comm.stream()), "in-place", "byte 16");
      assertTrue(CollectiveChecks.isInPlace(Collective.ALL_GATHER, secondHalf, block, 1));
      assertFalse(CollectiveChecks.isInPlace(Collective.ALL_GATHER, firstHalf, block, 1));
      assertTrue(CollectiveChecks.isInPlace(Collective.REDUCE_SCATTER, block, secondHalf, 1));
      // Disjoint regions of one block are simply out of place.
      assertEquals(4, CollectiveChecks.checkAllReduce(comm, firstHalf, secondHalf, ReduceOp.SUM, comm.stream()));
    }
  }
}
