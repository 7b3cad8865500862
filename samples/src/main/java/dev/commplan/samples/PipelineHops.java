package dev.commplan.samples;

import dev.commplan.annotations.CommPlan;
import dev.commplan.annotations.Recv;
import dev.commplan.annotations.Send;
import dev.commplan.annotations.Shape;
import dev.commplan.runtime.F32Buffer;

/**
 * One hop of a pipeline: stage s runs on rank s. Step 0 moves one micro-batch's activations one stage
 * forward, step 1 moves one micro-batch's gradients one stage back; the training loop runs them one at a
 * time with {@code executeStep}, the stages' compute in between. The edge stages need no special code:
 * {@code rank - 1} on rank 0 and {@code rank + 1} on the last rank are outside the ranks, and an
 * unwrapped peer outside the ranks means no transfer (the first stage receives nothing, the last sends
 * nothing). Generates {@link PipelineHopsPlan}.
 */
@CommPlan(dims = {"batch", "width"})
final class PipelineHops {
  /** Step 0: this stage's output activations for one micro-batch, to the next stage. */
  @Send(to = "rank + 1", step = 0)
  @Shape({"batch", "width"})
  F32Buffer activationsOut;

  /** Step 0: the previous stage's output, this stage's input. */
  @Recv(from = "rank - 1", step = 0)
  @Shape({"batch", "width"})
  F32Buffer activationsIn;

  /** Step 1: the loss's gradient with respect to this stage's input, to the previous stage. */
  @Send(to = "rank - 1", step = 1)
  @Shape({"batch", "width"})
  F32Buffer gradientsOut;

  /** Step 1: the loss's gradient with respect to this stage's output, from the next stage. */
  @Recv(from = "rank + 1", step = 1)
  @Shape({"batch", "width"})
  F32Buffer gradientsIn;
}
