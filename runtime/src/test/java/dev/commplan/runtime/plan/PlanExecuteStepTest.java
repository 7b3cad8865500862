package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.local.LocalCluster;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@link Plan#executeStep}: one step at a time, with host work in between (as ZeRO needs). */
class PlanExecuteStepTest {
  private static final String SHAPE = "{\"4\"}";

  @Test
  void stepsRunOneAtATimeWithHostWorkInBetween() {
    int ranks = 3;
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<float[][]> results = cluster.call(comm -> {
        PlanBuilder b = new PlanBuilder("p.TwoSteps", comm, 0);
        int x = b.buffer("x", DataType.F32, 4, SHAPE, null);
        int y = b.buffer("y", DataType.F32, 4, SHAPE, null);
        b.allReduce(0, x, x, ReduceOp.SUM);
        b.allReduce(1, y, y, ReduceOp.SUM);
        try (Plan plan = b.build()) {
          F32Buffer px = (F32Buffer) plan.buffer(x);
          F32Buffer py = (F32Buffer) plan.buffer(y);
          px.copyFrom(new float[] {comm.rank(), 1, 2, 3});
          py.fill(-7f);

          plan.executeStep(0, comm.stream());
          comm.stream().synchronize();
          float[] afterStep0 = py.toArray(); // step 1 has not run: y is as the host left it
          float[] reduced = px.toArray();
          float[] doubled = new float[4];
          for (int i = 0; i < 4; i++) {
            doubled[i] = 2 * reduced[i];
          }
          py.copyFrom(doubled); // host work between the steps
          plan.executeStep(1, comm.stream());
          comm.stream().synchronize();
          return new float[][] {afterStep0, reduced, py.toArray()};
        }
      });
      float rankSum = 0 + 1 + 2;
      for (float[][] r : results) {
        assertArrayEquals(new float[] {-7f, -7f, -7f, -7f}, r[0]);
        assertArrayEquals(new float[] {rankSum, 3, 6, 9}, r[1]);
        assertArrayEquals(new float[] {2 * rankSum * ranks, 18, 36, 54}, r[2]);
      }
    }
  }

  @Test
  void anUnknownStepIsRefusedWithThePlansSteps() {
    try (LocalCluster cluster = new LocalCluster(1)) {
      cluster.run(comm -> {
        PlanBuilder b = new PlanBuilder("p.Steps", comm, 0);
        int x = b.buffer("x", DataType.F32, 4, SHAPE, null);
        b.allReduce(2, x, x, ReduceOp.SUM);
        b.allReduce(5, x, x, ReduceOp.MAX);
        try (Plan plan = b.build()) {
          String message = assertThrows(IllegalArgumentException.class, () -> plan.executeStep(3, comm.stream()))
              .getMessage();
          assertTrue(message.contains("p.Steps has no step 3; its steps are [2, 5]"), message);
        }
      });
    }
  }
}
