package dev.commplan.runtime.nccl;

/**
 * The rule of this package's closes and aborts, which go on past a failure to free what they can: the first
 * failure is the one thrown, each later one rides on it as suppressed. The rule is the runtime's, {@link
 * dev.commplan.runtime.guard.Failures}; this package's callers reach it here.
 */
final class Failures {
  private Failures() {}

  /** {@return {@code next} when it is the first, else {@code first} with {@code next} added as suppressed} */
  static RuntimeException add(RuntimeException first, RuntimeException next) {
    return dev.commplan.runtime.guard.Failures.add(first, next);
  }
}
