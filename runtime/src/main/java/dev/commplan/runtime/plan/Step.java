package dev.commplan.runtime.plan;

import java.util.List;

/**
 * One step of a schedule: its calls are issued together inside one group.
 *
 * @param number the step number from the annotations; steps run in ascending order
 * @param calls the NCCL calls of the step, in the order they are issued
 */
public record Step(int number, List<CollectiveCall> calls) {
  /**
   * Copies {@code calls}, so that the step is immutable.
   *
   * @param number the step number from the annotations
   * @param calls the NCCL calls of the step, in the order they are issued
   */
  public Step {
    calls = List.copyOf(calls);
  }
}
