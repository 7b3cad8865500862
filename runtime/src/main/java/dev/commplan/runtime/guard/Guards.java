package dev.commplan.runtime.guard;

import java.util.Objects;
import java.util.function.Function;

/**
 * How plans reach the guard state that buffers and streams keep privately: a buffer's {@link
 * HostAccessGuard} and a stream's {@link StreamProgress}. {@code Buffer} and the SPI's {@code StreamBase}
 * register an accessor when their class is initialized (before any instance exists), and plans ask here
 * (the JDK's own "shared secrets" pattern). This package is not exported from the module, so neither the
 * guard's mutators nor these accessors are part of any public API.
 */
public final class Guards {
  private static volatile Function<Object, HostAccessGuard> bufferGuards;
  private static volatile Function<Object, StreamProgress> streamProgress;

  private Guards() {}

  /** Called once, by {@code Buffer}'s static initializer. */
  public static void registerBuffers(Function<Object, HostAccessGuard> accessor) {
    bufferGuards = Objects.requireNonNull(accessor, "accessor");
  }

  /** Called once, by {@code StreamBase}'s static initializer; the accessor returns null for other streams. */
  public static void registerStreams(Function<Object, StreamProgress> accessor) {
    streamProgress = Objects.requireNonNull(accessor, "accessor");
  }

  /** The guard of {@code buffer} (a {@code Buffer}: its class has registered, since an instance exists). */
  public static HostAccessGuard of(Object buffer) {
    return bufferGuards.apply(buffer);
  }

  /**
   * The progress of {@code stream}, or null for a stream that keeps none (not built on {@code
   * StreamBase}), whose buffers plans then do not guard.
   */
  public static StreamProgress progressOf(Object stream) {
    Function<Object, StreamProgress> accessor = streamProgress;
    return accessor == null ? null : accessor.apply(stream);
  }
}
