package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.nccl.memory.DeviceAllocator;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;

/**
 * Ranks of one process that share a GPU allocate and free memory while a peer's kernel waits for them
 * ({@link DeviceAllocator}): nothing a rank does with its own memory may wait for that kernel, which cannot
 * finish before this very rank joins it. The order is forced, not timed: a first exchange connects the pair
 * (NCCL connects send/receive peers inside the first call, where both must be), then the sender enqueues a
 * send and only then lets its peer on the same GPU go on; the peer allocates (or frees) a block of its own,
 * writes it, and only then posts the matching receive. An allocation or free that waited for the whole
 * device would wait for the send forever, and the cluster's timeout would fail the test.
 *
 * <p>What it does not show (run 11, docs/perf/h100-11): it passed with {@code
 * -Dcommplan.nccl.streamOrderedMemory=false} too, so a {@code cudaMalloc}/{@code cudaFree} of a block no
 * NCCL call has used does not wait for the pending send on that driver. The deadlock the stream-ordered
 * allocator removed shows in {@code NcclPointToPointTest} at 4 ranks, which hung with {@code cudaMalloc}/{@code
 * cudaFree} (runs 10 and 11) and passes with the allocator the cluster chooses.
 *
 * <p>Runs where {@code 2 x} the device count of ranks can share the GPUs (NCCL 2.30 and the opt-in): the
 * sender is rank 0 and its peer is rank {@code devices}, on the same GPU; the other ranks do nothing.
 */
@NcclRanksGpuTest
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
class NcclSharedGpuMemoryTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(10);
  private static final int COUNT = 1 << 16;
  private static final long BLOCK_FLOATS = 4L << 20; // 16 MiB

  private Cluster cluster;
  private int peer;

  @BeforeAll
  void makeCluster() {
    peer = NcclBackend.deviceCount();
    GpuRanks.assumeRunnable(2 * peer);
    cluster = NcclBackend.cluster(2 * peer, CommOptions.defaults().withTimeout(TIMEOUT));
    String described = cluster.toString();
    assertTrue(described.contains("in this process"), "the cluster says its ranks share a GPU in this process: " + described);
  }

  @AfterAll
  void closeCluster() {
    if (cluster != null) {
      cluster.close();
    }
  }

  @Test
  void aRankAllocatesWhileItsPeersSendWaitsForIt() {
    exchange(comm -> {
      try (F32Buffer block = F32Buffer.allocate(comm, BLOCK_FLOATS)) {
        block.fill(3f);
      }
    });
  }

  @Test
  void aRankFreesWhileItsPeersSendWaitsForIt() {
    F32Buffer[] held = new F32Buffer[1];
    exchange(comm -> {
      held[0].close();
    }, comm -> held[0] = F32Buffer.allocate(comm, BLOCK_FLOATS));
  }

  private void exchange(java.util.function.Consumer<Communicator> betweenSendAndReceive) {
    exchange(betweenSendAndReceive, comm -> { });
  }

  /**
   * Rank 0 sends {@value #COUNT} floats to rank {@code peer}, which runs {@code before} first, then, once
   * the send is enqueued, {@code betweenSendAndReceive}, and then receives and checks them.
   */
  private void exchange(java.util.function.Consumer<Communicator> betweenSendAndReceive,
      java.util.function.Consumer<Communicator> before) {
    CountDownLatch sent = new CountDownLatch(1);
    cluster.run(comm -> {
      if (comm.rank() == 0) {
        try (F32Buffer x = F32Buffer.allocate(comm, COUNT)) {
          comm.send(x, peer, comm.stream()); // connects the pair; returns once both are in it
          comm.stream().synchronize();
          x.fill(7f);
          comm.send(x, peer, comm.stream());
          sent.countDown();
          comm.stream().synchronize();
        }
      } else if (comm.rank() == peer) {
        before.accept(comm);
        try (F32Buffer y = F32Buffer.allocate(comm, COUNT)) {
          comm.recv(y, 0, comm.stream());
          comm.stream().synchronize();
          assertTrue(sent.await(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS), "rank 0 never enqueued its send");
          betweenSendAndReceive.accept(comm);
          comm.recv(y, 0, comm.stream());
          comm.stream().synchronize();
          float[] want = new float[COUNT];
          Arrays.fill(want, 7f);
          assertArrayEquals(want, y.toArray());
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw new AssertionError(e);
        }
      }
    });
    assertEquals(0, sent.getCount());
  }
}
