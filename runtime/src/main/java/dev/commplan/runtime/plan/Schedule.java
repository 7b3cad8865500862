package dev.commplan.runtime.plan;

import java.util.List;

/**
 * What a built plan issues: steps in ascending order, each a group of NCCL calls. Backends compile it
 * once ({@code Communicator#compile}); {@code describe()} renders it for people.
 *
 * @param planName the annotated class's qualified name
 * @param ranks the communicator's size the schedule was built for
 */
public record Schedule(String planName, int ranks, List<Step> steps) {
  public Schedule {
    steps = List.copyOf(steps);
  }
}
