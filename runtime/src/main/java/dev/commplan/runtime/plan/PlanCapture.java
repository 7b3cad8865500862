package dev.commplan.runtime.plan;

import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Stream;

/**
 * {@link CapturedPlan} over a backend's {@link CompiledSchedule.Capture}: the plan does the host side of
 * each launch (checks, guard marks; {@link Plan#launch}), the backend the rest (its graph launch and
 * flight record). Closing it closes the recording and tells the plan, which otherwise closes it first
 * when the plan itself is closed.
 */
final class PlanCapture implements CapturedPlan {
  private final Plan plan;
  private final Stream stream;
  private final CompiledSchedule.Capture recording;
  /** Why it was closed ("close() was called", "its plan was closed"); null while open. */
  private volatile String closedBecause;

  PlanCapture(Plan plan, Stream stream, CompiledSchedule.Capture recording) {
    this.plan = plan;
    this.stream = stream;
    this.recording = recording;
  }

  @Override
  public void launch() {
    String why = closedBecause;
    if (why != null) {
      throw new IllegalStateException(this + " is closed (" + why + "): capture the plan again to launch it");
    }
    plan.launch(stream, recording);
  }

  @Override
  public Stream stream() {
    return stream;
  }

  @Override
  public boolean isGraph() {
    return recording.isGraph();
  }

  @Override
  public boolean isClosed() {
    return closedBecause != null || plan.isClosed() || plan.communicator().isClosed();
  }

  @Override
  public void close() {
    closeBecause("close() was called");
  }

  /** Closes it, saying why in later launches' messages; idempotent. */
  void closeBecause(String why) {
    synchronized (this) {
      if (closedBecause != null) {
        return;
      }
      closedBecause = why;
    }
    plan.forget(this);
    recording.close();
  }

  @Override
  public String toString() {
    return "CapturedPlan[" + plan.name() + (recording.isGraph() ? ", a CUDA graph" : ", executes the plan")
        + " on " + stream + "]";
  }
}
