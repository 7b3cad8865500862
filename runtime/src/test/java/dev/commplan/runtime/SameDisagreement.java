package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.plan.Plan;
import java.util.ArrayList;
import java.util.List;

/**
 * One mistake, one message, on every backend (issue 42, item 3): disagreements of the ranks that any backend runs
 * by naming the scenario, and the one message each must end in, whichever backend, check or rendezvous finds it
 * (the local backend's rendezvous and mailboxes, MPI's and NCCL's agreement check). Each scenario is the
 * program's first call on a fresh world of two ranks or more, so that the agreement check compares it at once.
 * What a backend expects besides the message (which ranks find it, which are told by another) stays with its
 * test.
 *
 * <ul>
 *   <li>{@code broadcast-count}: a direct broadcast from rank 0 of 8 floats on rank 0 and 16 on the others (MPI
 *       completes it silently: the root sends fewer than the others receive);
 *   <li>{@code all-reduce-count}: a direct all-reduce (SUM) of 8 floats on rank 0 and 16 on the others (MPI fails
 *       it with its own error, a truncation, before any check compares it, so MPI does not run this one);
 *   <li>{@code plan-against-direct-call}: a plan (an F32 all-reduce of 256, in place) and a direct all-reduce of
 *       the same shape, in opposite orders on rank 1 ({@link OppositeOrders#executeAgainstDirectCall});
 *   <li>{@code short-send}: rank 0 sends 4 floats to rank 1, which receives 8 (NCCL's receive waits for the rest);
 *   <li>{@code send-type}: rank 0 sends 8 floats to rank 1, which receives 8 ints.
 * </ul>
 *
 * <p>NCCL completes only the disagreements that move the same bytes on every rank ({@code
 * plan-against-direct-call}, {@code send-type}); in the others its kernels may wait for data that never comes.
 */
public final class SameDisagreement {
  /** Every scenario, by name. */
  public static final List<String> SCENARIOS = List.of("broadcast-count", "all-reduce-count",
      "plan-against-direct-call", "short-send", "send-type");
  /** The plan of {@code plan-against-direct-call}. */
  public static final String PLAN = "same.Order";

  private SameDisagreement() {}

  /**
   * Runs {@code scenario} on this rank of {@code comm} (every rank calls it) and synchronizes.
   *
   * @throws DisagreementException where this rank found the disagreement
   */
  public static void run(String scenario, Communicator comm) {
    int rank = comm.rank();
    switch (scenario) {
      case "broadcast-count" -> {
        try (F32Buffer x = F32Buffer.allocate(comm, rank == 0 ? 8 : 16)) {
          comm.broadcast(x, x, 0, comm.stream());
          comm.stream().synchronize();
        }
      }
      case "all-reduce-count" -> {
        try (F32Buffer x = F32Buffer.allocate(comm, rank == 0 ? 8 : 16)) {
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          comm.stream().synchronize();
        }
      }
      case "plan-against-direct-call" -> {
        try (Plan plan = OppositeOrders.sumPlan(comm, PLAN); F32Buffer direct = F32Buffer.allocate(comm, 256)) {
          OppositeOrders.executeAgainstDirectCall(comm, plan, direct, 1);
        }
      }
      case "short-send", "send-type" -> {
        try (F32Buffer sent = F32Buffer.allocate(comm, scenario.equals("short-send") ? 4 : 8);
            Buffer received = Buffer.allocate(scenario.equals("short-send") ? DataType.F32 : DataType.I32, comm, 8)) {
          if (rank == 0) {
            comm.send(sent, 1, comm.stream());
          } else if (rank == 1) {
            comm.recv(received, 0, comm.stream());
          }
          comm.stream().synchronize();
        }
      }
      default -> throw new IllegalArgumentException("no scenario " + scenario + "; there are " + SCENARIOS);
    }
  }

  /** {@return the message every backend ends {@code scenario} with, on a world of {@code ranks} ranks} */
  public static String message(String scenario, int ranks) {
    String others = ranks == 2 ? "rank 1" : "rank 1 (the first of the differing ranks " + others(ranks) + ")";
    return switch (scenario) {
      case "broadcast-count" -> "world: the ranks disagree about their calls: call 1 was, on rank 0, direct call:"
          + " broadcast F32 root 0, count 8; on " + others + ", direct call: broadcast F32 root 0, count 16"
          + " (differing: count)" + callsFix();
      case "all-reduce-count" -> "world: the ranks disagree about their calls: call 1 was, on rank 0, direct call:"
          + " all-reduce F32 SUM, count 8; on " + others + ", direct call: all-reduce F32 SUM, count 16 (differing:"
          + " count)" + callsFix();
      case "plan-against-direct-call" -> "world: the ranks disagree about their calls: call 1 was, on rank 0, plan "
          + PLAN + ", execute; on rank 1, direct call: all-reduce F32 SUM, count 256 (differing: call (another call"
          + " at this place))" + callsFix();
      case "short-send" -> messages("send F32 to rank 1, count 4", "recv F32 from rank 0, count 8", "count");
      case "send-type" -> messages("send F32 to rank 1, count 8", "recv I32 from rank 0, count 8", "data type");
      default -> throw new IllegalArgumentException("no scenario " + scenario + "; there are " + SCENARIOS);
    };
  }

  private static String messages(String sent, String received, String differing) {
    return "world: rank 0's sends to rank 1 and rank 1's receives from rank 0 disagree: a message was, on rank 0, "
        + sent + "; on rank 1, " + received + " (differing: " + differing + "). Every send must meet a receive of the"
        + " same data type and count, in the same order (docs/reliability.md, \"Agreement check\";"
        + " CommOptions.withAgreementCheck(false) turns the check off)";
  }

  /** {@return whether only ranks 0 and 1 take part in {@code scenario} (a send and its receive)} */
  public static boolean pairOnly(String scenario) {
    return scenario.equals("short-send") || scenario.equals("send-type");
  }

  private static String callsFix() {
    return ". Every rank of world must make the same collective calls and plan executes, with the same collective,"
        + " data type, count, op and root, and the same plan (#2: the second plan of that name built on world), in"
        + " the same order (docs/reliability.md, \"Agreement check\"; CommOptions.withAgreementCheck(false) turns"
        + " the check off)";
  }

  private static List<Integer> others(int ranks) {
    List<Integer> out = new ArrayList<>();
    for (int r = 1; r < ranks; r++) {
      out.add(r);
    }
    return out;
  }
}
