package dev.commplan.runtime.local;

import dev.commplan.conformance.CapturedPlanSuite;
import dev.commplan.conformance.CollectiveCorrectnessSuite;
import dev.commplan.conformance.MeshSuite;
import dev.commplan.conformance.PointToPointSuite;
import dev.commplan.conformance.SplitSuite;
import org.junit.jupiter.api.Nested;

/**
 * The conformance kit (conformance/) on the local backend, named as any backend names itself: the
 * collectives, point-to-point and splits on 1, 2, 3, 4, 5 and 8 ranks (the kit's default world sizes: odd
 * ones catch slicing bugs), captured plans on 1 to 4, and every collective over each axis of every mesh of
 * 4, 6 and 8 ranks. What only the local backend shows (its threads, its messages, allocation per launch) is
 * in the other Local*Test classes.
 */
class LocalConformanceTest {
  private static final String LOCAL = "local";

  @Nested
  class Collectives extends CollectiveCorrectnessSuite {
    @Override
    protected String backend() {
      return LOCAL;
    }
  }

  @Nested
  class PointToPoint extends PointToPointSuite {
    @Override
    protected String backend() {
      return LOCAL;
    }
  }

  @Nested
  class CapturedPlans extends CapturedPlanSuite {
    @Override
    protected String backend() {
      return LOCAL;
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
      return LOCAL;
    }
  }

  @Nested
  class Meshes extends MeshSuite {
    @Override
    protected String backend() {
      return LOCAL;
    }

    @Override
    protected int[] worldSizes() {
      return new int[] {4, 6, 8};
    }
  }
}
