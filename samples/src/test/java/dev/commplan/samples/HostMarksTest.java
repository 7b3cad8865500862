package dev.commplan.samples;

import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.local.LocalStream;
import java.util.concurrent.CountDownLatch;
import org.junit.jupiter.api.Test;

class HostMarksTest {
  /**
   * More marks than one chunk holds, all enqueued while the stream's worker is held, so that the tasks write
   * after later marks were taken: every mark keeps its time (a store that grew by copying lost them).
   */
  @Test
  void marksTakenBeforeTheWorkerRunsKeepTheirTimes() {
    try (Cluster cluster = Backends.local(1)) {
      cluster.call(comm -> {
        LocalStream stream = (LocalStream) comm.stream();
        CountDownLatch held = new CountDownLatch(1);
        try (HostMarks marks = new HostMarks()) {
          stream.enqueueHostTask(held::await);
          long before = System.nanoTime();
          int count = 200;
          for (int i = 0; i < count; i++) {
            marks.mark(stream);
          }
          held.countDown();
          stream.synchronize();
          for (int i = 0; i < count; i++) {
            assertTrue(marks.millis(i) >= before / 1e6, "mark " + i + ": " + marks.millis(i));
            assertTrue(i == 0 || marks.millis(i) >= marks.millis(i - 1), "mark " + i);
          }
        }
        return null;
      });
    }
  }
}
