package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.OppositeOrders;
import dev.commplan.runtime.SameDisagreement;
import dev.commplan.runtime.plan.Plan;

/**
 * One process of {@link MpiMultiProcessTest}'s MPI-error cases (issue 25, part 2), started by mpirun on every
 * rank: ranks that disagree so that MPI itself reports an error. Every rank must end with a CommPlan exception
 * (from its synchronize, or at the latest from closing the world), never in Open MPI's fatal handler. The
 * arguments are the cases, each run on a fresh world (a failed family stays failed); for each, every rank prints
 * {@code rank R: CASE: caught CLASS: MESSAGE} or {@code ... nothing failed}, and exits 0 when it caught one in
 * every case, 2 otherwise.
 *
 * <ul>
 *   <li>{@code truncated-recv}: rank 0 sends 8 I32 to rank 1, which receives 4 (direct calls);
 *   <li>{@code count}: a direct all-reduce of 4 floats on rank 0 and 8 on the others (a plan's is caught
 *       before MPI by the plan fingerprint check);
 *   <li>{@code alltoall-count}: a direct all-to-all of 2 floats per peer on rank 0 and 4 on the others;
 *   <li>{@code order-direct}: a plan with the execute-order check and a direct all-reduce of the same shape,
 *       issued in opposite orders on rank 1 (MPI mixes them up; not a disagreement MPI can see, so this case
 *       only shows that nothing ends in Open MPI's fatal handler).
 * </ul>
 *
 * <p>And the disagreements MPI completes without an error, which the agreement check (on by default) turns
 * into a {@code DisagreementException} (issue 25, part 1):
 *
 * <ul>
 *   <li>{@code root}: a broadcast where each rank names itself the root;
 *   <li>{@code scatter-root}: the same for a scatter;
 *   <li>{@code short-send}: rank 0 sends 4 F32 to rank 1, which receives 8;
 *   <li>{@code type}: rank 0 sends 8 F32 to rank 1, which receives 8 I32;
 *   <li>{@code order}: a plan (no order check) and a direct all-reduce of the same shape, issued in opposite
 *       orders on rank 1;
 *   <li>{@code instances}, {@code instances-ordered}: two instances of one plan class (the same name and
 *       shape), executed in opposite orders on rank 1, without and with the order check (issue 34, item 3);
 *   <li>{@code tp-root-at-close}: over the axis {@code tp} of a mesh of every rank, an all-reduce (compared by
 *       the check after call 1), then a broadcast whose root is each rank's own coordinate, the last call: only
 *       the last check, where the mesh closes its axis, compares it (issue 34, item 4);
 *   <li>{@code same-SCENARIO}: {@link SameDisagreement}'s scenario, whose message is the one every backend gives
 *       (issue 42, item 3).
 * </ul>
 */
public final class MpiErrorsMain {
  private MpiErrorsMain() {}

  public static void main(String[] args) {
    int status = 0;
    for (String kase : args) { // each case on a fresh world: a failed family stays failed
      status = Math.max(status, runCase(kase));
    }
    MpiBackend.finalizeMpi();
    System.exit(status);
  }

  private static int runCase(String kase) {
    String caught = null;
    MpiCommunicator comm = MpiBackend.world();
    int rank = comm.rank();
    try {
      run(comm, kase);
      System.out.println("rank " + rank + ": " + kase + ": synchronize returned");
    } catch (CommPlanException e) {
      caught = e.getClass().getSimpleName() + ": " + e.getMessage();
    } finally {
      try {
        comm.close();
      } catch (CommPlanException e) {
        caught = caught != null ? caught : e.getClass().getSimpleName() + " at close: " + e.getMessage();
      }
    }
    System.out.println("rank " + rank + ": " + kase + ": " + (caught != null ? "caught " + caught.replace('\n', ' ')
        : "nothing failed"));
    System.out.flush();
    return caught != null ? 0 : 2;
  }

