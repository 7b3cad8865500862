package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.Peer;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.DataType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What a {@link PlanBuilder} was told: the buffer fields (indexed by handle) and the collectives (in
 * declaration order). Every later stage (rules, layout, schedule, fingerprint, guard tables) reads it.
 */
final class Declarations {
  /** A declared buffer field; {@code bound} is null when the plan allocates it. */
  record Field(int handle, String field, DataType type, long count, String shape, Buffer bound) {}

  /**
   * A declared collective; {@code op} is null and {@code root} -1 where the collective takes none, {@code
   * peer} null but for a send or receive (whose one buffer is both {@code send} and {@code recv}); {@code
   * group} the group it runs over ({@link Schedule#groups()}: 0 for the plan's own communicator).
   */
  record Call(int order, int step, Collective collective, int send, int recv, ReduceOp op, int root, Peer peer,
      int group) {
    boolean inPlace() {
      return send == recv;
    }
  }

  private final List<Field> fields = new ArrayList<>();
  private final Map<String, Integer> handlesByField = new HashMap<>();
  private final List<Call> calls = new ArrayList<>();
  /** The axis of each group, by group index: "" (the plan's own communicator) first. */
  private final List<String> axes;

  Declarations(List<String> axes) {
    this.axes = List.copyOf(axes);
  }

  boolean hasField(String field) {
    return handlesByField.containsKey(field);
  }

  /** The field that {@link #add} would declare next (with the next handle), so that it can be checked first. */
  Field next(String field, DataType type, long count, String shape, Buffer bound) {
    return new Field(fields.size(), field, type, count, shape, bound);
  }

  /** Declares {@code field}, made by {@link #next}; returns its handle. */
  int add(Field field) {
    if (field.handle() != fields.size()) {
      throw new IllegalStateException("field " + field + " is not the next one (handle " + fields.size() + ")");
    }
    fields.add(field);
    handlesByField.put(field.field(), field.handle());
    return field.handle();
  }

  /** Throws unless {@code bound}, the buffer bound to {@code declared}, is bound to no field declared before. */
  void checkBoundOnce(String planName, Field declared) {
    for (Field other : fields) {
      if (other.bound() == declared.bound()) {
        throw new BufferBindingException("plan " + planName + ": the same buffer ("
            + declared.bound() + ") is bound to field '" + other.field() + "' and to field '" + declared.field()
            + "'; each field is a buffer of its own: bind another buffer to one of them, or leave it to the plan to"
            + " allocate");
      }
    }
  }

  /** The arguments of a declared collective (not a send or receive): an op and a root only where it takes them. */
  static void checkArguments(String planName, Collective collective, ReduceOp op, int root) {
    Objects.requireNonNull(collective, "collective");
    if (collective.pointToPoint()) {
      throw new IllegalArgumentException("plan " + planName + ": " + collective.label() + " is point-to-point: declare"
          + " it with " + collective.methodName() + "(step, buffer, peer)");
    }
    if (collective.hasOp()) {
      Objects.requireNonNull(op, "op");
    } else if (op != null) {
      throw new IllegalArgumentException("plan " + planName + ": " + collective.label() + " takes no op, got " + op);
    }
    if (!collective.hasRoot() && root != -1) {
      throw new IllegalArgumentException(
          "plan " + planName + ": " + collective.label() + " takes no root (pass -1), got " + root);
    }
  }

  void addCall(int step, Collective collective, int send, int recv, ReduceOp op, int root, Peer peer, int group) {
    calls.add(new Call(calls.size(), step, collective, send, recv, op, root, peer, group));
  }

  /** The axis group {@code group} runs over, "" for the plan's own communicator. */
  String axis(int group) {
    return axes.get(group);
  }

  /** The fields, indexed by handle. */
  List<Field> fields() {
    return fields;
  }

  /** Per handle, whether the user bound that field's buffer (else the plan allocates it). */
  boolean[] boundFlags() {
    boolean[] bound = new boolean[fields.size()];
    for (Field f : fields) {
      bound[f.handle()] = f.bound() != null;
    }
    return bound;
  }

  Field field(int handle) {
    return fields.get(handle);
  }

  String name(int handle) {
    return fields.get(handle).field();
  }

  /** The collectives in declaration order. */
  List<Call> calls() {
    return calls;
  }

  /** The collectives in execution order: ascending step, then declaration order. */
  List<Call> ordered() {
    List<Call> ordered = new ArrayList<>(calls);
    ordered.sort(Comparator.comparingInt(Call::step).thenComparingInt(Call::order));
    return ordered;
  }

  /** "send field@step" to the receive field, for out-of-place calls ({@link Plan#describe()}). */
  Map<String, String> intoByField() {
    Map<String, String> into = new HashMap<>();
    for (Call c : calls) {
      if (!c.inPlace() && !c.collective().pointToPoint()) {
        into.put(name(c.send()) + "@" + c.step(), name(c.recv()));
      }
    }
    return into;
  }

  /** The call as its annotation would be written: {@code @Broadcast(root = 0, into = "q", step = 2)}. */
  String annotation(Call c) {
    List<String> attributes = new ArrayList<>();
    if (c.peer() != null) {
      attributes.add(c.collective().peerAttribute() + " = \"" + c.peer() + "\"");
    }
    if (c.op() != null) {
      attributes.add("op = " + c.op());
    }
    if (c.collective().hasRoot()) {
      attributes.add("root = " + c.root());
    }
    if (!c.inPlace()) {
      attributes.add("into = \"" + name(c.recv()) + "\"");
    }
    if (c.step() != 0) {
      attributes.add("step = " + c.step());
    }
    if (c.group() != 0) {
      attributes.add("over = \"" + axis(c.group()) + "\"");
    }
    String name = "@" + c.collective().annotation();
    return attributes.isEmpty() ? name : name + "(" + String.join(", ", attributes) + ")";
  }
}
