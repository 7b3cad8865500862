package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.nccl.memory.DeviceAllocator;
import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Run 11's hang (docs/perf/h100-11/README.md), reproduced on the CPU model of {@code gpu-model/}: two ranks of
 * this JVM on one GPU, {@code -Dcommplan.nccl.streamOrderedMemory=false} ({@code cudaMalloc}/{@code cudaFree}).
 * Rank 0 sends; its peer frees a block of its own before it posts the matching receive. {@code cudaFree}
 * waits for all work of the device, the send among it, which waits for that receive: the cluster's timeout
 * ends it. With the allocator the cluster chooses ({@code cudaFreeAsync} on the rank's own stream) the same
 * exchange completes ({@link NcclSharedGpuMemoryTest}).
 *
 * <p>Only on the model: the H100 of run 11 (call 4) did not wait in this forced order for a block no NCCL call
 * had used; there the wait showed only in the send/receive suite at 4 ranks ({@link NcclPointToPointTest}),
 * every time, and the model keeps the guide's rule that {@code cudaFree} waits for the device.
 */
@NcclRanksGpuTest
class NcclRun11ModelTest {
  private static final Duration TIMEOUT = Duration.ofSeconds(2);

  @Test
  void aCudaFreeWhileAPeersSendWaitsForThisRankHangsUntilTheTimeout() {
    assumeModel();
    int peer = NcclBackend.deviceCount();
    String why = GpuRanks.whyNot(2 * peer);
    org.junit.jupiter.api.Assumptions.assumeTrue(why == null,
        () -> "run 11's hang needs two ranks of this JVM on one GPU (here " + 2 * peer + " ranks): " + why);
    String before = System.getProperty(DeviceAllocator.PROPERTY);
    System.setProperty(DeviceAllocator.PROPERTY, "false"); // read when each communicator is made
    try (Cluster cluster = NcclBackend.cluster(2 * peer, CommOptions.defaults().withTimeout(TIMEOUT))) {
      CountDownLatch sent = new CountDownLatch(1);
      CommPlanException e = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> assertThrows(
          CommPlanException.class, () -> cluster.run(comm -> exchange(comm, peer, sent))));
      assertTrue(timedOut(e), () -> "the exchange should end in the cluster's timeout: " + e);
    } finally {
      if (before == null) {
        System.clearProperty(DeviceAllocator.PROPERTY);
      } else {
        System.setProperty(DeviceAllocator.PROPERTY, before);
      }
    }
  }

  private static void exchange(Communicator comm, int peer, CountDownLatch sent) {
    if (comm.rank() == 0) {
      try (F32Buffer x = F32Buffer.allocate(comm, 1024)) {
        comm.send(x, peer, comm.stream()); // connects the pair
        comm.stream().synchronize();
        comm.send(x, peer, comm.stream());
        sent.countDown();
        comm.stream().synchronize(); // times out: the peer is stuck in cudaFree
      }
    } else if (comm.rank() == peer) {
      F32Buffer block = F32Buffer.allocate(comm, 1 << 20);
      try (F32Buffer y = F32Buffer.allocate(comm, 1024)) {
        comm.recv(y, 0, comm.stream());
        comm.stream().synchronize();
        assertTrue(sent.await(TIMEOUT.toMillis() * 5, TimeUnit.MILLISECONDS), "rank 0 never enqueued its send");
        block.close(); // cudaFree: waits for the device, and so for the send, which waits for the receive below
        comm.recv(y, 0, comm.stream());
        comm.stream().synchronize();
      } catch (InterruptedException ie) {
        Thread.currentThread().interrupt();
        throw new AssertionError(ie);
      }
    }
  }

  private static boolean timedOut(Throwable t) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (c instanceof CommTimeoutException || String.valueOf(c.getMessage()).contains("timed out")) {
        return true;
      }
      for (Throwable s : c.getSuppressed()) {
        if (timedOut(s)) {
          return true;
        }
      }
    }
    return false;
  }

  private static void assumeModel() {
    org.junit.jupiter.api.Assumptions.assumeTrue(GpuModel.loaded(), "a rule of the CPU model (gpu-model/): the"
        + " H100 of run 11 did not wait in cudaFree in this forced order, only in the send/receive suite at 4 ranks");
  }
}
