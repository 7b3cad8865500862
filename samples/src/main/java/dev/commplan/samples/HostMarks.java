package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalStream;
import java.util.ArrayList;
import java.util.List;

/**
 * Marks read from the host's clock ({@code System.nanoTime}, one origin for every rank of the JVM): on a
 * local stream by a host task, when the stream's worker reaches it, so that the mark falls between the
 * work enqueued before and after it; on any other stream at once, which is right where the work before
 * the mark ran on the calling thread (MPI's host compute) and only there.
 */
final class HostMarks implements StepTrace.Marks {
  /** Marks per chunk. Chunks are never copied: a task still to run writes into the chunk it was given. */
  private static final int CHUNK = 64;
  private final List<long[]> chunks = new ArrayList<>();
  private int count;

  @Override
  public int mark(Stream stream) {
    int index = count++;
    if (index / CHUNK == chunks.size()) {
      chunks.add(new long[CHUNK]);
    }
    long[] into = chunks.get(index / CHUNK);
    int at = index % CHUNK;
    if (stream instanceof LocalStream local) {
      local.enqueueHostTask(() -> into[at] = System.nanoTime());
    } else {
      into[at] = System.nanoTime();
    }
    return index;
  }

  @Override
  public double millis(int index) {
    return chunks.get(index / CHUNK)[index % CHUNK] / 1e6;
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
