package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BucketSuite;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Event;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import java.time.Duration;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Streams, CUDA events and bucketed plans on NCCL, at each world size of {@link GpuRanks} ({@code
 * -Dcommplan.gpu.ranks=1,2,4,8}; several ranks on one GPU with NCCL 2.30 and the opt-in).
 *
 * <p>Without a kernel that spins, a producer is held back by a long copy: each round, before its writes, the
 * producer stream (a one-rank split's: an out-of-place all-reduce of one rank is a device copy) copies {@value
 * #JUNK_MIB} MiB, which takes far longer than the host takes to mark every field and finish. A bucket that did
 * not wait for its producer would then reduce stale data, and, checked every time whatever the timing, the
 * communication stream's event would be done while the producer's is not: whenever that event is seen done,
 * the producer's must be too (cudaStreamWaitEvent orders them; cudaEventQuery of the later one done implies
 * the earlier one's).
 */
@NcclRanksGpuTest
class NcclBucketsGpuTest {
  private static final Duration GENEROUS = Duration.ofSeconds(300);
  /** What each producer copies before its writes: 256 MiB, a few hundred microseconds on an H200. */
  static final int JUNK_MIB = 256;

  static java.util.stream.Stream<Integer> ranks() {
    return GpuRanks.requested().stream();
  }

  /** Writes through a one-rank split's stream, behind a long copy; checks the order of the round's events. */
  static final class DelayedProducer implements BucketSuite.Producer {
    private final Stream commStream;
    private final List<String> violations;
    private final Map<F32Buffer, F32Buffer> staging = new IdentityHashMap<>();
    private Communicator solo;
    private F32Buffer junkFrom;
    private F32Buffer junkTo;
    private boolean roundStarted;

    DelayedProducer(Stream commStream, List<String> violations) {
      this.commStream = commStream;
      this.violations = violations;
    }

    @Override
    public Stream write(Communicator comm, F32Buffer field, float[] values) {
      if (solo == null) { // the first write of every rank: all ranks split here, together
        solo = comm.split(comm.rank(), 0, "solo of rank " + comm.rank());
        long junk = (long) JUNK_MIB << 18; // floats
        junkFrom = F32Buffer.allocate(comm, junk);
        junkTo = F32Buffer.allocate(comm, junk);
      }
      F32Buffer stage = staging.computeIfAbsent(field, f -> F32Buffer.allocate(comm, f.length()));
      stage.copyFrom(values); // the host's copy is done on return
      Stream producer = solo.stream();
      if (!roundStarted) {
        solo.allReduce(junkFrom, junkTo, ReduceOp.SUM, producer); // the long copy the writes wait behind
        roundStarted = true;
      }
      solo.allReduce(stage, field, ReduceOp.SUM, producer); // the write: a copy, on one rank
      return producer;
    }

    /**
     * Nothing is held back on the host; the round's order is checked instead: the communication stream's
     * last work (every bucket) must not be seen done before the producer's writes are.
     */
    @Override
    public void release(Communicator comm) {
      Event produced = solo.stream().record();
      Event communicated = commStream.record();
      while (true) {
        if (communicated.isDone()) {
          if (!produced.isDone()) {
            violations.add("rank " + comm.rank() + ": the buckets were done before the producer's writes");
          }
          break;
        }
        Thread.onSpinWait();
      }
      roundStarted = false;
    }

    void close() {
      for (F32Buffer b : staging.values()) {
        b.close();
      }
      if (junkFrom != null) {
        junkFrom.close();
        junkTo.close();
        solo.close();
      }
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void bucketsWaitForTheirProducersAndMatchTheReference(int ranks) {
    GpuRanks.assumeRunnable(ranks);
    CyclicBarrier finished = new CyclicBarrier(ranks);
    List<String> wrong = new ArrayList<>();
    try (Cluster cluster = NcclBackend.cluster(ranks)) {
      List<List<String>> perRank = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        List<String> violations = new ArrayList<>();
        try (Stream commStream = comm.newStream();
            Plan plan = BucketSuite.build(comm, "nccl.Buckets", true, commStream)) {
          DelayedProducer producer = new DelayedProducer(commStream, violations);
          try {
            violations.addAll(BucketSuite.runRounds(comm, plan, 5, producer, () -> await(finished)));
          } finally {
            producer.close();
          }
        }
        return violations;
      }));
      perRank.forEach(wrong::addAll);
    }
    assertEquals(List.of(), wrong);
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void eventsOrderStreamsOfOneRankAndRefuseAnotherRanks(int ranks) {
    GpuRanks.assumeRunnable(ranks);
    AtomicReference<Stream> rankZeros = new AtomicReference<>();
    CyclicBarrier together = new CyclicBarrier(ranks);
    try (Cluster cluster = NcclBackend.cluster(ranks)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        try (Stream side = comm.newStream(); F32Buffer x = F32Buffer.allocate(comm, 1 << 20)) {
          Event idle = side.record(); // recorded before any work: completes at once
          idle.synchronize();
          assertTrue(idle.isDone());
          x.fill(comm.rank() + 1);
          comm.allReduce(x, x, ReduceOp.SUM, side);
          comm.stream().waitFor(side.record());
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream()); // reduces the side stream's result
          comm.stream().synchronize();
          float once = ranks * (ranks + 1) / 2f;
          assertEquals(once * ranks, x.get((1 << 20) - 1));
          if (comm.rank() == 0) {
            rankZeros.set(comm.stream());
          }
          await(together);
          if (ranks > 1 && comm.rank() == 1) {
            Event theirs = rankZeros.get().record();
            String m = assertThrows(IllegalArgumentException.class, () -> comm.stream().waitFor(theirs)).getMessage();
            assertTrue(m.contains("another rank's or another device's"), m);
          }
          await(together);
        }
      }));
    }
  }

  private static void await(CyclicBarrier barrier) {
    try {
      barrier.await();
    } catch (InterruptedException | BrokenBarrierException e) {
      throw new IllegalStateException(e);
    }
  }
}
