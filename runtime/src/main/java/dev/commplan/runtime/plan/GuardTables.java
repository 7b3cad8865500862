package dev.commplan.runtime.plan;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.function.ToIntFunction;

/**
 * For the host-access guard: per step in ascending order (the schedule's), or per bucket of a bucketed
 * plan, the handles the step writes (receive sides, in-place buffers) and those it only reads (send sides
 * not also written), each once, ascending. A Reduce's or Gather's receive side is written although only the root writes it (every rank
 * marks it: the guard is the same on every rank); a send only reads its buffer, a receive only writes it.
 */
record GuardTables(int[][] written, int[][] read) {
  /** Per step of {@code ordered} (execution order), ascending. */
  static GuardTables of(List<Declarations.Call> ordered) {
    List<Integer> steps = ordered.stream().map(Declarations.Call::step).distinct().sorted().toList();
    return of(ordered, c -> steps.indexOf(c.step()), steps.size());
  }

  /** Per unit {@code 0 .. units - 1} (a step, a bucket), the unit of each call being {@code unitOf}'s. */
  static GuardTables of(List<Declarations.Call> calls, ToIntFunction<Declarations.Call> unitOf, int units) {
    List<Set<Integer>> written = new ArrayList<>();
    List<Set<Integer>> read = new ArrayList<>();
    for (int u = 0; u < units; u++) {
      written.add(new TreeSet<>());
      read.add(new TreeSet<>());
    }
    for (Declarations.Call c : calls) {
      int unit = unitOf.applyAsInt(c);
      if (c.collective().writesRecv()) {
        written.get(unit).add(c.recv());
      }
      if (c.collective().readsSend()) {
        read.get(unit).add(c.send());
      }
    }
    int[][] writtenByUnit = new int[units][];
    int[][] readByUnit = new int[units][];
    for (int u = 0; u < units; u++) {
      Set<Integer> w = written.get(u);
      writtenByUnit[u] = w.stream().mapToInt(Integer::intValue).toArray();
      readByUnit[u] = read.get(u).stream().filter(h -> !w.contains(h)).mapToInt(Integer::intValue).toArray();
    }
    return new GuardTables(writtenByUnit, readByUnit);
  }
}
