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
  void enqueue(Stream stream);
}
