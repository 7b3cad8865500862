package dev.commplan.samples;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;

/**
 * STAND-IN, until the processor's {@code @CommPlan(axes)} and {@code over} are on main: the plan the
 * annotated class {@code ThreeDSteps} will generate, built by hand with the runtime's {@link PlanBuilder} (the
 * same calls the generated code makes), so that the 3d sample's training runs over a real mesh now.
 * Deleted when {@code ThreeDSteps} is annotated.
 */
final class ThreeDStepsPlan implements AutoCloseable {
  private final Plan plan;
  private final int[] handles;

  private ThreeDStepsPlan(Plan plan, int[] handles) {
    this.plan = plan;
    this.handles = handles;
  }

  static Builder builder() {
    return new Builder();
  }

  static final class Builder {
    private long batch;
    private long width;
    private long cols;

    Builder batch(long value) {
      batch = value;
      return this;
    }

    Builder width(long value) {
      width = value;
      return this;
    }

    Builder cols(long value) {
      cols = value;
      return this;
    }

    ThreeDStepsPlan build(Mesh mesh) {
      PlanBuilder b = new PlanBuilder("dev.commplan.samples.ThreeDSteps", mesh, 0, "pp", "dp", "tp");
      String rows = "{\"batch\", \"width\"}";
      int partialOutput = b.buffer("partialOutput", DataType.F32, batch * width, rows, null);
      int activationsOut = b.buffer("activationsOut", DataType.F32, batch * width, rows, null);
      int activationsIn = b.buffer("activationsIn", DataType.F32, batch * width, rows, null);
      int partialInputGrad = b.buffer("partialInputGrad", DataType.F32, batch * width, rows, null);
      int gradientsOut = b.buffer("gradientsOut", DataType.F32, batch * width, rows, null);
      int gradientsIn = b.buffer("gradientsIn", DataType.F32, batch * width, rows, null);
      int gradA = b.buffer("gradA", DataType.F32, width * cols, "{\"width\", \"cols\"}", null);
      int gradBiasA = b.buffer("gradBiasA", DataType.F32, cols, "{\"cols\"}", null);
      int gradB = b.buffer("gradB", DataType.F32, cols * width, "{\"cols\", \"width\"}", null);
      int gradBiasB = b.buffer("gradBiasB", DataType.F32, width, "{\"width\"}", null);
      int loss = b.buffer("loss", DataType.F32, 1, "{\"1\"}", null);
      b.collective(0, Collective.ALL_REDUCE, partialOutput, partialOutput, ReduceOp.SUM, -1, "tp");
      b.send(1, activationsOut, "rank + 1", "pp");
      b.recv(1, activationsIn, "rank - 1", "pp");
      b.collective(2, Collective.ALL_REDUCE, partialInputGrad, partialInputGrad, ReduceOp.SUM, -1, "tp");
      b.send(3, gradientsOut, "rank - 1", "pp");
      b.recv(3, gradientsIn, "rank + 1", "pp");
      for (int h : new int[] {gradA, gradBiasA, gradB, gradBiasB, loss}) {
        b.collective(4, Collective.ALL_REDUCE, h, h, ReduceOp.AVG, -1, "dp");
      }
      return new ThreeDStepsPlan(b.build(),
          new int[] {partialOutput, activationsOut, activationsIn, partialInputGrad, gradientsOut, gradientsIn, gradA,
              gradBiasA, gradB, gradBiasB, loss});
    }
  }

  F32Buffer partialOutput() {
    return (F32Buffer) plan.buffer(handles[0]);
  }

  F32Buffer activationsOut() {
    return (F32Buffer) plan.buffer(handles[1]);
  }

  F32Buffer activationsIn() {
    return (F32Buffer) plan.buffer(handles[2]);
  }

  F32Buffer partialInputGrad() {
    return (F32Buffer) plan.buffer(handles[3]);
  }

  F32Buffer gradientsOut() {
    return (F32Buffer) plan.buffer(handles[4]);
  }

  F32Buffer gradientsIn() {
    return (F32Buffer) plan.buffer(handles[5]);
  }

  F32Buffer gradA() {
    return (F32Buffer) plan.buffer(handles[6]);
  }

  F32Buffer gradBiasA() {
    return (F32Buffer) plan.buffer(handles[7]);
  }

  F32Buffer gradB() {
    return (F32Buffer) plan.buffer(handles[8]);
  }

  F32Buffer gradBiasB() {
    return (F32Buffer) plan.buffer(handles[9]);
  }

  F32Buffer loss() {
    return (F32Buffer) plan.buffer(handles[10]);
  }

  void executeStep(int step, Stream stream) {
    plan.executeStep(step, stream);
  }

  String describe() {
    return plan.describe();
  }

  Schedule schedule() {
    return plan.schedule();
  }

  @Override
  public void close() {
    plan.close();
  }
}
