package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalCluster;
import org.junit.jupiter.api.Test;

/**
 * A plan whose communicator can no longer be used says why in the backend's words ({@link
 * CompiledSchedule.Compiler#unusableReason}), not only that it is closed: on the NCCL backend "was
 * aborted (ncclCommAbort) after ..." (issue 24: an aborted communicator's captured plan said "is closed"),
 * here the local backend's own message, which names the group. Execute, executeStep, capture and a
 * captured plan's launch all ask.
 */
class PlanOnUnusableCommunicatorTest {
  private static Plan sum(Communicator comm, String name) {
    PlanBuilder b = new PlanBuilder(name, comm, 0);
    int x = b.buffer("x", DataType.F32, 8, "{\"8\"}", null);
    b.allReduce(0, x, x, ReduceOp.SUM);
    return b.build();
  }

  @Test
  void everyWayToRunAPlanSaysWhyItsCommunicatorCannotRunIt() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        Plan plan = sum(comm, "test.Closed");
        Stream stream = comm.stream(); // taken while open: a closed communicator's stream() is refused itself
        CapturedPlan captured = plan.capture(stream);
        comm.close();
        for (Runnable run : new Runnable[] {() -> plan.execute(stream), () -> plan.executeStep(0, stream),
            () -> plan.capture(stream), captured::launch}) {
          String message = assertThrows(IllegalStateException.class, run::run).getMessage();
          assertMentions(message, "plan test.Closed: its communicator (local rank 0) cannot run it:",
              "local communicator of rank 0 is closed");
        }
        plan.close();
      });
    }
  }

  @Test
  void theReasonNamesASplitsGroup() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      cluster.run(world -> {
        Communicator half = world.split(world.rank(), 0, "half " + world.rank());
        Plan plan = sum(half, "test.Split");
        Stream stream = half.stream();
        half.close();
        String message = assertThrows(IllegalStateException.class, () -> plan.execute(stream)).getMessage();
        assertMentions(message, "plan test.Split", "local communicator of rank 0 of half " + world.rank() + " is closed");
        plan.close();
      });
    }
  }

  @Test
  void anOpenCommunicatorHasNoReason() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      Communicator comm = cluster.communicator(0);
      assertTrue(comm instanceof CompiledSchedule.Compiler c && c.unusableReason() == null);
    }
  }

  private static void assertMentions(String text, String... parts) {
    for (String part : parts) {
      assertTrue(text.contains(part), () -> "'" + part + "' missing from: " + text);
    }
  }
}
