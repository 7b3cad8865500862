package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import java.util.List;
import java.util.Map;

/** The text of {@link Plan#describe()}: made once, at build. */
final class PlanDescription {
  private PlanDescription() {}

  /** Renders {@link Plan#describe()}: a header, the buffers, the axes' groups, each step's calls, the buckets. */
  static String describe(Schedule schedule, Communicator comm, List<String> fields, boolean[] bound,
      Buffer[] views, Map<String, String> intoByFieldAndStep, long ownedBytes, CompiledSchedule compiled,
      long bucketBytes) {
    StringBuilder out = new StringBuilder();
    describeHeader(out, schedule, comm);
    out.append("  buffers:");
    for (int handle = 0; handle < views.length; handle++) {
      out.append(handle == 0 ? " " : ", ").append(fields.get(handle)).append(' ').append(views[handle].dataType())
          .append('[').append(views[handle].length()).append(']').append(bound[handle] ? " (bound)" : "");
    }
    out.append("\n  plan-owned memory: ").append(ownedBytes).append(" bytes\n");
    describeGroups(out, schedule);
    for (int s = 0; s < schedule.steps().size(); s++) {
      Step step = schedule.steps().get(s);
      out.append("  step ").append(step.number()).append(": ").append(step.calls().size())
          .append(step.calls().size() == 1 ? " call" : " calls").append(" in one group\n");
      for (int c = 0; c < step.calls().size(); c++) {
        describeCall(out, schedule, step, step.calls().get(c), compiled.callNote(s, c), intoByFieldAndStep);
      }
    }
    if (bucketBytes > 0) {
      describeBuckets(out, schedule, bucketBytes);
    }
    return out.toString();
  }

  /** {@code plan p.X: 4 ranks, local backend, 2 steps, 3 calls}. */
  private static void describeHeader(StringBuilder out, Schedule schedule, Communicator comm) {
    int ranks = schedule.ranks();
    int callCount = schedule.steps().stream().mapToInt(s -> s.calls().size()).sum();
    out.append("plan ").append(schedule.planName()).append(": ").append(ranks).append(ranks == 1 ? " rank" : " ranks")
        .append(", ").append(comm.backendName()).append(" backend, ").append(schedule.steps().size())
        .append(schedule.steps().size() == 1 ? " step, " : " steps, ").append(callCount)
        .append(callCount == 1 ? " call\n" : " calls\n");
  }

  /** The groups of a plan over a mesh's axes: each axis, its size and this rank's place in it; none otherwise. */
  private static void describeGroups(StringBuilder out, Schedule schedule) {
    if (schedule.groups().size() <= 1) {
      return;
    }
    out.append("  groups:");
    for (int g = 1; g < schedule.groups().size(); g++) {
      Schedule.Group group = schedule.groups().get(g);
      out.append(g == 1 ? " " : ", ").append(group.axis()).append(" (").append(group.communicator().size())
          .append(group.communicator().size() == 1 ? " rank" : " ranks").append(", this rank ")
          .append(group.communicator().rank()).append(" there)");
    }
    out.append('\n');
  }

  /**
   * One call of {@code step}: its collective, axis and data type, then its op or root, count, the backend's note,
   * bytes, placement and fields (each with the field it goes {@code into} in this step).
   */
  private static void describeCall(StringBuilder out, Schedule schedule, Step step, CollectiveCall call, String note,
      Map<String, String> intoByFieldAndStep) {
    String axis = schedule.axisOf(call);
    out.append("    ").append(call.collective().label()).append(axis.isEmpty() ? "" : " over " + axis).append(' ')
        .append(call.dataType());
    if (call.collective().pointToPoint()) {
      describePointToPoint(out, call, note);
      return;
    }
    if (call.op() != null) {
      out.append(' ').append(call.op());
    }
    if (call.collective().hasRoot()) {
      out.append(" root ").append(call.root());
    }
    out.append(", count ").append(call.count());
    if (note != null) {
      out.append(" (").append(note).append(')');
    }
    long sent = call.sendBytes(schedule.sizeOf(call));
    long received = call.recvBytes(schedule.sizeOf(call));
    out.append(sent == received ? " (" + sent + " bytes)" : " (" + sent + " bytes sent, " + received + " received)");
    out.append(call.inPlace() ? ", in place: " : ", out of place: ");
    for (int i = 0; i < call.fields().size(); i++) {
      String field = call.fields().get(i);
      String into = intoByFieldAndStep.get(field + "@" + step.number());
      out.append(i == 0 ? "" : ", ").append(field).append(into == null ? "" : " -> " + into);
    }
    if (call.fields().size() > 1) {
      out.append(" (").append(call.fields().size()).append(" fields coalesced)");
    }
    out.append('\n');
  }


  /**
   * {@code buckets (bucketBytes 4096), enqueued in this order as their fields are marked ready:}, then per
   * bucket {@code bucket 0, step 0: b2, w2 (4096 bytes), 1 call: all-reduce F32 SUM, count 1024}.
   */
  private static void describeBuckets(StringBuilder out, Schedule schedule, long bucketBytes) {
    out.append("  buckets (bucketBytes ").append(bucketBytes).append("), enqueued in this order as their fields are"
        + " marked ready: ").append(schedule.buckets().size()).append('\n');
    for (Schedule.Bucket b : schedule.buckets()) {
      out.append("    bucket ").append(b.index()).append(", step ").append(b.step())
          .append(b.axis().isEmpty() ? "" : " over " + b.axis()).append(": ").append(String.join(", ", b.fields()))
          .append(" (").append(b.bytes()).append(" bytes), ").append(b.calls().size())
          .append(b.calls().size() == 1 ? " call:" : " calls:");
      for (int c = 0; c < b.calls().size(); c++) {
        CollectiveCall call = b.calls().get(c);
        out.append(c == 0 ? " " : "; ").append(call.collective().label()).append(' ').append(call.dataType())
            .append(call.op() != null ? " " + call.op() : "").append(", count ").append(call.count());
      }
      out.append('\n');
    }
  }

  /** {@code send F32 to rank 1 (rank + 1), count 16 (64 bytes): x}, or {@code to no one here (...)}. */
  private static void describePointToPoint(StringBuilder out, CollectiveCall call, String note) {
    out.append(call.collective() == Collective.SEND ? " to " : " from ")
        .append(call.peer() < 0 ? "no one on this rank" : "rank " + call.peer())
        .append(" (").append(call.peerExpression()).append("), count ").append(call.count());
    if (note != null) {
      out.append(" (").append(note).append(')');
    }
    out.append(" (").append(call.count() * call.dataType().byteSize()).append(" bytes").append(call.peer() < 0
        ? ", not moved" : "").append("): ").append(String.join(", ", call.fields())).append('\n');
  }
}
