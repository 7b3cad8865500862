package dev.commplan.bench;

import dev.commplan.runtime.Stream;
import java.util.List;

/**
 * One way of issuing the step, with what it allocated: {@code issue} enqueues the step, and one step is that
 * and a synchronize of each of {@code streams} (the streams it enqueued on).
 */
record ManyWay(String mode, int calls, Runnable issue, List<Stream> streams, List<ManyPiece> pieces,
    AutoCloseable resources) implements AutoCloseable {
  /** The timed unit: the issue, and the wait for every stream it used. */
  void step() {
    issue.run();
    for (Stream s : streams) {
      s.synchronize();
    }
  }

  @Override
  public void close() {
    try {
      resources.close();
    } catch (Exception e) {
      throw new IllegalStateException("closing the " + mode + " buffers", e);
    }
  }
}
