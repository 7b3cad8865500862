package dev.commplan.runtime.spi;

import dev.commplan.runtime.guard.Failures;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The streams a communicator's {@code newStream()} made and that are not closed yet: each is closed by its
 * user ({@link StreamBase#close()}, which takes it off here) or with the communicator at the latest ({@link
 * #closeAll}).
 */
final class MadeStreams {
  private final List<StreamBase> open = new CopyOnWriteArrayList<>();

  /** Keeps {@code stream}, just made by the backend, and marks it as one its user closes. */
  StreamBase add(StreamBase stream) {
    stream.madeBy(this);
    open.add(stream);
    return stream;
  }

  /** {@return the streams made and not closed yet, as a snapshot} */
  List<StreamBase> open() {
    return List.copyOf(open);
  }

  /** {@code stream} was closed by its user. */
  void remove(StreamBase stream) {
    open.remove(stream);
  }

  /** Closes every stream still open; returns {@code failure} with what failed here added (or the first failure). */
  RuntimeException closeAll(RuntimeException failure) {
    for (StreamBase stream : open) {
      try {
        stream.close();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    return failure;
  }
}
