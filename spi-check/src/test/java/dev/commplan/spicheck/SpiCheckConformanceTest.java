package dev.commplan.spicheck;

import dev.commplan.conformance.CapturedPlanSuite;
import dev.commplan.conformance.CollectiveCorrectnessSuite;
import dev.commplan.conformance.MeshSuite;
import dev.commplan.conformance.PointToPointSuite;
import dev.commplan.conformance.SplitSuite;
import org.junit.jupiter.api.Nested;

/**
 * The conformance kit (commplan-conformance) on this backend, run as a third party runs it: each suite
 * subclassed and told the backend's name, nothing else; the runtime finds the backend through this module's
 * {@code provides}. The collectives, point-to-point and splits on 1, 2, 3, 4, 5 and 8 ranks (the kit's
 * default), captured plans on 1 to 4, and every collective and transfer over each axis of every mesh of 4,
 * 6 and 8 ranks.
 */
class SpiCheckConformanceTest {
  @Nested
  class Collectives extends CollectiveCorrectnessSuite {
    @Override
    protected String backend() {
      return SpiCheckBackend.NAME;
    }
  }

  @Nested
  class PointToPoint extends PointToPointSuite {
    @Override
    protected String backend() {
      return SpiCheckBackend.NAME;
    }
  }

  @Nested
  class CapturedPlans extends CapturedPlanSuite {
    @Override
    protected String backend() {
      return SpiCheckBackend.NAME;
    }

    @Override
    protected int[] worldSizes() {
      return new int[] {1, 2, 3, 4};
    }
  }

  @Nested
  class Splits extends SplitSuite {
    @Override
    protected String backend() {
      return SpiCheckBackend.NAME;
    }
  }

  @Nested
  class Meshes extends MeshSuite {
    @Override
    protected String backend() {
      return SpiCheckBackend.NAME;
    }

    @Override
    protected int[] worldSizes() {
      return new int[] {4, 6, 8};
    }
  }
}
