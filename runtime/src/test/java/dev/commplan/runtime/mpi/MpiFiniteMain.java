package dev.commplan.runtime.mpi;

import dev.commplan.runtime.NonFiniteScenarios;
import java.util.ArrayList;
import java.util.List;

/**
 * One process of the finite check's run on MPI ({@link MpiFiniteTest}): {@link NonFiniteScenarios} on the world of
 * 4 processes (a NaN at index 12,345 of one field on rank 2 and the rest, every rank naming rank 2, nobody's buffers
 * changed). Prints one line per rank and exits 0 when this rank had no failure, 1 otherwise.
 */
public final class MpiFiniteMain {
  private MpiFiniteMain() {}

  public static void main(String[] args) throws Exception {
    List<String> failures = new ArrayList<>();
    int rank;
    int size;
    try (MpiCommunicator world = MpiBackend.world()) {
      rank = world.rank();
      size = world.size();
      failures.addAll(NonFiniteScenarios.run(world));
    }
    System.out.println("mpi finite rank " + rank + " of " + size + ": "
        + (failures.isEmpty() ? "all right" : failures.size() + " wrong"));
    for (String failure : failures.subList(0, Math.min(20, failures.size()))) {
      System.out.println("  FAIL " + failure);
    }
    System.out.flush();
    MpiBackend.finalizeMpi();
    System.exit(failures.isEmpty() ? 0 : 1);
  }
}
