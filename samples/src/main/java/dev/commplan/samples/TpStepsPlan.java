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
 * annotated class {@code TpSteps} will generate, built by hand with the runtime's {@link PlanBuilder} (the
 * same calls the generated code makes), so that the tp sample's training runs over a real mesh now.
 * Deleted when {@code TpSteps} is annotated.
 */
final class TpStepsPlan implements AutoCloseable {
  private final Plan plan;
  private final int[] handles;

  private TpStepsPlan(Plan plan, int[] handles) {
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
    private long blocks;

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

    Builder blocks(long value) {
      blocks = value;
      return this;
    }

    TpStepsPlan build(Mesh mesh) {
      PlanBuilder b = new PlanBuilder("dev.commplan.samples.TpSteps", mesh, 0, "dp", "tp");
      int partialOutput = b.buffer("partialOutput", DataType.F32, batch * width, "{\"batch\", \"width\"}", null);
      int partialInputGrad = b.buffer("partialInputGrad", DataType.F32, batch * width, "{\"batch\", \"width\"}", null);
      int gradA = b.buffer("gradA", DataType.F32, blocks * width * cols, "{\"blocks\", \"width\", \"cols\"}", null);
      int gradBiasA = b.buffer("gradBiasA", DataType.F32, blocks * cols, "{\"blocks\", \"cols\"}", null);
      int gradB = b.buffer("gradB", DataType.F32, blocks * cols * width, "{\"blocks\", \"cols\", \"width\"}", null);
      int gradBiasB = b.buffer("gradBiasB", DataType.F32, blocks * width, "{\"blocks\", \"width\"}", null);
      int loss = b.buffer("loss", DataType.F32, 1, "{\"1\"}", null);
      b.collective(0, Collective.ALL_REDUCE, partialOutput, partialOutput, ReduceOp.SUM, -1, "tp");
      b.collective(1, Collective.ALL_REDUCE, partialInputGrad, partialInputGrad, ReduceOp.SUM, -1, "tp");
      for (int h : new int[] {gradA, gradBiasA, gradB, gradBiasB, loss}) {
        b.collective(2, Collective.ALL_REDUCE, h, h, ReduceOp.AVG, -1, "dp");
      }
      return new TpStepsPlan(b.build(),
          new int[] {partialOutput, partialInputGrad, gradA, gradBiasA, gradB, gradBiasB, loss});
    }
  }

  F32Buffer partialOutput() {
    return (F32Buffer) plan.buffer(handles[0]);
  }

  F32Buffer partialInputGrad() {
    return (F32Buffer) plan.buffer(handles[1]);
  }

  F32Buffer gradA() {
    return (F32Buffer) plan.buffer(handles[2]);
  }

  F32Buffer gradBiasA() {
    return (F32Buffer) plan.buffer(handles[3]);
  }

  F32Buffer gradB() {
    return (F32Buffer) plan.buffer(handles[4]);
  }

  F32Buffer gradBiasB() {
    return (F32Buffer) plan.buffer(handles[5]);
  }

  F32Buffer loss() {
    return (F32Buffer) plan.buffer(handles[6]);
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
