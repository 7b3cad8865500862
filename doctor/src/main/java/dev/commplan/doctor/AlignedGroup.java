package dev.commplan.doctor;

import dev.commplan.doctor.FlightRecord.Group;
import dev.commplan.doctor.FlightRecord.GroupKey;
import dev.commplan.doctor.FlightRecord.Operation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * One group's operations across its members, lined up by sequence number: the group's k-th operation on
 * every member is the same call when the ranks agree (they issue the group's operations in the same order:
 * that is what makes them collectives). For each member and number the table says whether the member kept
 * that operation, issued it but its ring dropped it, never issued it, or has no record of the group.
 */
final class AlignedGroup {
  /** What a member's record says about one sequence number. */
  enum Status {
    /** The operation is in the record. */
    KEPT,
    /** Issued (below the member's {@code nextSeq}) but no longer in its ring: older than what it kept. */
    DROPPED,
    /** Not issued: at or above the member's {@code nextSeq}. */
    NOT_ISSUED,
    /** The member's file has no record of this group (it closed it, or never made it). */
    NO_RECORD
  }

  /**
   * A member's record at one number.
   *
   * @param status what the record says
   * @param op the operation where {@link Status#KEPT}, else null
   */
  record Slot(Status status, Operation op) {}

  private final GroupKey key;
  private final List<FlightRecord> files;
  private final List<Group> records;
  private final List<Map<Long, Operation>> bySeq;
  private final long first;
  private final long last;
  private final long[] kept;

  private AlignedGroup(GroupKey key, List<FlightRecord> files, List<Group> records) {
    this.key = key;
    this.files = files;
    this.records = records;
    this.bySeq = new ArrayList<>();
    long lo = Long.MAX_VALUE;
    long hi = -1;
    for (Group g : records) {
      Map<Long, Operation> ops = new HashMap<>();
      if (g != null) {
        for (Operation op : g.operations()) {
          if (op.kind().aligned()) {
            ops.put(op.seq(), op);
            lo = Math.min(lo, op.seq());
          }
        }
        lo = Math.min(lo, g.nextSeq());
        hi = Math.max(hi, g.nextSeq() - 1);
      }
      bySeq.add(ops);
    }
    this.first = lo == Long.MAX_VALUE ? 0 : lo;
    this.last = hi;
    this.kept = bySeq.stream().flatMap(m -> m.keySet().stream()).mapToLong(Long::longValue).distinct().sorted()
        .toArray();
  }

  /**
   * Every group of the run: labels in the order the files first list them (by world rank, then file order:
   * the world first), and groups of one label (a mesh axis's) by their first member.
   */
  static List<AlignedGroup> of(RecordFolder.Run run) {
    Map<String, List<GroupKey>> byLabel = new LinkedHashMap<>();
    for (FlightRecord file : run.ranks()) {
      for (Group g : file.groups()) {
        List<GroupKey> keys = byLabel.computeIfAbsent(g.label(), k -> new ArrayList<>());
        if (!keys.contains(g.key())) {
          keys.add(g.key());
        }
      }
    }
    List<AlignedGroup> groups = new ArrayList<>();
    List<GroupKey> ordered = byLabel.values().stream().flatMap(keys -> keys.stream()
        .sorted(java.util.Comparator.comparing((GroupKey k) -> k.worldRanks().get(0)))).toList();
    for (GroupKey key : ordered) {
      List<FlightRecord> files = new ArrayList<>();
      List<Group> records = new ArrayList<>();
      for (int worldRank : key.worldRanks()) {
        FlightRecord file = run.ranks().get(worldRank);
        files.add(file);
        records.add(file.groups().stream().filter(g -> g.key().equals(key)).findFirst().orElse(null));
      }
      groups.add(new AlignedGroup(key, List.copyOf(files), java.util.Collections.unmodifiableList(records)));
    }
    return groups;
  }

  String label() {
    return key.label();
  }

  /** The members as world ranks, in group-rank order. */
  List<Integer> worldRanks() {
    return key.worldRanks();
  }

  int size() {
    return key.worldRanks().size();
  }

  /** Member {@code m}'s file (group rank {@code m}). */
  FlightRecord file(int m) {
    return files.get(m);
  }

  /** Member {@code m}'s record of the group, or null where its file has none. */
  Group record(int m) {
    return records.get(m);
  }

  boolean hasRecord(int m) {
    return records.get(m) != null;
  }

  /** The lowest number any member kept or reached: where the table starts. */
  long first() {
    return first;
  }

  /** The highest number any member issued: where the table ends ({@code first() - 1} when none did). */
  long last() {
    return last;
  }

  /**
   * The numbers that some member kept, ascending: the only ones where members can be compared, so the
   * analysis walks these rather than the whole range (a rank far behind would make that range long).
   */
  long[] keptSeqs() {
    return kept;
  }

  Slot slot(int m, long seq) {
    Group g = records.get(m);
    if (g == null) {
      return new Slot(Status.NO_RECORD, null);
    }
    if (seq >= g.nextSeq()) {
      return new Slot(Status.NOT_ISSUED, null);
    }
    Operation op = bySeq.get(m).get(seq);
    return op != null ? new Slot(Status.KEPT, op) : new Slot(Status.DROPPED, null);
  }

  /** The first kept operation at {@code seq}, over the members in order, or null. */
  Operation anyKept(long seq) {
    for (int m = 0; m < size(); m++) {
      Operation op = bySeq.get(m).get(seq);
      if (op != null) {
        return op;
      }
    }
    return null;
  }
}
