package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.runtime.agreement.PlanFingerprint;
import java.util.ArrayList;
import java.util.List;

/**
 * Renders a plan's {@link PlanFingerprint}: a header (with the order check and the finite check where they are
 * on, since every rank must compare after the same units, and search and agree before the same steps), each declared collective in execution order, each NCCL call of the
 * schedule (if this rank got that far), and this rank's build failure. Nothing rank-specific (addresses,
 * offsets) goes in, so that equal plans render equal text on every rank.
 */
final class FingerprintLines {
  private FingerprintLines() {}

  static PlanFingerprint render(String planName, int ranks, boolean orderCheck, boolean checkFinite,
      Declarations declarations, List<Declarations.Call> ordered, Schedule schedule, RuntimeException failure) {
    List<String> lines = new ArrayList<>();
    lines.add("plan " + planName + " on " + ranks + " ranks");
    if (orderCheck) {
      lines.add("order check: the ranks' calls compared after every execute");
    }
    if (checkFinite) { // every rank must search and exchange before the same steps, or they would wait in different calls
      lines.add("finite check: floating-point reductions' send data searched, and the ranks agree, before they go out");
    }
    for (int i = 0; i < ordered.size(); i++) {
      lines.add(operation(i + 1, declarations, ordered.get(i)));
    }
    if (schedule != null) {
      int k = 0;
      for (Step step : schedule.steps()) {
        for (CollectiveCall call : step.calls()) {
          String axis = schedule.axisOf(call);
          lines.add(PlanFingerprint.CALL_PREFIX + ++k + ": step " + step.number() + " " + call(call)
              + (axis.isEmpty() ? "" : " over " + axis));
        }
      }
    }
    if (schedule != null) { // a bucketed plan's buckets: where they are cut and in what order they are enqueued
      for (Schedule.Bucket bucket : schedule.buckets()) {
        lines.add("bucket " + bucket.index() + ": step " + bucket.step()
            + (bucket.axis().isEmpty() ? "" : " over " + bucket.axis()) + ", " + bucket.bytes() + " bytes: "
            + String.join(", ", bucket.fields()));
      }
    }
    if (failure != null) {
      String message = String.valueOf(failure.getMessage());
      int newline = message.indexOf('\n');
      lines.add(PlanFingerprint.FAILED_PREFIX + failure.getClass().getSimpleName() + ": "
          + (newline < 0 ? message : message.substring(0, newline)));
    }
    return new PlanFingerprint(planName, lines);
  }

  /** {@code op 3: step 1 @AllReduce(op = SUM) grads F32[4096]}, with {@code -> recv ...} out of place. */
  private static String operation(int number, Declarations declarations, Declarations.Call c) {
    Declarations.Field send = declarations.field(c.send());
    StringBuilder line = new StringBuilder(PlanFingerprint.OP_PREFIX).append(number).append(": step ")
        .append(c.step()).append(" @").append(c.collective().annotation());
    if (c.peer() != null) {
      line.append('(').append(c.collective().peerAttribute()).append(" = \"").append(c.peer()).append("\")");
    } else if (c.op() != null && c.collective().hasRoot()) {
      line.append("(op = ").append(c.op()).append(", root = ").append(c.root()).append(')');
    } else if (c.op() != null) {
      line.append("(op = ").append(c.op()).append(')');
    } else if (c.collective().hasRoot()) {
      line.append("(root = ").append(c.root()).append(')');
    }
    if (c.group() != 0) {
      line.append(" over ").append(declarations.axis(c.group()));
    }
    line.append(' ').append(send.field()).append(' ').append(send.type()).append('[').append(send.count()).append(']');
    if (!c.inPlace()) {
      Declarations.Field recv = declarations.field(c.recv());
      line.append(" -> ").append(recv.field()).append(' ').append(recv.type()).append('[').append(recv.count())
          .append(']');
    }
    return line.toString();
  }

  /**
   * {@code all-reduce F32 SUM, count 16, in place: a, c}; a send or receive names its peer as declared
   * (the same text on every rank): {@code send F32 to rank + 1, count 16: x}.
   */
  private static String call(CollectiveCall call) {
    if (call.peerExpression() != null) {
      return call.collective().label() + " " + call.dataType() + (call.collective() == Collective.SEND ? " to " : " from ")
          + call.peerExpression() + ", count " + call.count() + ": " + String.join(", ", call.fields());
    }
    return call.collective().label() + " " + call.dataType() + (call.op() != null ? " " + call.op() : "")
        + (call.collective().hasRoot() ? " root " + call.root() : "") + ", count " + call.count()
        + (call.inPlace() ? ", in place: " : ", out of place: ") + String.join(", ", call.fields());
  }
}
