package dev.commplan.doctor;

import dev.commplan.doctor.FlightRecord.Call;
import dev.commplan.doctor.FlightRecord.Group;
import dev.commplan.doctor.FlightRecord.GroupKey;
import dev.commplan.doctor.FlightRecord.Kind;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * One file's text to a {@link FlightRecord}, checking every rule of docs/flight-records.md that one file can
 * break: the format and version first (so that another file, or a newer format, is named as such rather
 * than by its first odd member), then each member's type and range, and the rules between members (a
 * group's members hold the file's rank at its place; sequence numbers rise and stay below
 * {@code nextSeq}).
 */
final class RecordParser {
  private RecordParser() {}

  static FlightRecord parse(Path file, String text) throws BadInputException {
    Object json;
    try {
      json = Json.parse(text);
    } catch (Json.SyntaxException e) {
      String hint = e.getMessage().startsWith("unexpected end of input") ? " (the file ends early: truncated?)" : "";
      throw new BadInputException(file + ": not valid JSON: " + e.getMessage() + hint);
    }
    JsonObject root = JsonObject.root(json, file.toString());
    Object format = root.has("format") ? root.raw("format") : null;
    if (!FlightRecord.FORMAT.equals(format)) {
      String found = !root.has("format") ? "missing"
          : format instanceof String f ? Words.quote(f) : JsonObject.kind(format);
      throw new BadInputException(file + ": not a CommPlan flight record (its \"format\" is " + found + ", not \""
          + FlightRecord.FORMAT + "\")");
    }
    long version = root.integer("version");
    if (version != FlightRecord.VERSION) {
      throw new BadInputException(file + ": flight-record format version " + version + "; this doctor reads version "
          + FlightRecord.VERSION + (version > FlightRecord.VERSION
              ? " (use the doctor of the CommPlan release that wrote it)" : ""));
    }
    String job = root.nonEmptyString("job");
    String backend = root.nonEmptyString("backend");
    int worldSize = (int) root.integer("worldSize", 1, Integer.MAX_VALUE);
    int worldRank = (int) root.integer("worldRank", 0, worldSize - 1);
    String host = root.string("host");
    long pid = root.integer("pid");
    String reason = root.string("reason");
    JsonObject writtenAt = root.object("writtenAt");
    long epochMillis = writtenAt.integer("epochMillis");
    long nanoTime = writtenAt.integer("nanoTime");

    List<Object> groupItems = root.array("groups");
    if (groupItems.isEmpty()) {
      throw root.problem("groups", "is empty (every rank belongs to the world at least)");
    }
    List<Group> groups = new ArrayList<>();
    Set<GroupKey> seen = new HashSet<>();
    for (int g = 0; g < groupItems.size(); g++) {
      JsonObject item = root.element("groups", groupItems, g);
      Group group = group(item, worldRank, worldSize);
      if (!seen.add(group.key())) {
        throw new BadInputException(file + ": " + item.path() + " repeats the group " + Words.quote(group.label())
            + " of world ranks " + group.worldRanks() + " (a label and members must name one group)");
      }
      groups.add(group);
    }
    return new FlightRecord(file, job, backend, worldRank, worldSize, host, pid, reason, epochMillis, nanoTime,
        List.copyOf(groups));
  }

  private static Group group(JsonObject item, int worldRank, int worldSize) throws BadInputException {
    String label = item.nonEmptyString("label");
    List<Long> ranks = item.integers("ranks");
    if (ranks.isEmpty()) {
      throw item.problem("ranks", "is empty");
    }
    Set<Long> distinct = new HashSet<>();
    for (long r : ranks) {
      if (r < 0 || r >= worldSize) {
        throw item.problem("ranks", "holds " + r + ", not a world rank (the world has " + worldSize + ")");
      }
      if (!distinct.add(r)) {
        throw item.problem("ranks", "holds " + r + " twice");
      }
    }
    long size = item.integer("size");
    if (size != ranks.size()) {
      throw item.problem("size", "is " + size + ", but \"ranks\" lists " + ranks.size());
    }
    int rank = (int) item.integer("rank", 0, size - 1);
    if (ranks.get(rank) != worldRank) {
      throw item.problem("rank", "is " + rank + ", but ranks[" + rank + "] is world rank " + ranks.get(rank)
          + ", not this file's " + worldRank);
    }
    long nextSeq = item.integer("nextSeq", 0, Long.MAX_VALUE);
    List<Object> opItems = item.array("operations");
    List<Operation> operations = new ArrayList<>(opItems.size());
    long lastSeq = -1;
    for (int i = 0; i < opItems.size(); i++) {
      JsonObject o = item.element("operations", opItems, i);
      Operation op = operation(o, (int) size);
      if (op.kind().aligned()) {
        if (op.seq() <= lastSeq) {
          throw o.problem("seq", "is " + op.seq() + ", not above the " + lastSeq + " before it (sequence numbers rise,"
              + " oldest first)");
        }
        if (op.seq() >= nextSeq) {
          throw o.problem("seq", "is " + op.seq() + ", not below the group's nextSeq " + nextSeq);
        }
        lastSeq = op.seq();
      }
      operations.add(op);
    }
    List<Integer> members = ranks.stream().map(Long::intValue).toList();
    return new Group(label, members, rank, nextSeq, List.copyOf(operations));
  }

