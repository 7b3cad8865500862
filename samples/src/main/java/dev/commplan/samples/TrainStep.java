package dev.commplan.samples;

import dev.commplan.runtime.Stream;

/**
 * One data-parallel training step of the {@code overlap} sample on one rank, in one of the ways it is
 * timed. Enqueues everything on the compute's stream and returns; the caller synchronizes it.
 */
final class TrainStep {
  /** What a step runs. */
  enum Mode {
    /** The compute alone: forward, backward, update; no communication (the ranks drift apart). */
    COMPUTE("compute alone"),
    /** The plan alone: every gradient all-reduced, no compute. */
    COMMUNICATION("communication alone"),
    /** Backward, then the whole plan ({@code execute}), then the update: nothing overlaps. */
    SERIAL("serial (backward, then execute)");

    private final String description;

    Mode(String description) {
      this.description = description;
    }

    String description() {
      return description;
    }
  }

  private final StepCompute compute;
  private final GradPlan grads;

  TrainStep(StepCompute compute, GradPlan grads) {
    this.compute = compute;
    this.grads = grads;
  }

  /**
   * Enqueues step {@code step} (which picks the batch) in {@code mode}, marking what it enqueues in
   * {@code trace} ({@link StepTrace#OFF} for none).
   */
  void run(int step, Mode mode, StepTrace trace) {
    Stream stream = compute.stream();
    int done = trace.mark(stream);
    if (mode == Mode.COMMUNICATION) {
      grads.execute(stream);
      trace.span(StepTrace.Kind.COMMUNICATION, "all-reduce", done, trace.mark(stream));
      return;
    }
    compute.forward(step, grads);
    done = traced(trace, stream, StepTrace.Kind.FORWARD, "forward", done);
    // Last layer first, as a backward pass produces the gradients.
    for (int l = OverlapModel.LAYERS - 1; l >= 0; l--) {
      compute.gradients(l, grads);
      done = traced(trace, stream, StepTrace.Kind.GRADIENTS, "L" + l, done);
      if (l > 0) {
        compute.propagate(l);
        done = traced(trace, stream, StepTrace.Kind.PROPAGATE, "", done);
      }
    }
    if (mode == Mode.SERIAL) {
      grads.execute(stream);
      done = traced(trace, stream, StepTrace.Kind.COMMUNICATION, "all-reduce", done);
    }
    compute.update(grads);
    traced(trace, stream, StepTrace.Kind.UPDATE, "update", done);
  }

  /** Marks {@code stream}, records the span from {@code from} to the new mark, and returns the mark. */
  private static int traced(StepTrace trace, Stream stream, StepTrace.Kind kind, String label, int from) {
    int to = trace.mark(stream);
    trace.span(kind, label, from, to);
    return to;
  }
}
