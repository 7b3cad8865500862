package dev.commplan.runtime.spi;

import dev.commplan.runtime.Stream;

/**
 * A schedule prepared by a backend ({@code Communicator#compile}): pointers resolved, calls laid out, so
 * that {@link #enqueue} allocates nothing on the Java heap.
 */
public interface CompiledSchedule {
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
