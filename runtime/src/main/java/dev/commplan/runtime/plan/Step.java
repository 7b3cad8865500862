package dev.commplan.runtime.plan;

import java.util.List;

/**
 * One step of a schedule: its calls are issued together inside one group. In the schedule a bucketed plan
 * compiles for its buckets, each bucket is a step of its own ({@link #bucket()}).
 *
 * @param number the step number from the annotations; steps run in ascending order
 * @param calls the NCCL calls of the step, in the order they are issued
 * @param bucket the bucket this step holds ({@link Schedule.Bucket#index()}), or -1 for a whole step
 */
public record Step(int number, List<CollectiveCall> calls, int bucket) {
  /**
   * Copies {@code calls}, so that the step is immutable.
   *
   * @param number the step number from the annotations
   * @param calls the NCCL calls of the step, in the order they are issued
   * @param bucket the bucket this step holds, or -1 for a whole step
   */
  public Step {
    calls = List.copyOf(calls);
  }

  /**
   * A whole step (no bucket).
   *
   * @param number the step number from the annotations
   * @param calls the NCCL calls of the step, in the order they are issued
   */
  public Step(int number, List<CollectiveCall> calls) {
    this(number, calls, -1);
  }
}
