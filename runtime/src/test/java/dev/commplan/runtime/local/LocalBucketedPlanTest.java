package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.BucketSuite;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BrokenBarrierException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Bucketed plans on the local backend ({@link BucketSuite}): every rank marks its fields in an order of its
 * own, through producer streams whose writes are held back by a latch until every rank has finished its round,
 * so that a bucket that did not wait for its producer would reduce stale data on every run; the results are
 * compared with the reference on 1, 2, 3, 4, 5 and 8 ranks, over several rounds. Also: the flight record and
 * the guard of a round.
 */
class LocalBucketedPlanTest {
  private static final Duration GENEROUS = Duration.ofSeconds(120);

  /** Writes on two producer streams of the rank, each held by the round's latch. */
  static final class HeldProducer implements BucketSuite.Producer {
    private final List<LocalStream> streams = new ArrayList<>();
    private CountDownLatch latch = new CountDownLatch(1);
    private int next;

    @Override
    public Stream write(Communicator comm, F32Buffer field, float[] values) {
      if (streams.isEmpty()) {
        streams.add((LocalStream) comm.newStream());
        streams.add((LocalStream) comm.newStream());
      }
      LocalStream s = streams.get(next++ % streams.size());
      CountDownLatch held = latch;
      s.enqueueHostTask(() -> {
        held.await();
        field.copyFrom(values);
      });
      return s;
    }

    @Override
    public void release(Communicator comm) {
      latch.countDown();
      latch = new CountDownLatch(1);
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void resultsMatchTheReferenceWhateverOrderEachRankMarksIn(int ranks) {
    CyclicBarrier finished = new CyclicBarrier(ranks);
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<List<String>> wrong = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        // The producers' host tasks write the fields: device work, which the guard does not see.
        try (Plan plan = BucketSuite.build(comm, "t.Buckets", false, null)) {
          assertEquals(BucketSuite.EXPECTED_BUCKETS.size(), plan.buckets());
          return BucketSuite.runRounds(comm, plan, 3, new HeldProducer(), () -> await(finished));
        }
      }));
      assertEquals(List.of(), wrong.stream().flatMap(List::stream).toList());
    }
  }

  @Test
  void theFlightRecordNamesThePlanAndTheBucket() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<String> records = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        LocalStream comms = (LocalStream) comm.newStream();
        try (Plan plan = BucketSuite.build(comm, "t.Labelled", false, comms)) {
          for (int h = 0; h < BucketSuite.fields(); h++) {
            plan.ready(h, comm.stream());
          }
          plan.finish(comm.stream());
          comm.stream().synchronize();
          return comms.recorder.format();
        }
      }));
      String record = records.get(0);
      assertTrue(record.contains("plan t.Labelled, step 0, bucket 0, all-reduce F32 SUM, count 16, fields [f5, f6]"),
          record);
      assertTrue(record.contains("plan t.Labelled, step 1, bucket 5, all-reduce F32 SUM, count 7, fields [late]"),
          record);
    }
  }

  /**
   * A producer's host task (device work) may write a field after the bucket that waits for it is enqueued,
   * with the guard on: the bucket waits for the producer's event. The rank's own thread may not.
   */
  @Test
  void aProducersHostTaskWritesAFieldItsBucketWaitsForWithTheGuardOn() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<Float> seen = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        try (Plan plan = BucketSuite.build(comm, "t.DeviceWrites", true, null); Stream producer = comm.newStream()) {
          F32Buffer f6 = (F32Buffer) plan.buffer(6);
          f6.fill(0);
          CountDownLatch marked = new CountDownLatch(1);
          LocalStream local = (LocalStream) producer;
          local.enqueueHostTask(() -> {
            marked.await(); // runs only once every field is marked and the buckets are enqueued
            f6.fill(3);
          });
          for (int h = 0; h < BucketSuite.fields(); h++) {
            plan.ready(h, producer);
          }
          assertThrows(BufferInFlightException.class, () -> f6.set(0, 1)); // the host's own write
          marked.countDown();
          plan.finish(comm.stream());
          comm.stream().synchronize();
          return f6.get(0);
        }
      }));
      assertEquals(List.of(6f, 6f), seen, "each rank's 3, summed over 2 ranks");
    }
  }

  /**
   * After finish, the plan's buffers are in flight on the consumer until it is synchronized; before, a bucket's
   * buffers are in flight on the communication stream once it is enqueued.
   */
  @Test
  void theGuardRefusesHostAccessUntilTheConsumerIsSynchronized() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        try (Plan plan = BucketSuite.build(comm, "t.Guarded", true, null)) {
          F32Buffer f6 = (F32Buffer) plan.buffer(6);
          F32Buffer f0 = (F32Buffer) plan.buffer(0);
          f6.fill(1);
          f0.fill(1);
          plan.ready(6, comm.stream());
          f6.set(0, 2); // its bucket waits for f5 too: not enqueued yet
          plan.ready(5, comm.stream()); // bucket 0 (f6, f5) is enqueued
          assertThrows(BufferInFlightException.class, () -> f6.get(0));
          for (int h = 0; h < BucketSuite.fields(); h++) {
            if (h != 5 && h != 6) {
              plan.ready(h, comm.stream());
            }
          }
          plan.finish(comm.stream());
          BufferInFlightException e = assertThrows(BufferInFlightException.class, () -> f0.get(0));
          assertTrue(e.getMessage().contains("t.Guarded"), e.getMessage());
          comm.stream().synchronize();
          assertEquals(comm.size(), f0.get(0));
          assertEquals(2 * comm.size(), f6.get(0));
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
