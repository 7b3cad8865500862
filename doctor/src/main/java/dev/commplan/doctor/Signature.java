package dev.commplan.doctor;

import dev.commplan.doctor.FlightRecord.Call;
import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;
import java.util.Set;

/**
 * What every member of a group must agree on about its k-th operation: its kind, plan, step, bucket, and the
 * calls made over the whole group (collective, axis, type, op, count, root, fields). Sends and receives are
 * left out: each rank names its own peer, so they differ between ranks that agree.
 *
 * @param kind the operation's kind
 * @param plan its plan, or null
 * @param step its step, or -1
 * @param bucket its bucket, or -1
 * @param calls its calls without a peer
 */
record Signature(Kind kind, String plan, int step, int bucket, List<Call> calls) {
  static Signature of(Operation op) {
    return new Signature(op.kind(), op.plan(), op.step(), op.bucket(),
        op.calls().stream().filter(c -> c.peer() == null).toList());
  }

  /** The names of what differs between two operations, in the order the runtime's messages name them. */
  static List<String> differences(Operation a, Operation b) {
    Signature x = of(a);
    Signature y = of(b);
    Set<String> parts = new LinkedHashSet<>();
    if (x.kind != y.kind) {
      parts.add("kind");
    }
    if (!Objects.equals(x.plan, y.plan)) {
      parts.add("plan");
    }
    if (x.step != y.step) {
      parts.add("step");
    }
    if (x.bucket != y.bucket) {
      parts.add("bucket");
    }
    if (x.calls.size() != y.calls.size()) {
      parts.add("number of calls");
    }
    for (int i = 0; i < Math.min(x.calls.size(), y.calls.size()); i++) {
      Call c = x.calls.get(i);
      Call d = y.calls.get(i);
      check(parts, "collective", c.collective(), d.collective());
      check(parts, "axis", c.over(), d.over());
      check(parts, "data type", c.type(), d.type());
      check(parts, "op", c.op(), d.op());
      check(parts, "count", c.count(), d.count());
      check(parts, "root", c.root(), d.root());
      check(parts, "fields", c.fields(), d.fields());
    }
    return new ArrayList<>(parts);
  }

  private static void check(Set<String> parts, String name, Object a, Object b) {
    if (!Objects.equals(a, b)) {
      parts.add(name);
    }
  }
}
