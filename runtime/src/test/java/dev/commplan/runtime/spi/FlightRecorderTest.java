package dev.commplan.runtime.spi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.management.ThreadMXBean;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
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

  /** finishedBefore starts where the last one ended: against a model that scans every slot, random calls. */
  @Test
  void finishedBeforeMarksExactlyWhatAFullScanWould() {
    java.util.Random random = new java.util.Random(7);
    for (int trial = 0; trial < 200; trial++) {
      int capacity = 1 + random.nextInt(9);
      FlightRecorder r = new FlightRecorder(0, capacity);
      java.util.Map<Long, FlightRecorder.State> model = new java.util.HashMap<>();
      for (int step = 0; step < 60; step++) {
        int what = random.nextInt(5);
        long next = r.nextSequence();
        if (what <= 1) {
          model.put(r.enqueued(A, step), FlightRecorder.State.ENQUEUED);
        } else if (what == 2) {
          long seq = next == 0 ? 0 : random.nextLong(next + 2); // sometimes past the last one
          r.finishedBefore(seq, step);
          model.replaceAll((s, st) -> s < seq && st.ordinal() < FlightRecorder.State.FINISHED.ordinal()
              ? FlightRecorder.State.FINISHED : st);
        } else if (what == 3 && next > 0) {
          long seq = random.nextLong(next);
          r.failed(seq, step);
          if (seq >= next - capacity) {
            model.put(seq, FlightRecorder.State.FAILED);
          }
        } else if (random.nextInt(10) == 0) {
          r.failPending(step);
          model.replaceAll((s, st) -> st.ordinal() < FlightRecorder.State.FINISHED.ordinal()
              ? FlightRecorder.State.FAILED : st);
        }
        for (FlightRecorder.Entry e : r.snapshot()) {
          assertEquals(model.get(e.sequence()), e.state(), "trial " + trial + ", step " + step + ", #" + e.sequence());
        }
      }
    }
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

  /**
   * What the backends do per call with the records on disk on: a recorder of a group (each sequenced operation
   * takes the group's next number), a plan step by its label with its wait, a direct call by its arguments, and
   * NCCL's question whether a wait covered one collective. Nothing is allocated, the folder set or not: the
   * folder is read only when a rank fails.
   */
  @Test
  void recordingInAGroupAllocatesNothing(@org.junit.jupiter.api.io.TempDir java.nio.file.Path dir) {
    OperationLabel step = OperationLabel.ofCalls("p.Plan", 0, -1, List.of(OperationLabel.Call.of(
        Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, 8, -1, null, List.of("a"))));
    FlightGroup group = new FlightJob("job", "local", 1, dir).log(0).group("world", 0, 1, new int[] {0}, null);
    FlightRecorder r = group.recorder(FlightRecorder.OWN_STREAM);
    ThreadMXBean threads = (ThreadMXBean) ManagementFactory.getThreadMXBean();
    long id = Thread.currentThread().threadId();
    long allocated = 0;
    for (int round = 0; round < 3; round++) { // the first rounds warm up the JIT
      long before = threads.getThreadAllocatedBytes(id);
      for (int i = 0; i < 10_000; i++) {
        long s = r.enqueued(step, i);
        r.started(s, i);
        boolean one = r.pendingCollective(s);
        r.finished(s, i + 1, one ? 5 : -1);
        long d = r.enqueuedDirect(Collective.ALL_REDUCE, DataType.F32, ReduceOp.SUM, 16, -1,
            OperationLabel.Kind.COLLECTIVE, null, FlightRecorder.OWN_STREAM, i);
        r.finished(d, i + 1);
        r.waited(d, 3);
      }
      allocated = threads.getThreadAllocatedBytes(id) - before;
    }
    long bytes = allocated;
    assertTrue(bytes < 1024, () -> "recording 20,000 operations in a group allocated " + bytes + " bytes");
    assertEquals(60_000, group.nextSeq(), "every sequenced operation took the group's next number");
  }

  @Test
  void capacityMustBePositive() {
    assertThrows(IllegalArgumentException.class, () -> new FlightRecorder(0, 0));
  }
}
