package dev.commplan.doctor;

import dev.commplan.doctor.FlightRecord.Operation;
import dev.commplan.doctor.FlightRecord.State;
import dev.commplan.doctor.GroupAnalysis.Absent;
import dev.commplan.doctor.GroupAnalysis.Open;
import dev.commplan.doctor.GroupAnalysis.Variant;
import dev.commplan.doctor.Lateness.RankLateness;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The doctor's report as text: a header (the job, why the records were written), one section per group, and
 * the verdict. docs/doctor.md explains each line; its examples are this class's output for the test
 * fixtures, checked by {@code DocsExampleTest}.
 */
final class TextReport {
  /** Longer lists are cut, saying how many were left out: a report must stay readable at 1,000 ranks. */
  static final int MAX_LINES = 10;
  /** A reason is a failure's message, with its flight record; its first part says enough here. */
  static final int MAX_REASON = 200;

  private TextReport() {}

  static String render(Diagnosis d) {
    StringBuilder out = new StringBuilder();
    RecordFolder.Run run = d.run();
    out.append("CommPlan doctor: job ").append(Words.quote(run.job())).append(", ").append(run.backend())
        .append(" backend, ").append(Words.count(run.worldSize(), "rank")).append('\n');
    out.append("why the records were written:\n");
    for (Map.Entry<String, List<Integer>> reason : d.reasons().entrySet()) {
      String text = reason.getKey();
      out.append("  ").append(Words.ranks(reason.getValue())).append(": ")
          .append(text.length() > MAX_REASON ? text.substring(0, MAX_REASON) + "..." : text).append('\n');
    }
    for (GroupAnalysis g : d.groups()) {
      out.append('\n');
      group(out, g);
    }
    List<String> problems = d.problems();
    out.append('\n');
    if (problems.isEmpty()) {
      out.append("verdict: nothing wrong found\n");
    } else {
      out.append("verdict: ").append(Words.count(problems.size(), "problem")).append('\n');
      for (String p : problems) {
        out.append("  ").append(p).append('\n');
      }
    }
    return out.toString();
  }

  /** One group's section. */
  static void group(StringBuilder out, GroupAnalysis a) {
    AlignedGroup g = a.group;
    out.append(g.label()).append(": world ").append(Words.ranks(g.worldRanks()));
    if (g.last() < g.first()) {
      out.append("; no operation issued\n");
    } else {
      out.append("; operations #").append(g.first()).append(" to #").append(g.last()).append('\n');
    }
    ringNotes(out, g);
    out.append("  last completed by every rank: ")
        .append(a.lastCompleted != null ? Words.operation(a.lastCompleted.op()) : "none").append('\n');
    difference(out, a);
    stall(out, a);
    if (a.failure != null) {
      out.append("  failed: ").append(Words.operation(a.failure.op())).append(", on ")
          .append(Words.ranks(a.failure.worldRanks())).append('\n');
    }
    if (!a.withoutRecord.isEmpty()) {
      out.append("  no record of this group: ").append(Words.ranks(a.withoutRecord))
          .append(" (it closed the group, or never made it)\n");
    }
    lateness(out, a);
  }

  /** Says where a member's ring no longer held the start of the table. */
  private static void ringNotes(StringBuilder out, AlignedGroup g) {
    for (int m = 0; m < g.size(); m++) {
      FlightRecord.Group r = g.record(m);
      if (r == null) {
        continue;
      }
      long firstKept = r.operations().stream().filter(op -> op.kind().aligned()).mapToLong(Operation::seq).min()
          .orElse(r.nextSeq());
      if (firstKept > g.first() && firstKept < r.nextSeq()) {
        out.append("  rank ").append(g.worldRanks().get(m)).append("'s ring kept #").append(firstKept).append(" to #")
            .append(r.nextSeq() - 1).append(" (older operations left it)\n");
      } else if (firstKept > g.first() && r.nextSeq() > g.first()) {
        out.append("  rank ").append(g.worldRanks().get(m)).append("'s ring kept none of its ").append(r.nextSeq())
            .append(" operations\n");
      }
    }
  }

  private static void difference(StringBuilder out, GroupAnalysis a) {
    if (a.difference == null) {
      out.append("  first difference: none\n");
      return;
    }
    out.append("  first difference: #").append(a.difference.seq()).append(", differing: ")
        .append(String.join(", ", a.difference.differing())).append('\n');
    for (Variant v : a.difference.variants()) {
      out.append("    ").append(Words.ranks(v.worldRanks())).append(": ").append(Words.operation(v.op()))
          .append(" (").append(v.op().state().jsonName()).append(")\n");
    }
    if (!a.difference.unknown().isEmpty()) {
      out.append("    ").append(Words.ranks(a.difference.unknown())).append(": not known (left the ring)\n");
    }
  }

