package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Stream;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StepTraceTest {
  /** Marks whose times the test sets: mark i is at times.get(i). */
  private static final class FakeMarks implements StepTrace.Marks {
    final List<Double> times = new ArrayList<>();
    int marked;
    int cleared;

    @Override
    public int mark(Stream stream) {
      return marked++;
    }

    @Override
    public double millis(int index) {
      return times.get(index);
    }

    @Override
    public void clear() {
      cleared++;
      marked = 0;
    }

    @Override
    public void close() {}
  }

  @Test
  void spansTakeTheirMarksTimes() {
    FakeMarks marks = new FakeMarks();
    marks.times.addAll(List.of(10.0, 12.5, 20.0, 19.0, 30.0));
    StepTrace trace = new StepTrace(marks, 3);
    int start = trace.mark(null);
    int forward = trace.mark(null);
    trace.span(StepTrace.Kind.FORWARD, "forward", start, forward);
    int commStart = trace.mark(null); // the communication stream reached its point at 20 ms ...
    int producer = trace.mark(null); // ... but its producer's work ended at 19 ms: the span starts at 20
    int commEnd = trace.mark(null);
    trace.span(StepTrace.Kind.COMMUNICATION, "bucket 0", commStart, producer, commEnd);
    List<StepTrace.Span> spans = trace.spans();
    assertEquals(List.of(new StepTrace.Span(3, StepTrace.Kind.FORWARD, "forward", 10, 12.5),
        new StepTrace.Span(3, StepTrace.Kind.COMMUNICATION, "bucket 0", 20, 30)), spans);
    assertEquals(1, marks.cleared);
    assertEquals(List.of(), trace.spans(), "read once");
  }

  @Test
  void aSpanStartsWhenTheLaterOfItsTwoStartsHasPassed() {
    FakeMarks marks = new FakeMarks();
    marks.times.addAll(List.of(5.0, 8.0, 9.0));
    StepTrace trace = new StepTrace(marks, 0);
    trace.span(StepTrace.Kind.COMMUNICATION, "b", trace.mark(null), trace.mark(null), trace.mark(null));
    assertEquals(8.0, trace.spans().get(0).startMillis());
  }

  @Test
  void offRecordsNothing() {
    assertEquals(-1, StepTrace.OFF.mark(null));
    StepTrace.OFF.span(StepTrace.Kind.UPDATE, "update", -1, -1);
    assertEquals(List.of(), StepTrace.OFF.spans());
  }

  @Test
  void fromZeroMovesTheEarliestSpanToZero() {
    List<StepTrace.Span> spans = StepTrace.fromZero(List.of(new StepTrace.Span(0, StepTrace.Kind.FORWARD, "f", 100, 101),
        new StepTrace.Span(1, StepTrace.Kind.FORWARD, "f", 99.5, 102)));
    assertEquals(0.5, spans.get(0).startMillis());
    assertEquals(0, spans.get(1).startMillis());
    assertEquals(2.5, spans.get(1).endMillis());
  }

  @Test
  void aSpanThatEndsBeforeItStartsIsRefused() {
    String message = assertThrows(IllegalArgumentException.class,
        () -> new StepTrace.Span(2, StepTrace.Kind.UPDATE, "update", 3, 2)).getMessage();
    assertTrue(message.contains("update of rank 2 ends (2.0 ms) before it starts (3.0 ms)"), message);
  }
}
