package dev.commplan.runtime.mpi;

import dev.commplan.runtime.BucketEdges;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.plan.Plan;
import java.util.ArrayList;
import java.util.List;

/**
 * One process of {@link MpiBucketsTest}'s issue-40 cases, started by mpirun on every rank. The argument picks:
 *
 * <ul>
 *   <li>{@code edges}: {@link BucketEdges}' scenarios (closing changes nothing; a close beside a direct call;
 *       a plan on two streams without an event); prints {@code mpi edges rank R of N: all right} or what was
 *       wrong, and exits 0 when nothing was;
 *   <li>{@code open-round}: rank 0 closes the plan with its round open after bucket 0 and prints the message
 *       its close throws; the other ranks finish the round and print the {@code CommTimeoutException} their
 *       synchronize gets (plan, fields, missing ranks), each as {@code rank R: ...}; exits 0.
 * </ul>
 */
public final class MpiBucketEdgesMain {
  private MpiBucketEdgesMain() {}

  public static void main(String[] args) throws Exception {
    int status = switch (args[0]) {
      case "edges" -> edges();
      case "open-round" -> openRound();
      default -> throw new IllegalArgumentException("no case " + args[0]);
    };
    System.out.flush();
    MpiBackend.finalizeMpi();
    System.exit(status);
  }

  private static int edges() {
    List<String> wrong = new ArrayList<>();
    int rank;
    int size;
    try (MpiCommunicator world = MpiBackend.world()) {
      rank = world.rank();
      size = world.size();
      wrong.addAll(BucketEdges.closeChangesNothing(world));
      wrong.addAll(BucketEdges.closeAndDirectCallInEitherOrder(world));
      wrong.addAll(BucketEdges.twoStreamsWithoutAnEvent(world, 50));
    }
    System.out.println("mpi edges rank " + rank + " of " + size + ": " + (wrong.isEmpty() ? "all right"
        : wrong.size() + " wrong"));
    wrong.stream().limit(20).forEach(w -> System.out.println("  FAIL " + w));
    return wrong.isEmpty() ? 0 : 1;
  }

  private static int openRound() {
    MpiCommunicator world = MpiBackend.world();
    int rank = world.rank();
    String seen;
    try (BucketEdges.Fields f = BucketEdges.Fields.allocate(world)) {
      Plan plan = BucketEdges.plan(world, "edges.OpenRound", f);
      if (rank == 0) {
        plan.ready(BucketEdges.Z, world.stream()); // bucket 0 goes out; then the plan is closed
        try {
          plan.close();
          seen = "close returned";
        } catch (IllegalStateException e) {
          seen = "close threw: " + e.getMessage();
        }
      } else {
        try {
          BucketEdges.round(plan, world.stream(), world.stream());
          world.stream().synchronize();
          seen = "synchronize returned";
        } catch (CommTimeoutException e) {
          seen = "timeout: plan " + e.planName() + ", fields " + e.fields() + ", missing " + e.missingRanks() + ": "
              + e.getMessage();
        }
      }
    } catch (CommPlanException e) {
      seen = seen(e);
    }
    System.out.println("rank " + rank + ": " + seen.replace('\n', ' '));
    try {
      world.close();
    } catch (CommPlanException e) {
      // the family failed with the timeout: closing says so again
    }
    return 0;
  }

  private static String seen(CommPlanException e) {
    return e.getClass().getSimpleName() + ": " + e.getMessage();
  }
}
