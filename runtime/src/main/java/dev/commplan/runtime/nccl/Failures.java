package dev.commplan.runtime.nccl;

/**
 * The rule of this package's closes and aborts, which go on past a failure to free what they can: the first
 * failure is the one thrown, each later one rides on it as suppressed.
 */
final class Failures {
  private Failures() {}

  /** {@return {@code next} when it is the first, else {@code first} with {@code next} added as suppressed} */
  static RuntimeException add(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }
}
