package dev.commplan.runtime.guard;

/**
 * The runtime's rule for closes and aborts that go on past a failure to free what they can, and for checks
 * that all run before any throws: the first failure is the one thrown, each later one rides on it as
 * suppressed. Here, in the bottom layer, so that the API, plans, the SPI and the backends share it.
 */
public final class Failures {
  private Failures() {}

  /** {@return {@code next} when it is the first ({@code first} null), else {@code first} with {@code next} added as suppressed} */
  public static RuntimeException add(RuntimeException first, RuntimeException next) {
    if (first == null) {
      return next;
    }
    first.addSuppressed(next);
    return first;
  }
}
