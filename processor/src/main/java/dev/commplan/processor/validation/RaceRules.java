package dev.commplan.processor.validation;

import dev.commplan.model.Collective;
import dev.commplan.processor.diag.Message;
import dev.commplan.processor.parse.ParsedCollective;
import dev.commplan.processor.parse.ParsedField;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Collectors;

/**
 * Rules 11, 12 and 19, within each step: one collective per field, and no collective writing a buffer
 * another reads or writes (a write on the root only is a write).
 */
final class RaceRules {
  private final PlanContext cx;
  /** Each collective on a buffer field, with its receive buffer, in declaration order. */
  private final List<Access> accesses = new ArrayList<>();

  RaceRules(PlanContext cx) {
    this.cx = cx;
  }

  /**
   * What one collective reads and writes, as the model says ({@link Collective#readsSend}, {@link
   * Collective#writesRecv}): in place it reads and writes its one buffer; Send only reads its field,
   * Recv only writes it; a write on the root only (Reduce, Gather) is a write (rule 19).
   *
   * @param recv its receive buffer's field name, or null where {@code into} names none
   */
  private record Access(ParsedCollective c, String recv) {
    Set<String> reads() {
      return c.kind().readsSend() ? Set.of(c.field()) : Set.of();
    }

    Set<String> writes() {
      return recv == null || !c.kind().writesRecv() ? Set.of() : Set.of(recv);
    }
  }

  /** Adds a collective of a buffer field, with its receive buffer's name (null where there is none). */
  void add(ParsedCollective c, String recv) {
    accesses.add(new Access(c, recv));
  }

  /** Rule 12: one collective per field and step. */
  void checkDuplicates(ParsedField f) {
    Map<Integer, ParsedCollective> byStep = new HashMap<>();
    Set<Integer> used = f.collectives().stream().map(c -> c.step().value()).collect(Collectors.toSet());
    for (ParsedCollective c : f.collectives()) {
      int step = c.step().value();
      ParsedCollective first = byStep.putIfAbsent(step, c);
      if (first != null) {
        int free = step + 1;
        while (used.contains(free)) {
          free++;
        }
        cx.report.add(Message.DUPLICATE_COLLECTIVE, f.element(), c.mirror(), c.step().source(), f.name(),
            first.kind().annotation(), c.kind().annotation(), step, c.kind().annotation(), free);
      }
    }
  }

  /**
   * Rules 11 and 19: each collective against the earlier ones of its step that touch a buffer it touches
   * (found through who writes and who reads each buffer, so that a step of many collectives is checked in
   * linear time, not by comparing every pair).
   */
  void checkRaces() {
    Map<Integer, List<Access>> bySteps = new TreeMap<>();
    for (Access a : accesses) {
      bySteps.computeIfAbsent(a.c().step().value(), k -> new ArrayList<>()).add(a);
    }
    for (Map.Entry<Integer, List<Access>> e : bySteps.entrySet()) {
      List<Access> step = e.getValue();
      Map<String, List<Integer>> writers = new HashMap<>();
      Map<String, List<Integer>> readers = new HashMap<>();
      for (int j = 0; j < step.size(); j++) {
        Access b = step.get(j);
        SortedSet<Integer> earlier = new TreeSet<>();
        for (String w : b.writes()) {
          earlier.addAll(writers.getOrDefault(w, List.of()));
          earlier.addAll(readers.getOrDefault(w, List.of()));
        }
        for (String r : b.reads()) {
          earlier.addAll(writers.getOrDefault(r, List.of()));
        }
        for (int i : earlier) {
          Access a = step.get(i);
          if (a.c().field().equals(b.c().field())) {
            continue; // DuplicateCollective
          }
          String[] conflict = conflict(a, b);
          if (conflict != null) {
            cx.report.add(Message.STEP_RACE, cx.fields.get(b.c().field()).element(), b.c().mirror(),
                b.c().step().source(), b.c().describe(), conflict[1], conflict[0], a.c().describe(), conflict[2],
                e.getKey(), e.getKey() + 1, b.c().describe());
          }
        }
        for (String w : b.writes()) {
          writers.computeIfAbsent(w, k -> new ArrayList<>()).add(j);
        }
        for (String r : b.reads()) {
          readers.computeIfAbsent(r, k -> new ArrayList<>()).add(j);
        }
      }
    }
  }

  /** {buffer, what b does, what a does} if a and b conflict, else null. */
  private static String[] conflict(Access a, Access b) {
    for (String w : b.writes()) {
      if (a.writes().contains(w)) {
        return new String[] {w, "writes", "also writes"};
      }
    }
    for (String r : b.reads()) {
      if (a.writes().contains(r)) {
        return new String[] {r, "reads", "writes"};
      }
    }
    for (String w : b.writes()) {
      if (a.reads().contains(w)) {
        return new String[] {w, "writes", "reads"};
      }
    }
    return null;
  }
}
