package dev.commplan.runtime.mpi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.time.Duration;

/**
 * One process of {@link MpiFailureMatrixTest}: a mesh ({@code 2x2}: [dp=2, tp=2], or {@code 2x2x2}: [pp=2,
 * dp=2, tp=2]; world rank = row-major coordinates), a plan with one all-reduce over one group ({@code world},
 * {@code tp}, {@code dp} or {@code pp}), executed and synchronized in three rounds. In round 1 the last world
 * rank, before its execute, faults as {@code args[2]} says: {@code throw} (an exception out of main, through
 * the try-with-resources that close the plan, the mesh and the world), {@code stall} (sleeps 1.5 times the
 * timeout, then goes on), {@code exit} ({@code System.exit(3)}), {@code exit-late} (the same, and every other rank
 * comes to that execute a quarter of the timeout late), {@code kill} (SIGKILL from outside, as the OOM killer
 * does). The timeout is {@code args[3]} seconds.
 *
 * <p>Before the timed world, every rank builds the same mesh and plan once on a world with a long timeout, so
 * that class loading and the first compilation on an oversubscribed machine do not count against the short
 * timeout of the case.
 *
 * <p>Every process prints exactly one outcome line, {@code outcome rank R: ...} (then the message in full): {@code caught CLASS} (a CommPlan
 * exception from a call, or {@code at close}), {@code threw}, {@code exited 3}, or, from a shutdown hook,
 * {@code ended from outside} (the JVM shut down without main's own exit: mpirun ended the job); then the
 * messages. It exits 4 after a CommPlan exception, 0 if nothing failed.
 */
public final class MpiFaultMain {
  private MpiFaultMain() {}

  /** Set once this process printed its outcome: the shutdown hook prints one only when main did not. */
  private static volatile boolean reported;

  public static void main(String[] args) throws Exception {
    String shape = args[0];
    String group = args[1];
    String fault = args[2];
    Duration timeout = Duration.ofSeconds(Long.parseLong(args[3]));
    int[] rankHolder = {-1};
    Runtime.getRuntime().addShutdownHook(new Thread(() -> {
      if (!reported) {
        System.out.println("outcome rank " + rankHolder[0] + ": ended from outside");
        System.out.flush();
      }
    }));
    try (MpiCommunicator warm = MpiBackend.world(Duration.ofSeconds(120))) {
      runRounds(warm, shape, group, "none", 1);
    }
    String outcome;
    int status = 0;
    try {
      try (MpiCommunicator world = MpiBackend.world(timeout)) {
        rankHolder[0] = world.rank();
        runRounds(world, shape, group, fault, 3);
      }
      outcome = "nothing failed";
    } catch (CommPlanException e) {
      outcome = "caught " + e.getClass().getSimpleName() + ": " + e.getMessage();
      status = 4;
    } catch (RuntimeException e) {
      report(rankHolder[0], "threw " + e);
      throw e;
    }
    report(rankHolder[0], outcome);
    MpiBackend.finalizeMpi();
    System.exit(status);
  }

  /**
   * The outcome line, short and in one write (mpirun interleaves the processes' output at each write, and may
   * cut a long one), then the whole message.
   */
  private static void report(int rank, String outcome) {
    reported = true;
    String first = outcome.lines().findFirst().orElse("");
    System.out.println("outcome rank " + rank + ": " + (first.length() > 240 ? first.substring(0, 240) + " ..." : first));
    if (!first.equals(outcome)) {
      System.out.println("rank " + rank + " in full: " + outcome.replace("\n", "\n    "));
    }
    System.out.flush();
  }

  private static void runRounds(MpiCommunicator world, String shape, String group, String fault, int rounds)
      throws Exception {
    Mesh.Builder builder = Mesh.builder(world);
    if (shape.equals("2x2x2")) {
      builder.axis("pp", 2);
    }
    int rank = world.rank();
    int faulty = world.size() - 1;
    try (Mesh mesh = builder.axis("dp", 2).axis("tp", 2).build()) {
      String over = group.equals("world") ? "" : group;
      PlanBuilder b = over.isEmpty() ? new PlanBuilder("fault.Matrix", mesh, 0)
          : new PlanBuilder("fault.Matrix", mesh, 0, over);
      int a = b.buffer("a", DataType.F32, 1024, "{\"1024\"}", null);
      b.collective(0, Collective.ALL_REDUCE, a, a, ReduceOp.SUM, -1, over);
      try (Plan plan = b.build()) {
        for (int round = 0; round < rounds; round++) {
          if (rank == faulty && round == 1) {
            fault(rank, fault, world.timeout());
          } else if (round == 1 && fault.equals("exit-late")) {
            Thread.sleep(world.timeout().toMillis() / 4); // the exiting rank's close must not time out before them
          }
          plan.execute(world.stream());
          world.stream().synchronize();
        }
      }
    }
  }

  private static void fault(int rank, String fault, Duration timeout) throws Exception {
    System.out.println("rank " + rank + ": " + fault + " in round 1");
    System.out.flush();
    switch (fault) {
      case "throw" -> throw new IllegalStateException("rank " + rank + " throws on purpose in round 1");
      case "stall" -> Thread.sleep(timeout.toMillis() * 3 / 2); // wakes before the others' finalize gives up on it
      case "exit", "exit-late" -> {
        report(rank, "exited 3");
        System.exit(3);
      }
      case "kill" -> {
        report(rank, "killed (SIGKILL)");
        new ProcessBuilder("kill", "-KILL", Long.toString(ProcessHandle.current().pid())).inheritIO().start().waitFor();
        Thread.sleep(60_000); // the signal comes while it waits
      }
      default -> throw new IllegalArgumentException("unknown fault " + fault);
    }
  }
}
