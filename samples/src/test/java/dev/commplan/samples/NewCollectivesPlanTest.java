package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link NewCollectives}' generated plan, executed on the local backend at several world sizes, against
 * the contract's meaning of each annotation computed here by hand: roots' results, other ranks' buffers
 * left untouched, slices, the ring's wrap and the pipeline's ends.
 */
class NewCollectivesPlanTest {
  private static final int N = 3;
  /** What a buffer the plan must not touch on this rank holds before and after. */
  private static final float UNTOUCHED = -7f;

  @ParameterizedTest
  @ValueSource(ints = {2, 3, 4, 5})
  void everyAnnotationMeansWhatTheContractSays(int ranks) {
    List<List<String>> problems;
    try (Cluster cluster = Backends.cluster("local", ranks)) {
      problems = cluster.call(NewCollectivesPlanTest::runRank);
    }
    List<String> all = new ArrayList<>();
    problems.forEach(all::addAll);
    assertEquals(List.of(), all, "ranks = " + ranks);
  }

  private static List<String> runRank(Communicator comm) {
    int r = comm.rank();
    int size = comm.size();
    List<String> problems = new ArrayList<>();
    try (NewCollectivesPlan plan = NewCollectivesPlan.builder().n(N).build(comm)) {
      for (int i = 0; i < N; i++) {
        plan.contribution().set(i, r + 0.5f * i);
        plan.reduced().set(i, UNTOUCHED);
        plan.maxInPlace().set(i, 10 * r + i);
        plan.part().set(i, 100 * r + i);
        plan.ringOut().set(i, r + 0.25f * i);
        plan.stageOut().set(i, 2.0 * r + i);
        plan.stageIn().set(i, UNTOUCHED);
      }
      for (int j = 0; j < size; j++) {
        for (int i = 0; i < N; i++) {
          int at = j * N + i;
          plan.gathered().set(at, UNTOUCHED);
          plan.toScatter().set(at, r == 0 ? 1000f * j + i : -1f); // only the root's is sent
          plan.tokens().set(at, 10000f * r + 100f * j + i); // slice j goes to rank j
          plan.gatherInPlace().set(at, j == r ? 7 * r + i : -1); // this rank's slice is its input
          plan.scatterInPlace().set(at, r == 1 ? 3 * j + i : -2);
        }
      }
      plan.execute(comm.stream());
      comm.stream().synchronize();

      for (int i = 0; i < N; i++) {
        float sum = size * (size - 1) / 2f + size * 0.5f * i;
        check(problems, r, "reduced", i, r == 0 ? sum : UNTOUCHED, plan.reduced().get(i));
        check(problems, r, "maxInPlace", i, r == 1 ? 10 * (size - 1) + i : 10 * r + i, plan.maxInPlace().get(i));
        check(problems, r, "slice", i, 1000f * r + i, plan.slice().get(i));
        check(problems, r, "ringIn", i, Math.floorMod(r - 1, size) + 0.25f * i, plan.ringIn().get(i));
        check(problems, r, "stageIn", i, r == 0 ? UNTOUCHED : 2.0 * (r - 1) + i, plan.stageIn().get(i));
        check(problems, r, "scatterInPlace[rank]", i, 3 * r + i, plan.scatterInPlace().get(r * N + i));
      }
      for (int j = 0; j < size; j++) {
        for (int i = 0; i < N; i++) {
          int at = j * N + i;
          check(problems, r, "gathered", at, r == 1 ? 100f * j + i : UNTOUCHED, plan.gathered().get(at));
          check(problems, r, "routed", at, 10000f * j + 100f * r + i, plan.routed().get(at)); // slice j from rank j
          check(problems, r, "gatherInPlace", at, r == 0 ? 7 * j + i : j == r ? 7 * r + i : -1,
              plan.gatherInPlace().get(at));
        }
      }
    }
    return problems;
  }

  private static void check(List<String> problems, int rank, String field, int index, double expected, double actual) {
    if (expected != actual) {
      problems.add("rank " + rank + ": " + field + "[" + index + "] = " + actual + ", expected " + expected);
    }
  }
}
