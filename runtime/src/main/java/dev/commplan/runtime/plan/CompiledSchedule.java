package dev.commplan.runtime.plan;

import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Stream;
import java.util.Objects;

/**
 * A schedule prepared by a backend ({@link Compiler#compile}): pointers resolved, calls laid out, so
 * that {@link #enqueue} allocates nothing on the Java heap.
 */
public interface CompiledSchedule {
  /** What a plan needs from a backend to run: implemented by every backend's communicator. */
  interface Compiler {
    /**
     * Prepares {@code schedule} once, so that each {@link CompiledSchedule#enqueue} does no allocation and
     * no planning.
     */
    CompiledSchedule compile(Schedule schedule);
  }

  /**
   * {@code schedule} compiled by {@code comm}'s backend.
   *
   * @throws IllegalArgumentException if {@code comm}'s backend cannot run plans
   */
  static CompiledSchedule compile(Communicator comm, Schedule schedule) {
    Objects.requireNonNull(comm, "comm");
    if (comm instanceof Compiler compiler) {
      return compiler.compile(schedule);
    }
    throw new IllegalArgumentException(comm + " of the '" + comm.backendName() + "' backend cannot run plans:"
        + " its communicator does not implement CompiledSchedule.Compiler");
  }

  /**
   * Enqueues every step in ascending order on {@code stream}, each step's calls inside one
   * group, and returns without waiting.
   */
  default void enqueue(Stream stream) {
    enqueueSteps(stream, 0, Integer.MAX_VALUE);
  }

  /**
   * Enqueues the steps at positions {@code [fromIndex, toIndex)} of the schedule's step list (clamped to
   * its length), in ascending order, each inside one group, and returns without waiting. Lets a caller
   * do host work between two steps of one plan (ZeRO: update the shard between ReduceScatter and
   * AllGather).
   */
  void enqueueSteps(Stream stream, int fromIndex, int toIndex);
}
