package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalStream;
import java.util.Arrays;

/**
 * Marks read from the host's clock ({@code System.nanoTime}, one origin for every rank of the JVM): on a
 * local stream by a host task, when the stream's worker reaches it, so that the mark falls between the
 * work enqueued before and after it; on any other stream at once, which is right where the work before
 * the mark ran on the calling thread (MPI's host compute) and only there.
 */
final class HostMarks implements StepTrace.Marks {
  private long[] nanos = new long[64];
  private int count;

  @Override
  public int mark(Stream stream) {
    int index = count++;
    if (index == nanos.length) {
      nanos = Arrays.copyOf(nanos, 2 * index); // before the task that writes it is enqueued
    }
    long[] into = nanos;
    if (stream instanceof LocalStream local) {
      local.enqueueHostTask(() -> into[index] = System.nanoTime());
    } else {
      into[index] = System.nanoTime();
    }
    return index;
  }

  @Override
  public double millis(int index) {
    return nanos[index] / 1e6;
  }

  @Override
  public void clear() {
    count = 0;
  }

  @Override
  public void close() {
    // nothing held
  }
}
