package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import java.util.ArrayList;
import java.util.List;

/**
 * One data-parallel training step of the {@code overlap} sample on one rank, in one of the ways it is
 * timed. Enqueues everything on the compute's stream (the buckets of an overlapped step on the plan's
 * communication stream) and returns; the caller synchronizes the compute's stream.
 */
final class TrainStep {
  /** What a step runs. */
  enum Mode {
    /** The compute alone: forward, backward, update; no communication (the ranks drift apart). */
    COMPUTE("compute alone"),
    /** The plan alone: every gradient all-reduced, no compute. */
    COMMUNICATION("communication alone"),
    /** Backward, then the whole plan ({@code execute}), then the update: nothing overlaps. */
    SERIAL("serial (backward, then execute)"),
    /**
     * Each layer's gradients marked ready as the backward pass produces them, so that each bucket is reduced on
     * the communication stream while the layers below are computed; {@code finish}, then the update.
     */
    OVERLAPPED("overlapped (ready per layer, finish)");

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
  private final ReadyOrder order;
  /** The fields the last overlapped step marked, in the order it marked them. */
  private final List<OverlapGradsPlan.Field> lastMarked = new ArrayList<>();
  private int bucketsOut;

  /** A step that marks each gradient ready as soon as it is produced. */
  TrainStep(StepCompute compute, GradPlan grads) {
    this(compute, grads, ReadyOrder.AS_PRODUCED);
  }

  /** A step that marks the gradients ready in {@code order}. */
  TrainStep(StepCompute compute, GradPlan grads, ReadyOrder order) {
    this.compute = compute;
    this.grads = grads;
    this.order = order;
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
    boolean overlapped = mode == Mode.OVERLAPPED;
    int comm = overlapped ? trace.mark(grads.commStream()) : -1;
    if (overlapped) {
      lastMarked.clear();
      bucketsOut = 0;
    }
    compute.forward(step, grads);
    done = traced(trace, stream, StepTrace.Kind.FORWARD, "forward", done);
    if (overlapped) {
      comm = ready(order.produced(List.of(grads.lossField())), trace, done, comm);
    }
    // Last layer first, as a backward pass produces the gradients.
    for (int l = OverlapModel.LAYERS - 1; l >= 0; l--) {
      compute.gradients(l, grads);
      done = traced(trace, stream, StepTrace.Kind.GRADIENTS, "L" + l, done);
      if (overlapped) {
        comm = ready(order.produced(grads.layerFields(l)), trace, done, comm);
      }
      if (l > 0) {
        compute.propagate(l);
        done = traced(trace, stream, StepTrace.Kind.PROPAGATE, "", done);
      }
    }
    if (overlapped) {
      ready(order.rest(), trace, done, comm);
      grads.finish(stream);
      done = trace.mark(stream); // the compute stream goes on once the last bucket is done
    } else if (mode == Mode.SERIAL) {
      grads.execute(stream);
      done = traced(trace, stream, StepTrace.Kind.COMMUNICATION, "all-reduce", done);
    }
    compute.update(grads);
    traced(trace, stream, StepTrace.Kind.UPDATE, "update", done);
  }

  /** The fields the last overlapped step marked ready, in the order it marked them. */
  List<OverlapGradsPlan.Field> lastMarked() {
    return List.copyOf(lastMarked);
  }

  /**
   * Marks {@code fields} ready on the compute stream, whose work so far (up to its mark {@code produced})
   * wrote them; for each bucket that went out, marks the communication stream after it and records the
   * bucket's span from {@code comm}, the communication stream's last mark. Returns that stream's last mark.
   */
  private int ready(List<OverlapGradsPlan.Field> fields, StepTrace trace, int produced, int comm) {
    for (OverlapGradsPlan.Field field : fields) {
      lastMarked.add(field);
      int out = grads.ready(field, compute.stream());
      if (out > 0) {
        int to = trace.mark(grads.commStream());
        String label = out == 1 ? "bucket " + bucketsOut : "buckets " + bucketsOut + "-" + (bucketsOut + out - 1);
        trace.span(StepTrace.Kind.COMMUNICATION, label, comm, produced, to);
        bucketsOut += out;
        comm = to;
      }
    }
    return comm;
  }

  /** Marks {@code stream}, records the span from {@code from} to the new mark, and returns the mark. */
  private static int traced(StepTrace trace, Stream stream, StepTrace.Kind kind, String label, int from) {
    int to = trace.mark(stream);
    trace.span(kind, label, from, to);
    return to;
  }
}
