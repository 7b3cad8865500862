package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.DeviceMemory;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.RankAbortedException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Failures on the local backend end promptly and leave no thread behind: a failing rank aborts the
 * others, mismatched collectives fail on every rank, a missing rank times out with a clear message.
 * Each test runs under a generous preemptive timeout: a hang fails it instead of stalling the build.
 */
class LocalClusterFailureTest {
  private static final Duration GENEROUS = Duration.ofSeconds(30);
  private final List<LocalCluster> clusters = new ArrayList<>();

  private LocalCluster cluster(int ranks) {
    LocalCluster cluster = new LocalCluster(ranks);
    clusters.add(cluster);
    return cluster;
  }

  @AfterEach
  void closeClustersAndCheckThreads() {
    clusters.forEach(LocalCluster::close);
    assertTimeoutPreemptively(GENEROUS, () -> {
      while (!LiveThreads.named("commplan-local-").isEmpty()) {
        Thread.sleep(10); // stopping is prompt; this only waits for threads that are just now exiting
      }
    }, () -> "backend threads left running: " + LiveThreads.named("commplan-local-"));
  }

  /** Every message down the cause chain, joined: what a user would read in the stack trace. */
  private static String causeChain(Throwable t) {
    StringBuilder all = new StringBuilder();
    for (Throwable at = t; at != null; at = at.getCause()) {
      all.append(at.getMessage()).append(" | ");
    }
    return all.toString();
  }

  private static void assertMentions(String text, String... parts) {
    for (String part : parts) {
      assertTrue(text.contains(part), () -> "'" + part + "' missing from: " + text);
    }
  }

