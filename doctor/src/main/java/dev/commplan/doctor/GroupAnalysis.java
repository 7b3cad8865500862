package dev.commplan.doctor;

import dev.commplan.doctor.AlignedGroup.Slot;
import dev.commplan.doctor.AlignedGroup.Status;
import dev.commplan.doctor.FlightRecord.Group;
import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import dev.commplan.doctor.Lateness.RankLateness;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What one group's aligned records say: the last operation every rank completed, the first where the ranks'
 * calls differ, the ranks that never entered an operation their peers entered, the first failed operation
 * not explained by those, members without a record of the group, and each rank's lateness. Each is null (or
 * empty) where there is nothing to say; {@link #problems()} lists what makes the exit status 1.
 */
final class GroupAnalysis {
  /**
   * The last operation every member completed.
   *
   * @param seq its number
   * @param op its record on the first member that kept it
   */
  record Completed(long seq, Operation op) {}

  /**
   * One of the different calls at a number, and the ranks that made it.
   *
   * @param op the call, as the first of those ranks recorded it
   * @param worldRanks the ranks that made it
   */
  record Variant(Operation op, List<Integer> worldRanks) {}

  /**
   * The first number at which the members' operations differ.
   *
   * @param seq the number
   * @param variants each different call with its ranks, in rank order of first appearance
   * @param differing what differs between the first variant and the others
   * @param unknown ranks whose ring no longer held the operation
   */
  record Difference(long seq, List<Variant> variants, List<String> differing, List<Integer> unknown) {}

  /**
   * Where a rank was: its first operation that did not complete in one of its groups.
   *
   * @param groupLabel the group
   * @param op the operation
   */
  record Open(String groupLabel, Operation op) {}

  /**
   * A rank that never entered the stalled operation, and where it was instead.
   *
   * @param worldRank the rank
   * @param lastHere its last operation in this group, or null where it kept none
   * @param open its first unfinished or failed operation in each of its groups (sends, receives and local work
   *     included), oldest group first
   */
  record Absent(int worldRank, Operation lastHere, List<Open> open) {}

  /**
   * The lowest number that some members issued and others did not.
   *
   * @param seq the number
   * @param op the operation, as a member that entered it recorded it (null where every such ring dropped it)
   * @param entered the members that entered it, each with its record of it (null where dropped)
   * @param absent the members that never entered it
   */
  record Stall(long seq, Operation op, Map<Integer, Operation> entered, List<Absent> absent) {}

  /**
   * The first operation that failed before the difference and the stall (or where there is neither).
   *
   * @param seq its number
   * @param op its record on the first rank where it failed
   * @param worldRanks the ranks where it failed
   */
  record Failure(long seq, Operation op, List<Integer> worldRanks) {}

  final AlignedGroup group;
  final Completed lastCompleted;
  final Difference difference;
  final Stall stall;
  final Failure failure;
  /** Members whose file has no record of this group. */
  final List<Integer> withoutRecord;
  /** Whether some member with a record has an aligned operation that did not complete. */
  final boolean someoneWaits;
  final List<RankLateness> lateness;
  /** The ranks whose median lateness reaches the threshold, slowest first. */
  final List<RankLateness> late;

  GroupAnalysis(AlignedGroup group, RecordFolder.Run run, long lateThresholdNanos) {
    this.group = group;
    this.lastCompleted = lastCompleted(group);
    this.difference = difference(group);
    this.stall = stall(group, run);
    this.withoutRecord = new ArrayList<>();
    boolean waits = false;
    for (int m = 0; m < group.size(); m++) {
      Group g = group.record(m);
      if (g == null) {
        withoutRecord.add(group.worldRanks().get(m));
      } else if (g.operations().stream().anyMatch(op -> op.kind().aligned() && op.state() != State.COMPLETED)) {
        waits = true;
      }
    }
    this.someoneWaits = waits;
    this.failure = failure(group, difference, stall);
    this.lateness = Lateness.of(group);
    this.late = lateness.stream().filter(l -> l.medianNanos() >= lateThresholdNanos).toList();
  }

  /** One line per problem found, for the verdict; empty when the group is well. */
  List<String> problems() {
    List<String> problems = new ArrayList<>();
    String in = group.label() + ": ";
    if (difference != null) {
      problems.add(in + "the ranks' calls differ at #" + difference.seq() + " (" + String.join(", ",
          difference.differing()) + ")");
    }
    if (stall != null) {
      List<Integer> absent = stall.absent().stream().map(Absent::worldRank).toList();
      problems.add(in + Words.ranks(absent) + " never entered #" + stall.seq()
          + (stall.op() != null ? " (" + Words.what(stall.op()) + ")" : "") + ", which "
          + Words.ranks(stall.entered().keySet()) + " entered");
    }
    if (failure != null) {
      problems.add(in + "#" + failure.seq() + " failed on " + Words.ranks(failure.worldRanks()));
    }
    if (!withoutRecord.isEmpty() && someoneWaits) {
      problems.add(in + Words.ranks(withoutRecord) + " of the group " + (withoutRecord.size() == 1 ? "has" : "have")
          + " no record of it, while its other ranks did not complete their operations in it");
    }
    for (RankLateness l : late) {
      problems.add(in + "rank " + l.worldRank() + " is late: the others waited " + Words.duration(l.medianNanos())
          + " for it (median of " + Words.count(l.collectives(), "collective") + "; worst "
          + Words.duration(l.worstNanos()) + ")");
    }
    return problems;
  }

  private static Completed lastCompleted(AlignedGroup group) {
    long[] kept = group.keptSeqs();
    for (int i = kept.length - 1; i >= 0; i--) {
      long seq = kept[i];
      boolean all = true;
      for (int m = 0; m < group.size() && all; m++) {
        Slot s = group.slot(m, seq);
        // A member whose ring dropped it went on past it; one without a record of the group says nothing.
        all = s.status() == Status.DROPPED || s.status() == Status.NO_RECORD
            || s.status() == Status.KEPT && s.op().state() == State.COMPLETED;
      }
      Operation op = group.anyKept(seq);
      if (all && op != null) {
        return new Completed(seq, op);
      }
    }
    return null;
  }

  private static Difference difference(AlignedGroup group) {
    for (long seq : group.keptSeqs()) {
      Map<Signature, Variant> variants = new LinkedHashMap<>();
      List<Integer> unknown = new ArrayList<>();
      for (int m = 0; m < group.size(); m++) {
        Slot s = group.slot(m, seq);
        int rank = group.worldRanks().get(m);
        if (s.status() == Status.KEPT) {
          Variant v = variants.computeIfAbsent(Signature.of(s.op()), k -> new Variant(s.op(), new ArrayList<>()));
          v.worldRanks().add(rank);
        } else if (s.status() == Status.DROPPED) {
          unknown.add(rank);
        }
      }
      if (variants.size() > 1) {
        List<Variant> list = variants.values().stream().map(v -> new Variant(v.op(), List.copyOf(v.worldRanks())))
            .toList();
        return new Difference(seq, list, Signature.differences(list.get(0).op(), list.get(1).op()), unknown);
      }
    }
    return null;
  }

  private static Stall stall(AlignedGroup group, RecordFolder.Run run) {
    long lowest = Long.MAX_VALUE;
    long highest = -1;
    for (int m = 0; m < group.size(); m++) {
      Group g = group.record(m);
      if (g != null) {
        lowest = Math.min(lowest, g.nextSeq());
        highest = Math.max(highest, g.nextSeq());
      }
    }
    if (highest < 0 || lowest == highest) {
      return null;
    }
    long seq = lowest;
    Map<Integer, Operation> entered = new LinkedHashMap<>();
    List<Absent> absent = new ArrayList<>();
    for (int m = 0; m < group.size(); m++) {
      Slot s = group.slot(m, seq);
      int rank = group.worldRanks().get(m);
      if (s.status() == Status.KEPT || s.status() == Status.DROPPED) {
        entered.put(rank, s.op());
      } else if (s.status() == Status.NOT_ISSUED) {
        Slot before = seq > 0 ? group.slot(m, seq - 1) : new Slot(Status.NOT_ISSUED, null);
        absent.add(new Absent(rank, before.op(), open(run.ranks().get(rank))));
      }
    }
    return new Stall(seq, group.anyKept(seq), entered, absent);
  }

  /** A rank's first operation that did not complete, in each of its groups. */
  private static List<Open> open(FlightRecord file) {
    List<Open> open = new ArrayList<>();
    for (Group g : file.groups()) {
      g.operations().stream().filter(op -> op.state() != State.COMPLETED).findFirst()
          .ifPresent(op -> open.add(new Open(g.label(), op)));
    }
    return open;
  }

  /** The first failed operation before the difference and the stall: what fails after them follows from them. */
  private static Failure failure(AlignedGroup group, Difference difference, Stall stall) {
    long until = Math.min(difference != null ? difference.seq() : Long.MAX_VALUE,
        stall != null ? stall.seq() : Long.MAX_VALUE);
    for (long seq : group.keptSeqs()) {
      if (seq >= until) {
        break;
      }
      List<Integer> failed = new ArrayList<>();
      Operation op = null;
      for (int m = 0; m < group.size(); m++) {
        Slot s = group.slot(m, seq);
        if (s.status() == Status.KEPT && s.op().state() == State.FAILED) {
          failed.add(group.worldRanks().get(m));
          op = op == null ? s.op() : op;
        }
      }
      if (op != null) {
        return new Failure(seq, op, List.copyOf(failed));
      }
    }
    return null;
  }
}
