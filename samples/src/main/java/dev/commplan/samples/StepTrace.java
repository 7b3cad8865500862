package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import java.util.ArrayList;
import java.util.List;

/**
 * Records when a rank's streams reached points of a training step, and what ran between them, for the
 * timeline ({@link TimelineSvg}). A mark is taken in stream order ({@link Marks}): on the local backend by
 * a host task that reads the clock when the stream's worker reaches it, on a GPU by a CUDA event with
 * timing; the times are read after the streams were synchronized. {@link #OFF} records nothing, so that
 * the timed steps pay for no marks.
 */
final class StepTrace {
  /** How a backend takes a mark in stream order and reads its time afterwards. */
  interface Marks extends AutoCloseable {
    /** Records a mark when {@code stream} reaches the work enqueued so far; returns its index (0, 1, ...). */
    int mark(Stream stream);

    /** Mark {@code index}'s time in milliseconds from an origin of the implementation's choosing. */
    double millis(int index);

    /** Forgets every mark, for the next step. */
    void clear();

    @Override
    void close();
  }

  /** What one rank did over time: a span of work on one of its streams. */
  enum Kind {
    FORWARD("forward and loss", true),
    GRADIENTS("a layer's gradients", true),
    PROPAGATE("gradient to the layer below", true),
    UPDATE("SGD update", true),
    COMMUNICATION("all-reduce", false);

    private final String legend;
    private final boolean compute;

    Kind(String legend, boolean compute) {
      this.legend = legend;
      this.compute = compute;
    }

    /** What the legend calls it. */
    String legend() {
      return legend;
    }

    /** Whether it is computation (the compute lane) rather than communication. */
    boolean isCompute() {
      return compute;
    }
  }

  /**
   * A span of work.
   *
   * @param rank the rank that did it
   * @param label what it was, short ("L15", "bucket 3")
   * @param startMillis when it started (same origin for every span of a timeline)
   * @param endMillis when it ended
   */
  record Span(int rank, Kind kind, String label, double startMillis, double endMillis) {
    Span {
      if (!(endMillis >= startMillis)) {
        throw new IllegalArgumentException(label + " of rank " + rank + " ends (" + endMillis
            + " ms) before it starts (" + startMillis + " ms)");
      }
    }

    Span shifted(double by) {
      return new Span(rank, kind, label, startMillis - by, endMillis - by);
    }
  }

  /** A trace that records nothing: {@link #mark} returns -1, {@link #span} does nothing, no spans. */
  static final StepTrace OFF = new StepTrace(null, -1);

  private record Pending(Kind kind, String label, int from, int alsoAfter, int to) {}

  private final Marks marks;
  private final int rank;
  private final List<Pending> pending = new ArrayList<>();

  /** A trace of rank {@code rank}'s streams, marked by {@code marks}. */
  StepTrace(Marks marks, int rank) {
    this.marks = marks;
    this.rank = rank;
  }

  /** Marks {@code stream}'s current point (see {@link Marks#mark}); -1 when off. */
  int mark(Stream stream) {
    return marks == null ? -1 : marks.mark(stream);
  }

  /** Work of {@code kind} ran between marks {@code from} and {@code to}. */
  void span(Kind kind, String label, int from, int to) {
    span(kind, label, from, from, to);
  }

  /**
   * Work of {@code kind} started when both marks {@code from} and {@code alsoAfter} had passed (work on one
   * stream that waited for another's) and ended at mark {@code to}.
   */
  void span(Kind kind, String label, int from, int alsoAfter, int to) {
    if (marks != null) {
      pending.add(new Pending(kind, label, from, alsoAfter, to));
    }
  }

  /** The spans recorded since the last call, with their times; call after synchronizing every marked stream. */
  List<Span> spans() {
    if (marks == null) {
      return List.of();
    }
    List<Span> spans = new ArrayList<>();
    for (Pending p : pending) {
      double start = Math.max(marks.millis(p.from()), marks.millis(p.alsoAfter()));
      spans.add(new Span(rank, p.kind(), p.label(), start, Math.max(start, marks.millis(p.to()))));
    }
    pending.clear();
    marks.clear();
    return spans;
  }

  /** {@code spans} moved so that the earliest starts at 0 (ranks' marks may have different origins). */
  static List<Span> fromZero(List<Span> spans) {
    double origin = spans.stream().mapToDouble(Span::startMillis).min().orElse(0);
    return spans.stream().map(s -> s.shifted(origin)).toList();
  }
}