  @Test
  void aRankThatThrowsBeforeACollectiveFailsTheRunPromptly() {
    LocalCluster cluster = cluster(4);
    IllegalStateException boom = new IllegalStateException("boom on rank 1");
    CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          if (comm.rank() == 1) {
            throw boom;
          }
          try (F32Buffer x = F32Buffer.allocate(comm, 8)) {
            comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
            comm.stream().synchronize(); // waits for rank 1, which never comes: the abort must wake it
          }
        })));
    assertSame(boom, failure.getCause());
    assertMentions(failure.getMessage(), "rank 1");
    assertEquals(3, failure.getSuppressed().length, "the other ranks' failures are suppressed, not lost");
    for (Throwable other : failure.getSuppressed()) {
      assertInstanceOf(RankAbortedException.class, other);
      assertMentions(causeChain(other), "boom on rank 1");
    }
    assertTrue(cluster.isAborted());
    assertThrows(IllegalStateException.class, () -> cluster.run(comm -> {}), "an aborted cluster stays aborted");
  }

  @Test
  void aFailureOnOneRanksStreamDuringCollectivesAbortsEveryRank() {
    LocalCluster cluster = cluster(3);
    CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          try (F32Buffer x = F32Buffer.allocate(comm, 5)) {
            comm.allReduce(x, x, ReduceOp.SUM, comm.stream()); // the first collective works
            if (comm.rank() == 2) {
              local(comm).enqueueHostTask(() -> {
                throw new ArithmeticException("kernel failed on rank 2");
              });
            }
            comm.allReduce(x, x, ReduceOp.MAX, comm.stream()); // rank 2's stream skips it: the others wait
            comm.stream().synchronize();
          }
        })));
    assertMentions(failure.getMessage(), "rank 2");
    assertMentions(causeChain(failure), "kernel failed on rank 2");
    assertEquals(2, failure.getSuppressed().length);
  }

  @Test
  void aBufferFreedBeforeItsCollectiveRunsFailsThatCollective() {
    LocalCluster cluster = cluster(2);
    CountDownLatch hold = new CountDownLatch(1);
    CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          F32Buffer x = F32Buffer.allocate(comm, 4);
          if (comm.rank() == 0) {
            local(comm).enqueueHostTask(hold::await); // keeps the all-reduce from running until x is gone
          }
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          if (comm.rank() == 0) {
            x.close();
            hold.countDown();
          }
          comm.stream().synchronize();
          x.close();
        })));
    assertMentions(causeChain(failure), "rank 0", "freed after the call was enqueued");
  }

  @Test
  void mismatchedCollectivesFailOnEveryRankNamingBothSides() {
    LocalCluster cluster = cluster(2);
    List<String> seen = new ArrayList<>();
    CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          try (F32Buffer x = F32Buffer.allocate(comm, comm.rank() == 0 ? 4 : 8)) {
            x.fill(1);
            comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
            try {
              comm.stream().synchronize();
            } finally {
              synchronized (seen) {
                seen.add(String.valueOf(x.get(0))); // not corrupted: nothing ran
              }
            }
          }
        })));
    assertMentions(causeChain(failure), "call 1 was, on rank 0, direct call: all-reduce F32 SUM, count 4",
        "on rank 1, direct call: all-reduce F32 SUM, count 8 (differing: count)");
    assertEquals(List.of("1.0", "1.0"), seen);
    assertEquals(1, failure.getSuppressed().length, "both ranks failed");
  }

  @Test
  void differentCollectivesOrRootsAtTheSameNumberAreAMismatchToo() {
    LocalCluster cluster = cluster(3);
    CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          try (F32Buffer x = F32Buffer.allocate(comm, 4)) {
            switch (comm.rank()) {
              case 0 -> comm.broadcast(x, x, 0, comm.stream());
              case 1 -> comm.broadcast(x, x, 1, comm.stream());
              default -> comm.allReduce(x, x, ReduceOp.PROD, comm.stream());
            }
            comm.stream().synchronize();
          }
        })));
    assertMentions(causeChain(failure), "call 1 was, on rank 0, direct call: broadcast F32 root 0, count 4",
        "on rank 1 (the first of the differing ranks [1, 2]), direct call: broadcast F32 root 1, count 4 (differing:"
        + " root)");
  }

  @Test
  void aRankThatNeverArrivesTimesOutNamingTheCollectiveAndWhoArrived() {
    LocalCluster cluster = new LocalCluster(3, Duration.ofSeconds(1));
    clusters.add(cluster);
    CommPlanException failure = assertTimeoutPreemptively(GENEROUS, () -> assertThrows(CommPlanException.class,
        () -> cluster.run(comm -> {
          if (comm.rank() == 1) {
            return; // forgets the collective
          }
          try (F32Buffer x = F32Buffer.allocate(comm, 4)) {
            comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
            comm.stream().synchronize();
          }
        })));
    assertMentions(causeChain(failure), "all-reduce F32 SUM, count 4", "collective #0", "timed out",
        "ranks [0, 2] arrived, ranks [1] did not", "PT1S");
  }

  @Test
  void callReturnsEachRanksResultInRankOrder() {
    LocalCluster cluster = cluster(5);
    List<Integer> squares = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> comm.rank() * comm.rank()));
    assertEquals(List.of(0, 1, 4, 9, 16), squares);
    assertFalse(cluster.isAborted());
  }

  @Test
  void closingTheClusterFreesMemoryAndStopsEverything() {
    LocalCluster cluster = cluster(2);
    List<F32Buffer> buffers = cluster.call(comm -> F32Buffer.allocate(comm, 3));
    cluster.close();
    cluster.close();
    assertTrue(buffers.stream().allMatch(F32Buffer::isClosed));
    assertTrue(buffers.getFirst().communicator().isClosed());
    assertThrows(IllegalStateException.class, () -> DeviceMemory.allocate(buffers.getFirst().communicator(), 8));
    assertThrows(IllegalStateException.class, () -> cluster.run(comm -> {}));
  }

  /** A local rank's stream, with the host-task hook these tests use to order things deterministically. */
  private static LocalStream local(dev.commplan.runtime.Communicator comm) {
    return (LocalStream) comm.stream();
  }
}