  private static void run(MpiCommunicator comm, String kase) {
    int rank = comm.rank();
    switch (kase) {
      case "truncated-recv" -> {
        try (I32Buffer eight = I32Buffer.allocate(comm, 8); I32Buffer four = I32Buffer.allocate(comm, 4)) {
          if (rank == 0) {
            comm.send(eight, 1, comm.stream());
          } else if (rank == 1) {
            comm.recv(four, 0, comm.stream());
          }
          comm.stream().synchronize();
        }
      }
      case "count" -> {
        try (F32Buffer grads = F32Buffer.allocate(comm, rank == 0 ? 4 : 8)) {
          comm.allReduce(grads, grads, ReduceOp.SUM, comm.stream());
          comm.stream().synchronize();
        }
      }
      case "order-direct", "order" -> planAndDirectCallInOppositeOrders(comm, kase.equals("order-direct"));
      case "instances", "instances-ordered" -> instancesInOppositeOrders(comm, kase.equals("instances-ordered"));
      case "tp-root-at-close" -> {
        try (dev.commplan.runtime.Mesh mesh = dev.commplan.runtime.Mesh.builder(comm).axis("tp", comm.size()).build();
            F32Buffer x = F32Buffer.allocate(comm, 8)) {
          dev.commplan.runtime.Communicator tp = mesh.axis("tp");
          tp.allReduce(x, x, ReduceOp.SUM, tp.stream()); // call 1: compared at once
          tp.broadcast(x, x, mesh.coordinate("tp"), tp.stream()); // call 2, the last: each rank its own root
          tp.stream().synchronize();
          System.out.println("rank " + rank + ": tp-root-at-close: the broadcast completed; closing the mesh");
        } // the mesh closes tp: its last check compares call 2
      }
      case "alltoall-count" -> {
        long perPeer = rank == 0 ? 2 : 4;
        try (F32Buffer send = F32Buffer.allocate(comm, perPeer * comm.size());
            F32Buffer recv = F32Buffer.allocate(comm, perPeer * comm.size())) {
          comm.allToAll(send, recv, comm.stream());
          comm.stream().synchronize();
        }
      }
      case "root" -> {
        try (F32Buffer x = F32Buffer.allocate(comm, 8)) {
          comm.broadcast(x, x, rank, comm.stream());
          comm.stream().synchronize();
        }
      }
      case "scatter-root" -> {
        try (F32Buffer all = F32Buffer.allocate(comm, 2L * comm.size()); F32Buffer mine = F32Buffer.allocate(comm, 2)) {
          comm.scatter(all, mine, rank, comm.stream());
          comm.stream().synchronize();
        }
      }
      case "short-send", "type" -> {
        try (F32Buffer four = F32Buffer.allocate(comm, kase.equals("type") ? 8 : 4);
            F32Buffer eight = F32Buffer.allocate(comm, 8); I32Buffer ints = I32Buffer.allocate(comm, 8)) {
          if (rank == 0) {
            comm.send(four, 1, comm.stream());
          } else if (rank == 1) {
            comm.recv(kase.equals("type") ? ints : eight, 0, comm.stream());
          }
          comm.stream().synchronize();
        }
      }
      default -> {
        if (!kase.startsWith("same-")) {
          throw new IllegalArgumentException("unknown case " + kase);
        }
        SameDisagreement.run(kase.substring("same-".length()), comm);
      }
    }
  }

  /**
   * Instances p and q of one plan class: every rank but 1 executes p then q, rank 1 q then p. MPI mixes their
   * sums (p and q both 101 on two ranks, where 2 and 200 are due) unless the check names both instances.
   */
  private static void instancesInOppositeOrders(MpiCommunicator comm, boolean orderCheck) {
    try (Plan p = OppositeOrders.sumPlan(comm, "errors.Sum", orderCheck);
        Plan q = OppositeOrders.sumPlan(comm, "errors.Sum", orderCheck)) {
      OppositeOrders.execute(comm, p, 1f, q, 100f, 1);
      System.out.println("rank " + comm.rank() + ": " + OppositeOrders.sums(p, q));
    }
  }

  /**
   * A plan's execute and a direct all-reduce of the same shape, in opposite orders on rank 1; with the plan's
   * execute-order check ({@code order-direct}) or with the agreement check alone ({@code order}).
   */
  private static void planAndDirectCallInOppositeOrders(MpiCommunicator comm, boolean orderCheck) {
    try (Plan plan = OppositeOrders.sumPlan(comm, orderCheck ? "errors.Ordered" : "errors.Order", orderCheck);
        F32Buffer y = F32Buffer.allocate(comm, 256)) {
      OppositeOrders.executeAgainstDirectCall(comm, plan, y, 1);
    }
  }
}
