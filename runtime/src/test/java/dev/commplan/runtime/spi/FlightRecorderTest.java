package dev.commplan.runtime.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import java.lang.management.ManagementFactory;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The flight recorder's ring: wrap-around, stale updates, bulk transitions, the text, no allocation. */
class FlightRecorderTest {
  private static final OperationLabel A = new OperationLabel("p.Plan", 0, "all-reduce F32 SUM, count 8", List.of("a"));
  private static final OperationLabel B = OperationLabel.direct("broadcast F32 root 1, count 4");

  @Test
  void keepsTheLastOperationsOldestFirstAndIgnoresThoseThatLeftTheRing() {
    FlightRecorder r = new FlightRecorder(3, 4);
    for (int i = 0; i < 6; i++) {
      assertEquals(i, r.enqueued(i % 2 == 0 ? A : B, 1000 + i));
    }
    r.started(1, 5000); // left the ring: ignored
    r.finished(0, 5000);
    r.started(4, 2000);
    r.failed(5, 3000);
    List<FlightRecorder.Entry> e = r.snapshot();
    assertEquals(List.of(2L, 3L, 4L, 5L), e.stream().map(FlightRecorder.Entry::sequence).toList());
    assertEquals(FlightRecorder.State.ENQUEUED, e.get(0).state());
    assertEquals(FlightRecorder.State.STARTED, e.get(2).state());
    assertEquals(2000, e.get(2).startNanos());
    assertEquals(FlightRecorder.State.FAILED, e.get(3).state());
    assertEquals(2, r.oldestPending().sequence());
    r.finishedBefore(4, 4000);
    assertEquals(4, r.oldestPending().sequence());
    r.failPending(4500);
    assertNull(r.oldestPending());
    assertEquals(6, r.nextSequence());
    assertEquals(2, r.slot(6));
  }

  @Test
  void theTextNamesEachOperationMostRecentLast() {
    FlightRecorder r = new FlightRecorder(1, 8);
    assertTrue(r.format().contains("(nothing enqueued yet)"));
    r.enqueued(A, 0);
    r.started(0, 1_000_000);
    r.finished(0, 3_000_000);
    r.enqueued(B, 4_000_000);
    String text = r.format(10_000_000);
    assertEquals("""
        flight record of rank 1 (last 2 of 2 operations, most recent last):
          #0 FINISHED  enqueued 10.0 ms ago, started 9.0 ms ago, ended after 2.0 ms: plan p.Plan, step 0, \
        all-reduce F32 SUM, count 8, fields [a]
          #1 ENQUEUED  enqueued 6.0 ms ago: broadcast F32 root 1, count 4 (called directly)""", text);
  }

  @Test
  void recordingAllocatesNothing() {
    FlightRecorder r = new FlightRecorder(0, FlightRecorder.DEFAULT_CAPACITY);
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    for (int i = 0; i < 20_000; i++) { // warm up the JIT
      long s = r.enqueued(A, i);
      r.started(s, i);
      r.finished(s, i);
    }
    long id = Thread.currentThread().threadId();
    long before = threads.getThreadAllocatedBytes(id);
    for (int i = 0; i < 10_000; i++) {
      long s = r.enqueued(A, i);
      r.started(s, i);
      r.finished(s, i);
    }
    long after = threads.getThreadAllocatedBytes(id);
    assertTrue(after - before < 1024, "recording 10,000 operations allocated " + (after - before) + " bytes");
  }

  @Test
  void capacityMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new FlightRecorder(0, 0));
  }
}
