package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.NonFiniteScenarios;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.local.LocalCluster;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The finite check ({@link PlanBuilder#checkFinite}, issue 43 item 3) on the local backend, 4 ranks:
 * {@link NonFiniteScenarios} (a NaN at index 12,345 of one field on rank 2, an infinity, each floating-point type, in
 * place and out of place, AllReduce, Reduce and ReduceScatter, a step after another, a captured plan, a bucketed
 * round, a plan with nothing to search), and what only a build shows: the setting's default and its property, the
 * fingerprint, the description.
 */
class NonFinitePlanTest {
  @Test
  void everyScenarioHoldsOnFourLocalRanks() {
    try (LocalCluster cluster = new LocalCluster(4)) {
      List<List<String>> wrong = cluster.call(NonFiniteScenarios::run);
      for (int r = 0; r < 4; r++) {
        assertEquals(List.of(), wrong.get(r), "rank " + r);
      }
    }
  }

  @Test
  void thePropertyTurnsItOnForEveryPlanAndABadValueSaysWhatItTakes() {
    String old = System.getProperty(PlanBuilder.CHECK_FINITE_PROPERTY);
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        System.setProperty(PlanBuilder.CHECK_FINITE_PROPERTY, "TRUE");
        try (Plan on = NonFiniteScenariosAccess.plan(comm, "t.On", null)) {
          assertTrue(on.checkFinite());
          assertTrue(on.describe().contains("  finite check: before step 0 (grads, bias)"), on.describe());
        }
        System.setProperty(PlanBuilder.CHECK_FINITE_PROPERTY, "false");
        try (Plan off = NonFiniteScenariosAccess.plan(comm, "t.Off", null)) {
          assertFalse(off.checkFinite());
          assertFalse(off.describe().contains("finite check"), off.describe());
        }
        try (Plan on = NonFiniteScenariosAccess.plan(comm, "t.Explicit", true)) {
          assertTrue(on.checkFinite(), "the plan's own setting wins over a default of false");
        }
        System.setProperty(PlanBuilder.CHECK_FINITE_PROPERTY, "yes");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> new PlanBuilder("t.Bad", comm, 0));
        assertEquals("system property commplan.checkFinite is 'yes'; set it to true (every plan searches its"
            + " floating-point reductions' send data for NaN and infinity before they go out) or false (each plan as"
            + " built: @CommPlan(checkFinite), off by default)", e.getMessage());
      });
    } finally {
      if (old == null) {
        System.clearProperty(PlanBuilder.CHECK_FINITE_PROPERTY);
      } else {
        System.setProperty(PlanBuilder.CHECK_FINITE_PROPERTY, old);
      }
    }
  }

  /** Every rank must search and exchange before the same steps: ranks that differ fail at build, naming it. */
  @Test
  void ranksThatDisagreeAboutTheCheckFailAtBuild() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      List<Object> results = cluster.call(comm -> {
        try (Plan p = NonFiniteScenariosAccess.plan(comm, "t.Differ", comm.rank() == 1)) {
          return (Object) p.describe();
        } catch (PlanMismatchException e) {
          return e;
        }
      });
      for (Object r : results) {
        PlanMismatchException e = assertInstanceOf(PlanMismatchException.class, r);
        assertTrue(e.getMessage().contains("finite check"), e.getMessage());
      }
    }
  }

  /** On one rank there is no one to exchange with: the verdict is this rank's own. */
  @Test
  void oneRankDecidesAlone() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        try (Plan p = NonFiniteScenariosAccess.plan(comm, "t.One", true)) {
          ((F32Buffer) p.buffer(0)).set(3, Float.NEGATIVE_INFINITY);
          var e = assertThrows(dev.commplan.runtime.NonFiniteException.class, () -> p.execute(comm.stream()));
          assertEquals(0, e.rank());
          assertEquals(3, e.index());
          assertEquals(Double.NEGATIVE_INFINITY, e.value());
          assertEquals("grads", e.field());
          assertTrue(e.getMessage().startsWith("plan t.One, step 0: rank 0 would send an infinity (-Infinity) in field"
              + " 'grads' (F32), at index 3 (bits 0xff800000), into a reduction."), e.getMessage());
          ((F32Buffer) p.buffer(0)).set(3, 1f);
          p.execute(comm.stream());
          comm.stream().synchronize();
        }
      });
    }
  }

  /** Test access to a small checked plan: {@code grads} F32[16384] all-reduced, then {@code bias}. */
  static final class NonFiniteScenariosAccess {
    private NonFiniteScenariosAccess() {}

    /** {@code check} null: the builder's default. */
    static Plan plan(dev.commplan.runtime.Communicator comm, String name, Boolean check) {
      PlanBuilder b = new PlanBuilder(name, comm, 0);
      if (check != null) {
        b.checkFinite(check);
      }
      int grads = b.buffer("grads", DataType.F32, 16384, "{\"16384\"}", null);
      int bias = b.buffer("bias", DataType.F32, 1000, "{\"1000\"}", null);
      b.collective(0, Collective.ALL_REDUCE, grads, grads, ReduceOp.SUM, -1);
      b.allReduce(0, bias, bias, ReduceOp.SUM);
      return b.build();
    }
  }
}
