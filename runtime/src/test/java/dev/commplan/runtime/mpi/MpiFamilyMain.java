package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;

/**
 * One process of {@link MpiMultiProcessTest}'s family faults (issue 23): 4 processes, a mesh [dp=2, tp=2]
 * (world rank = 2 dp + tp), rounds of an all-reduce over tp, then one over the world. In round 1, world rank 3
 * (rank 1 of its tp group {2, 3}) fails as {@code args[0]} says: {@code throw} (an exception out of main),
 * {@code stall} (sleeps twice the timeout, then goes on), {@code exit} ({@code System.exit(3)}), {@code
 * negative-color} (in round 1 every rank splits tp in two, and world rank 3 passes color -1, which split() refuses
 * on that rank alone with IllegalArgumentException; that rank reports it and exits 1 after MPI_Finalize). The others
 * must all end within their timeout, each with a CommPlan exception naming the group and the rank; they print
 * {@code rank R: caught CLASS: MESSAGE} and exit 4.
 */
public final class MpiFamilyMain {
  private MpiFamilyMain() {}

  public static void main(String[] args) throws InterruptedException {
    String fault = args[0];
    MpiCommunicator world = MpiBackend.world();
    int rank = world.rank();
    int status = 0;
    try (Mesh mesh = Mesh.builder(world).axis("dp", 2).axis("tp", 2).build()) {
      Communicator tp = mesh.axis("tp");
      try (F32Buffer a = F32Buffer.allocate(tp, 1024); F32Buffer b = F32Buffer.allocate(world, 1024)) {
        for (int round = 0; round < 3; round++) {
          if (round == 1 && fault.equals("negative-color")) {
            tp.split(rank == 3 ? -1 : 0, tp.rank(), "half of tp").close();
          }
          if (rank == 3 && round == 1 && !fault.equals("negative-color")) {
            System.out.println("rank 3: " + fault + " in round 1 (rank 1 of " + tp.groupLabel() + ")");
            System.out.flush();
            switch (fault) {
              case "throw" -> throw new IllegalStateException("rank 3 throws on purpose in round 1");
              case "stall" -> Thread.sleep(2 * world.timeout().toMillis());
              case "exit" -> System.exit(3);
              default -> throw new IllegalArgumentException("unknown fault " + fault);
            }
          }
          tp.allReduce(a, a, ReduceOp.SUM, tp.stream());
          tp.stream().synchronize();
          world.allReduce(b, b, ReduceOp.SUM, world.stream());
          world.stream().synchronize();
          System.out.println("rank " + rank + ": round " + round + " done");
        }
      }
    } catch (CommPlanException e) {
      System.out.println("rank " + rank + ": caught " + e.getClass().getSimpleName() + ": " + e.getMessage());
      status = 4;
    } catch (IllegalArgumentException e) {
      if (!fault.equals("negative-color")) {
        throw e;
      }
      // The refusing rank reports and ends through MPI_Finalize, which waits (up to the timeout) for the others:
      // an exception out of main would exit at once, and mpirun would kill the others before they print what
      // they caught (a race this test lost under load)
      System.out.println("rank " + rank + ": refused: " + e.getMessage());
      status = 1;
    } finally {
      try {
        world.close();
      } catch (CommPlanException e) {
        System.out.println("rank " + rank + ": close: " + e.getClass().getSimpleName() + ": " + e.getMessage());
        status = 4;
      }
      System.out.flush();
    }
    MpiBackend.finalizeMpi();
    System.exit(status);
  }
}
