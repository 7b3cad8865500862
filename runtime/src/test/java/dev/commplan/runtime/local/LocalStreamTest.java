package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

/** The local stream behaves like a CUDA stream: asynchronous, in order, visible after synchronize, sticky errors. */
class LocalStreamTest {
  private static final Duration GENEROUS = Duration.ofSeconds(30);

  @Test
  void resultsAreOnlyVisibleAfterSynchronize() {
    CountDownLatch[] holds = {new CountDownLatch(1), new CountDownLatch(1)};
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<float[]> seen = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        try (F32Buffer x = F32Buffer.allocate(comm, 1)) {
          x.set(0, comm.rank() + 1);
          // The stream is busy with this task, so the all-reduce behind it cannot have run yet.
          local(comm).enqueueHostTask(holds[comm.rank()]::await);
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          float beforeSynchronize = x.get(0); // enqueue returned at once; the data is stale
          holds[comm.rank()].countDown();
          comm.stream().synchronize();
          return new float[] {beforeSynchronize, x.get(0)};
        }
      }));
      assertEquals(1f, seen.get(0)[0], "rank 0 read its own old value");
      assertEquals(2f, seen.get(1)[0], "rank 1 read its own old value");
      assertEquals(3f, seen.get(0)[1], "after synchronize: 1 + 2");
      assertEquals(3f, seen.get(1)[1]);
    }
  }

  @Test
  void workRunsInEnqueueOrder() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      int[] result = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        try (I32Buffer log = I32Buffer.allocate(comm, 5)) {
          LocalStream stream = (LocalStream) comm.stream();
          for (int i = 0; i < 5; i++) {
            int step = i;
            stream.enqueueHostTask(() -> log.set(step, step == 0 ? 1 : log.get(step - 1) * 10 + step));
          }
          stream.synchronize();
          return log.toArray();
        }
      })).getFirst();
      assertEquals(List.of(1, 11, 112, 1123, 11234), java.util.Arrays.stream(result).boxed().toList());
    }
  }

  @Test
  void aFailedStreamStaysFailed() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      CommPlanException failure = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        LocalStream stream = (LocalStream) comm.stream();
        stream.enqueueHostTask(() -> {
          throw new IllegalArgumentException("first");
        });
        boolean[] ranAfterFailure = {false};
        stream.enqueueHostTask(() -> ranAfterFailure[0] = true);
        CommPlanException once = assertThrows(CommPlanException.class, stream::synchronize);
        CommPlanException twice = assertThrows(CommPlanException.class, stream::synchronize);
        assertInstanceOf(IllegalArgumentException.class, once.getCause());
        assertInstanceOf(IllegalArgumentException.class, twice.getCause());
        assertEquals(false, ranAfterFailure[0], "work after a failure is discarded");
        throw once;
      }));
      assertTrue(failure.getMessage().contains("rank 0"), failure.getMessage());
    }
  }

  @Test
  void synchronizingFromTheStreamItselfIsRefused() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
          () -> cluster.run(comm -> {
            local(comm).enqueueHostTask(() -> comm.stream().synchronize());
            comm.stream().synchronize();
          })));
      assertTrue(failure.getCause().getCause() instanceof IllegalStateException ise
          && ise.getMessage().contains("wait for itself"), String.valueOf(failure.getCause()));
    }
  }

  @Test
  void groupsNestAndTheirCallsAllRun() {
    try (LocalCluster cluster = new LocalCluster(3)) {
      List<float[]> results = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        try (F32Buffer x = F32Buffer.allocate(comm, 2);
            F32Buffer z = F32Buffer.allocate(comm, 2);
            F32Buffer y = F32Buffer.allocate(comm, 2)) {
          x.fill(comm.rank());
          z.fill(10 * comm.rank());
          comm.groupStart();
          comm.groupStart(); // groups nest, as in NCCL
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          comm.groupEnd();
          comm.broadcast(z, y, 2, comm.stream()); // independent of the all-reduce, as a group requires
          comm.groupEnd();
          comm.stream().synchronize();
          assertThrows(IllegalStateException.class, comm::groupEnd);
          return new float[] {x.get(1), y.get(1)};
        }
      }));
      for (float[] rank : results) {
        assertEquals(3f, rank[0], "0 + 1 + 2");
        assertEquals(20f, rank[1], "rank 2's z");
      }
    }
  }

  /** A local rank's stream, with the host-task hook these tests use to order things deterministically. */
  private static LocalStream local(dev.commplan.runtime.Communicator comm) {
    return (LocalStream) comm.stream();
  }
}
