package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Event;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * Streams made by {@code newStream()} and events on the local backend: an event is a place in a worker's
 * queue, {@code waitFor} holds the waiting worker (never the host), collectives on two streams of one
 * communicator meet their peers in enqueue order, and the guard and the agreement check follow events from
 * stream to stream. Work is held back by host tasks that wait on latches, so that a missing wait is caught
 * every time, not by luck.
 */
class LocalStreamEventsTest {
  private static final Duration GENEROUS = Duration.ofSeconds(60);

  @Test
  void anEventIsDoneOnceTheWorkBeforeItRanAndNotBefore() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        try (LocalStream producer = (LocalStream) comm.newStream()) {
          CountDownLatch hold = new CountDownLatch(1);
          Event before = producer.record(); // nothing enqueued yet: done at once
          producer.enqueueHostTask(hold::await);
          Event after = producer.record();
          before.synchronize();
          assertTrue(before.isDone());
          assertFalse(after.isDone(), "the held task is before the event");
          hold.countDown();
          after.synchronize();
          assertTrue(after.isDone());
        }
      }));
    }
  }

  @Test
  void waitForHoldsTheWaitingWorkerNotTheHost() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      int[] order = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        LocalStream producer = (LocalStream) comm.newStream();
        LocalStream consumer = (LocalStream) comm.stream();
        try (I32Buffer log = I32Buffer.allocate(comm, 2)) {
          CountDownLatch hold = new CountDownLatch(1);
          producer.enqueueHostTask(hold::await);
          producer.enqueueHostTask(() -> log.set(0, 1));
          consumer.waitFor(producer.record()); // returns at once although the producer is held
          consumer.enqueueHostTask(() -> log.set(1, log.get(0) == 1 ? 2 : -1)); // sees the producer's write
          Event consumed = consumer.record();
          assertFalse(consumed.isDone(), "the consumer's task waits for the held producer");
          hold.countDown();
          consumer.synchronize();
          producer.close();
          return log.toArray();
        }
      })).getFirst();
      assertArrayEquals(new int[] {1, 2}, order);
    }
  }

  /**
   * Each rank holds a different stream, so a backend that numbered collectives when a worker reached them
   * would pair rank 0's second call with rank 1's first (different counts: a mismatch); numbered when
   * enqueued, each call meets its own.
   */
  @Test
  void collectivesOnTwoStreamsMeetTheirPeersInEnqueueOrder() {
    int n = 2;
    CountDownLatch[] holds = {new CountDownLatch(1), new CountDownLatch(1)};
    CyclicBarrier enqueued = new CyclicBarrier(n);
    try (LocalCluster cluster = new LocalCluster(n)) {
      List<float[]> results = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        LocalStream a = (LocalStream) comm.stream();
        LocalStream b = (LocalStream) comm.newStream();
        try (F32Buffer x = F32Buffer.allocate(comm, 3); F32Buffer y = F32Buffer.allocate(comm, 5)) {
          x.fill(comm.rank() + 1);
          y.fill(10 * (comm.rank() + 1));
          (comm.rank() == 0 ? a : b).enqueueHostTask(holds[comm.rank()]::await);
          comm.allReduce(x, x, ReduceOp.SUM, a); // collective #0
          comm.allReduce(y, y, ReduceOp.SUM, b); // collective #1
          enqueued.await();
          holds[comm.rank()].countDown();
          a.synchronize();
          b.synchronize();
          b.close();
          return new float[] {x.get(2), y.get(4)};
        }
      }));
      for (float[] r : results) {
        assertArrayEquals(new float[] {3, 30}, r);
      }
    }
  }

  @Test
  void anEventOfAnotherRankIsRefusedNamingBoth() {
    AtomicReference<Stream> rankZeros = new AtomicReference<>();
    CyclicBarrier shared = new CyclicBarrier(2);
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<String> messages = assertTimeoutPreemptively(GENEROUS, () -> cluster.call(comm -> {
        if (comm.rank() == 0) {
          rankZeros.set(comm.stream());
        }
        shared.await();
        String message = "";
        if (comm.rank() == 1) {
          Event theirs = rankZeros.get().record();
          message = assertThrows(IllegalArgumentException.class, () -> comm.stream().waitFor(theirs)).getMessage();
        }
        shared.await(); // rank 0 stays until rank 1 is done with its stream
        return message;
      }));
      String m = messages.get(1);
      assertTrue(m.contains("rank 1") && m.contains("rank 0") && m.contains("another rank"), m);
      Event foreign = new Event() {
        @Override
        public boolean isDone() {
          return true;
        }

        @Override
        public void synchronize() {}
      };
      cluster.run(comm -> {
        String message = assertThrows(IllegalArgumentException.class, () -> comm.stream().waitFor(foreign))
            .getMessage();
        assertTrue(message.contains("not made by a stream of this runtime"), message);
      });
    }
  }

  @Test
  void aClosedStreamRunsWhatItHadButTakesNothingMore() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        LocalStream s = (LocalStream) comm.newStream();
        CountDownLatch hold = new CountDownLatch(1);
        boolean[] ran = {false};
        s.enqueueHostTask(hold::await);
        s.enqueueHostTask(() -> ran[0] = true);
        Event done = s.record();
        s.close();
        s.close(); // idempotent
        assertThrows(IllegalStateException.class, () -> s.enqueueHostTask(() -> { }));
        assertThrows(IllegalStateException.class, s::record);
        assertThrows(IllegalStateException.class, s::synchronize);
        comm.stream().close(); // the communicator's own stream: does nothing
        comm.stream().synchronize();
        hold.countDown();
        done.synchronize();
        assertTrue(ran[0], "work enqueued before close still ran");
      }));
    }
  }

  @Test
  void closingTheCommunicatorEndsItsStreamsWorkers() throws InterruptedException {
    List<Thread> workers = new java.util.concurrent.CopyOnWriteArrayList<>();
    CountDownLatch never = new CountDownLatch(1);
    try (LocalCluster cluster = new LocalCluster(2)) {
      cluster.run(comm -> {
        workers.add(((LocalStream) comm.newStream()).worker());
        LocalStream closed = (LocalStream) comm.newStream();
        closed.enqueueHostTask(never::await); // closed by its user, still running this when the cluster closes
        closed.close();
        workers.add(closed.worker());
        workers.add(((LocalStream) comm.newStream()).worker());
      });
      for (Thread t : workers) {
        assertTrue(t.isAlive(), t.getName());
      }
    }
    for (Thread t : workers) {
      t.join(GENEROUS.toMillis());
      assertFalse(t.isAlive(), t.getName() + " outlived its cluster");
    }
  }

  @Test
  void aWaitForAnEventThatNeverComesTimesOutNamingTheEvent() {
    CountDownLatch never = new CountDownLatch(1);
    try (LocalCluster cluster = new LocalCluster(1, CommOptions.defaults().withTimeout(Duration.ofMillis(300)))) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        LocalStream producer = (LocalStream) comm.newStream();
        producer.enqueueHostTask(never::await);
        comm.stream().waitFor(producer.record());
        comm.stream().synchronize();
      }));
      CommTimeoutException timeout = findCause(e, CommTimeoutException.class);
      assertTrue(timeout.getMessage().contains("waited for an event of"), timeout.getMessage());
    } finally {
      never.countDown();
    }
  }

  /** The guard's marks on one stream are cleared by a synchronize of another that waited for it. */
  @Test
  void theGuardFollowsEventsFromStreamToStream() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      assertTimeoutPreemptively(GENEROUS, () -> cluster.run(comm -> {
        PlanBuilder b = new PlanBuilder("t.Guard", comm, 0);
        int w = b.buffer("w", DataType.F32, 4, "{\"4\"}", null);
        b.allReduce(0, w, w, ReduceOp.SUM);
        try (Plan plan = b.build(); Stream side = comm.newStream()) {
          F32Buffer buffer = (F32Buffer) plan.buffer(w);
          buffer.fill(1);
          plan.execute(side);
          assertThrows(BufferInFlightException.class, () -> buffer.get(0));
          comm.stream().waitFor(side.record());
          comm.stream().synchronize(); // waited for the side stream's event: covers the execute
          assertEquals(2f, buffer.get(0));
          plan.execute(side);
          Event e = side.record();
          assertThrows(BufferInFlightException.class, () -> buffer.get(0));
          e.synchronize();
          assertEquals(4f, buffer.get(0));
        }
      }));
    }
  }

  private static <T extends Throwable> T findCause(Throwable t, Class<T> type) {
    for (Throwable c = t; c != null; c = c.getCause()) {
      if (type.isInstance(c)) {
        return type.cast(c);
      }
      for (Throwable s : c.getSuppressed()) {
        if (type.isInstance(s)) {
          return type.cast(s);
        }
      }
    }
    throw new AssertionError("no " + type.getSimpleName() + " in " + t, t);
  }
}
