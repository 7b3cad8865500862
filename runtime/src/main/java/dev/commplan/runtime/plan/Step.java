package dev.commplan.runtime.plan;

import java.util.List;

/** One step of a schedule: its calls are issued together inside one group. */
public record Step(int number, List<CollectiveCall> calls) {
  public Step {
    calls = List.copyOf(calls);
  }
}
