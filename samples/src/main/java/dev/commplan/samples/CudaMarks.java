package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.nccl.NcclInterop;
import java.util.Arrays;

/**
 * Marks taken by CUDA events with timing ({@link CudaTiming}) recorded on the streams' {@code
 * cudaStream_t}s, on the calling thread's current device: the GPU's own time of the work on each stream.
 * Times are from the first mark since {@link #clear()}. The events are made as needed and reused.
 */
final class CudaMarks implements StepTrace.Marks {
  private long[] events = new long[64];
  private int created;
  private int count;

  @Override
  public int mark(Stream stream) {
    if (count == created) {
      if (created == events.length) {
        events = Arrays.copyOf(events, 2 * created);
      }
      events[created] = CudaTiming.create();
      created++;
    }
    CudaTiming.record(events[count], NcclInterop.cudaStream(stream));
    return count++;
  }

  @Override
  public double millis(int index) {
    return index == 0 ? 0 : CudaTiming.elapsedMillis(events[0], events[index]);
  }

  @Override
  public void clear() {
    count = 0;
  }

  @Override
  public void close() {
    while (created > 0) {
      CudaTiming.destroy(events[--created]);
    }
    count = 0;
  }
}
