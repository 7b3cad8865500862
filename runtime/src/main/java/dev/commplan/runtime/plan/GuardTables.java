package dev.commplan.runtime.plan;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * For the host-access guard: per step in ascending order (the schedule's), the handles the step writes
 * (receive sides, in-place buffers) and those it only reads (send sides not also written), each once,
 * ascending.
 */
record GuardTables(int[][] written, int[][] read) {
  static GuardTables of(List<Declarations.Call> ordered) {
    Map<Integer, Set<Integer>> written = new TreeMap<>();
    Map<Integer, Set<Integer>> read = new TreeMap<>();
    for (Declarations.Call c : ordered) {
      written.computeIfAbsent(c.step(), s -> new TreeSet<>()).add(c.recv());
      read.computeIfAbsent(c.step(), s -> new TreeSet<>()).add(c.send());
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
