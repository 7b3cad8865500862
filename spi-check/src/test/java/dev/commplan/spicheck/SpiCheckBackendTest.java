package dev.commplan.spicheck;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backend;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.spicheck.plans.ExchangePlan;
import java.lang.module.ModuleDescriptor;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The runtime's SPI from outside its module: this backend, in a named module of its own, is found by
 * name, runs a plan the processor generated ({@code plans.Exchange}) and the direct calls, and fails as every
 * backend does. Runs on the module path (surefire's {@code useModulePath}).
 */
class SpiCheckBackendTest {
  private static final int N = 5;

  @Test
  void isFoundThroughItsModulesProvidesOnTheModulePath() {
    Module module = SpiCheckBackendTest.class.getModule();
    assertEquals("dev.commplan.spicheck", module.getName(), "the tests must run on the module path");
    assertEquals("dev.commplan.runtime", Backend.class.getModule().getName());
    ModuleDescriptor.Provides provides = module.getDescriptor().provides().iterator().next();
    assertEquals(Backend.class.getName(), provides.service());
    assertEquals(List.of(SpiCheckBackend.class.getName()), provides.providers());
    assertNull(SpiCheckBackend.class.getResource("/META-INF/services/" + Backend.class.getName()),
        "no services file in this module: ServiceLoader finds the backend through provides alone");
    assertTrue(Backends.names().contains(SpiCheckBackend.NAME), Backends.names().toString());
    assertInstanceOf(SpiCheckBackend.class, Backends.backend("spi-check"));
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 2, 3})
  void runsAGeneratedPlanAsTheReferenceSays(int ranks) {
    try (Cluster cluster = Backends.cluster(SpiCheckBackend.NAME, ranks)) {
      assertEquals(SpiCheckBackend.NAME, cluster.backendName());
      assertEquals(ranks, cluster.size());
      List<Results> results = cluster.call(SpiCheckBackendTest::runExchange);
      for (int rank = 0; rank < ranks; rank++) {
        Results r = results.get(rank);
        assertArrayEquals(Reference.sums(ranks, N), r.sums(), "sums on rank " + rank);
        assertArrayEquals(Reference.means(ranks, N), r.means(), "means on rank " + rank);
        assertArrayEquals(Reference.gathered(ranks, N), r.gathered(), "gathered on rank " + rank);
        assertArrayEquals(Reference.shard(ranks, N, rank), r.shard(), "shard on rank " + rank);
        assertArrayEquals(Reference.weights(N), r.weights(), "weights on rank " + rank);
      }
    }
  }

  /** One rank's part: build the plan, fill its inputs, execute, synchronize, read the results. */
  private static Results runExchange(Communicator comm) {
    int rank = comm.rank();
    int ranks = comm.size();
    try (ExchangePlan plan = ExchangePlan.builder().n(N).build(comm)) {
      plan.sums().copyFrom(Reference.sumsInput(rank, N));
      plan.means().copyFrom(Reference.meansInput(rank, N));
      plan.part().copyFrom(Reference.partInput(rank, N));
      plan.scores().copyFrom(Reference.scoresInput(rank, ranks, N));
      plan.weights().copyFrom(Reference.weightsInput(rank, N));
      plan.execute(comm.stream());
      // The host-access guard is the runtime's, kept by StreamBase for this backend too.
      assertThrows(BufferInFlightException.class, () -> plan.sums().toArray());
      comm.stream().synchronize();
      return new Results(plan.sums().toArray(), plan.means().toArray(), plan.gathered().toArray(),
          plan.shard().toArray(), plan.weights().toArray());
    }
  }

  private record Results(long[] sums, double[] means, int[] gathered, double[] shard, float[] weights) {}

  @Test
  void directCallsAreCheckedByTheRuntimeAndRunHere() {
    try (Cluster cluster = Backends.cluster(SpiCheckBackend.NAME, 3)) {
      List<double[]> sums = cluster.call(comm -> {
        try (F64Buffer x = F64Buffer.allocate(comm, 4); F64Buffer wrong = F64Buffer.allocate(comm, 5)) {
          x.fill(comm.rank() + 1);
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          comm.stream().synchronize();
          // AbstractCommunicator's rules, with the processor's ids, before the backend sees the call.
          String refused = assertThrows(RuntimeException.class,
              () -> comm.allReduce(x, wrong, ReduceOp.SUM, comm.stream())).getMessage();
          assertTrue(refused.startsWith("[CommPlan/CountMismatch]"), refused);
          return x.toArray();
        }
      });
      for (double[] s : sums) {
        assertArrayEquals(new double[] {6, 6, 6, 6}, s);
      }
    }
  }

  @Test
  void aFailingRankFailsTheRunAndWakesTheOthers() {
    try (Cluster cluster = Backends.cluster(SpiCheckBackend.NAME, 3)) {
      CommPlanException e = assertThrows(CommPlanException.class, () -> cluster.run(comm -> {
        if (comm.rank() == 1) {
          throw new IllegalStateException("rank 1 gives up");
        }
        try (F64Buffer x = F64Buffer.allocate(comm, 2)) {
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream()); // waits for rank 1, which never comes
        }
      }));
      assertTrue(e.getMessage().contains("rank 1 of 3 failed"), e.getMessage());
      assertEquals("rank 1 gives up", e.getCause().getMessage());
      for (Throwable other : e.getSuppressed()) { // ranks 0 and 2, woken in their all-reduce
        assertInstanceOf(RankAbortedException.class, other);
      }
      assertThrows(IllegalStateException.class, () -> cluster.run(comm -> {}), "an aborted cluster refuses runs");
    }
  }
}