  private static Operation operation(JsonObject o, int groupSize) throws BadInputException {
    Kind kind = oneOf(o, "kind", Kind.values(), Kind::jsonName);
    long seq = o.integer("seq");
    if (kind.aligned() && seq < 0) {
      throw o.problem("seq", "is " + seq + "; a " + kind.jsonName() + " operation has a number from 0");
    }
    if (!kind.aligned() && seq != -1) {
      throw o.problem("seq", "is " + seq + "; a " + kind.jsonName() + " operation has none (-1)");
    }
    String plan = o.stringOrNull("plan");
    int step = (int) o.integer("step", -1, Integer.MAX_VALUE);
    int bucket = (int) o.integer("bucket", -1, Integer.MAX_VALUE);
    List<Object> callItems = o.array("calls");
    if (callItems.isEmpty() && kind != Kind.LOCAL) {
      throw o.problem("calls", "is empty; a " + kind.jsonName() + " operation has at least one call");
    }
    List<Call> calls = new ArrayList<>(callItems.size());
    for (int i = 0; i < callItems.size(); i++) {
      calls.add(call(o.element("calls", callItems, i), groupSize));
    }
    if (kind == Kind.P2P && calls.stream().anyMatch(c -> c.peer() == null)) {
      throw o.problem("calls", "holds a call without a peer in a p2p operation (collectives make it a"
          + " collective operation)");
    }
    String text = o.string("text");
    String stream = o.string("stream");
    State state = oneOf(o, "state", State.values(), State::jsonName);
    long enqueued = o.integer("enqueuedNanos");
    Long started = o.integerOrNull("startedNanos");
    Long ended = o.integerOrNull("endedNanos");
    Long waited = o.integerOrNull("waitedNanos");
    if (waited != null && waited < 0) {
      throw o.problem("waitedNanos", "is " + waited + ", below 0 (null when not known)");
    }
    return new Operation(seq, kind, plan, step, bucket, List.copyOf(calls), text, stream, state, enqueued,
        started, ended, waited);
  }

  private static Call call(JsonObject c, int groupSize) throws BadInputException {
    String collective = c.nonEmptyString("collective");
    String type = c.stringOrNull("type");
    String op = c.stringOrNull("op");
    Long count = c.integerOrNull("count");
    if (count != null) {
      c.checkRange("count", count, 0, Long.MAX_VALUE);
    }
    Long root = c.integerOrNull("root");
    if (root != null) {
      c.checkRange("root", root, 0, groupSize - 1);
    }
    Long peer = c.integerOrNull("peer");
    if (peer != null) {
      c.checkRange("peer", peer, 0, groupSize - 1);
    }
    String over = c.stringOrNull("over");
    List<String> fields = c.strings("fields");
    return new Call(collective, type, op, count, root == null ? null : root.intValue(),
        peer == null ? null : peer.intValue(), over, fields);
  }

  private static <E extends Enum<E>> E oneOf(JsonObject o, String member, E[] values,
      java.util.function.Function<E, String> name) throws BadInputException {
    String s = o.string(member);
    for (E v : values) {
      if (name.apply(v).equals(s)) {
        return v;
      }
    }
    List<String> names = java.util.Arrays.stream(values).map(name).toList();
    throw o.problem(member, "is " + Words.quote(s) + ", not one of " + String.join(", ", names));
  }
}
