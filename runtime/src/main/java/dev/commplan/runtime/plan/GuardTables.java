package dev.commplan.runtime.plan;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * For the host-access guard: per step in ascending order (the schedule's), the handles the step writes
 * (receive sides, in-place buffers) and those it only reads (send sides not also written), each once,
 * ascending. A Reduce's or Gather's receive side is written although only the root writes it (every rank
 * marks it: the guard is the same on every rank); a send only reads its buffer, a receive only writes it.
 */
record GuardTables(int[][] written, int[][] read) {
  static GuardTables of(List<Declarations.Call> ordered) {
    Map<Integer, Set<Integer>> written = new TreeMap<>();
    Map<Integer, Set<Integer>> read = new TreeMap<>();
    for (Declarations.Call c : ordered) {
      Set<Integer> w = written.computeIfAbsent(c.step(), s -> new TreeSet<>());
      Set<Integer> r = read.computeIfAbsent(c.step(), s -> new TreeSet<>());
      if (c.collective().writesRecv()) {
        w.add(c.recv());
      }
      if (c.collective().readsSend()) {
        r.add(c.send());
      }
    }
    int steps = written.size();
    int[][] writtenByStep = new int[steps][];
    int[][] readByStep = new int[steps][];
    int i = 0;
    for (int step : written.keySet()) {
      Set<Integer> w = written.get(step);
      writtenByStep[i] = w.stream().mapToInt(Integer::intValue).toArray();
      readByStep[i] = read.get(step).stream().filter(h -> !w.contains(h)).mapToInt(Integer::intValue).toArray();
      i++;
    }
    return new GuardTables(writtenByStep, readByStep);
  }
}