  private static void stall(StringBuilder out, GroupAnalysis a) {
    if (a.stall == null) {
      return;
    }
    List<Integer> absent = a.stall.absent().stream().map(Absent::worldRank).toList();
    out.append("  never entered by ").append(Words.ranks(absent)).append(": ")
        .append(a.stall.op() != null ? Words.operation(a.stall.op()) : "#" + a.stall.seq()).append('\n');
    Map<String, List<Integer>> byState = new LinkedHashMap<>();
    Map<String, List<Long>> durations = new LinkedHashMap<>();
    for (Map.Entry<Integer, Operation> e : a.stall.entered().entrySet()) {
      Operation op = e.getValue();
      String state = op == null ? "entered (its ring no longer holds it)" : phrase(op.state());
      byState.computeIfAbsent(state, k -> new ArrayList<>()).add(e.getKey());
      Long d = op == null ? null : duration(a.group.file(a.group.worldRanks().indexOf(e.getKey())), op);
      if (d != null) {
        durations.computeIfAbsent(state, k -> new ArrayList<>()).add(d);
      }
    }
    for (Map.Entry<String, List<Integer>> e : byState.entrySet()) {
      out.append("    ").append(Words.ranks(e.getValue())).append(": ").append(e.getKey());
      List<Long> d = durations.get(e.getKey());
      if (d != null) {
        long lo = d.stream().mapToLong(Long::longValue).min().orElseThrow();
        long hi = d.stream().mapToLong(Long::longValue).max().orElseThrow();
        String range = Words.duration(lo) + (Words.duration(lo).equals(Words.duration(hi)) ? "" : " to "
            + Words.duration(hi));
        out.append(e.getKey().startsWith("failed") ? " after " : " for ").append(range);
      }
      out.append('\n');
    }
    int shown = 0;
    for (Absent r : a.stall.absent()) {
      if (shown++ == MAX_LINES) {
        out.append("    ... and ").append(a.stall.absent().size() - MAX_LINES).append(" more ranks\n");
        break;
      }
      out.append("    rank ").append(r.worldRank()).append("'s last operation here: ")
          .append(r.lastHere() != null ? Words.operation(r.lastHere()) + " (" + r.lastHere().state().jsonName() + ")"
              : "not kept").append('\n');
      if (r.open().isEmpty()) {
        out.append("    rank ").append(r.worldRank())
            .append(" had nothing unfinished: it was outside CommPlan's calls (in its own code)\n");
      }
      for (Open o : r.open()) {
        out.append("    rank ").append(r.worldRank()).append(" in ").append(o.groupLabel()).append(": ")
            .append(Words.operation(o.op())).append(" (").append(o.op().state().jsonName());
        Long d = duration(a.group.file(a.group.worldRanks().indexOf(r.worldRank())), o.op());
        if (d != null) {
          out.append(o.op().state() == State.FAILED ? " after " : " for ").append(Words.duration(d));
        }
        out.append(")\n");
      }
    }
  }

  /** How the report says where a rank that entered the stalled operation was. */
  private static String phrase(State state) {
    return switch (state) {
      case ENQUEUED -> "enqueued it, not started";
      case STARTED -> "waiting in it";
      case COMPLETED -> "completed it";
      case FAILED -> "failed in it";
    };
  }

  /**
   * How long an operation had been waiting when the record was written (not ended), or how long it ran until
   * it failed; on the rank's own clock. Null where the record does not say.
   */
  static Long duration(FlightRecord file, Operation op) {
    long from = op.startedNanos() != null ? op.startedNanos() : op.enqueuedNanos();
    if (op.state().unfinished()) {
      return Math.max(0, file.writtenAtNanos() - from);
    }
    if (op.state() == State.FAILED && op.endedNanos() != null) {
      return Math.max(0, op.endedNanos() - from);
    }
    return null;
  }

  private static void lateness(StringBuilder out, GroupAnalysis a) {
    if (a.group.size() < 2) {
      return;
    }
    List<RankLateness> l = a.lateness;
    if (l.isEmpty()) {
      out.append("  lateness: no collective to measure it at (none completed and agreed on by every rank with"
          + " its wait recorded)\n");
      return;
    }
    out.append("  lateness at ").append(Words.count(l.get(0).collectives(), "collective"))
        .append(" (how long the others waited for each rank alone), slowest first:\n");
    for (int i = 0; i < l.size(); i++) {
      if (i == MAX_LINES) {
        out.append("    ... and ").append(l.size() - MAX_LINES).append(" more ranks\n");
        break;
      }
      RankLateness r = l.get(i);
      out.append(String.format(Locale.ROOT, "    rank %-5d median %10s   worst %10s%s\n", r.worldRank(),
          Words.duration(r.medianNanos()), Words.duration(r.worstNanos()),
          a.late.contains(r) ? "   LATE" : ""));
    }
    RankLateness slowest = l.get(0);
    RankLateness next = l.get(1);
    if (slowest.medianNanos() > next.medianNanos()) {
      out.append("  slowest: rank ").append(slowest.worldRank()).append(", by ")
          .append(Words.duration(slowest.medianNanos() - next.medianNanos()))
          .append(" (median) over the next, rank ").append(next.worldRank()).append('\n');
    }
  }
}
