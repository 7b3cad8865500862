package dev.commplan.doctor;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Everything the doctor found in one run's records: each group's {@link GroupAnalysis}, in the order the
 * files list the groups, and why the records were written.
 *
 * @param run the records
 * @param groups each group's analysis, the world first
 * @param lateThresholdNanos the median lateness from which a rank counts as a problem
 */
record Diagnosis(RecordFolder.Run run, List<GroupAnalysis> groups, long lateThresholdNanos) {
  static Diagnosis of(RecordFolder.Run run, long lateThresholdNanos) {
    List<GroupAnalysis> groups = AlignedGroup.of(run).stream()
        .map(g -> new GroupAnalysis(g, run, lateThresholdNanos)).toList();
    return new Diagnosis(run, groups, lateThresholdNanos);
  }

  /** Every group's problems, one line each; empty when nothing is wrong. */
  List<String> problems() {
    List<String> problems = new ArrayList<>();
    for (GroupAnalysis g : groups) {
      problems.addAll(g.problems());
    }
    return problems;
  }

  /** Each distinct reason the ranks gave for writing their records, with the ranks that gave it. */
  Map<String, List<Integer>> reasons() {
    Map<String, List<Integer>> reasons = new LinkedHashMap<>();
    for (FlightRecord r : run.ranks()) {
      reasons.computeIfAbsent(Words.oneLine(r.reason()), k -> new ArrayList<>()).add(r.worldRank());
    }
    return reasons;
  }
}
