package dev.commplan.runtime.nccl.rank;

import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.List;

/**
 * A rank's flight record on this backend: every step and direct collective it enqueued ({@link
 * FlightRecorder}), and, with {@value #PROPERTY}{@code =true}, a CUDA event per recorder slot recorded
 * after the slot's work, so that a timeout can name exactly which of several pending steps is stuck.
 * Events are off by default so that {@code execute()} issues nothing but the NCCL calls: on an H200 the
 * {@code cudaEventRecord} cost about 0.3 µs per step (docs/gpu.md, "Step events"); without them a timeout
 * names the oldest step not known to have finished. Used by the rank's one thread, except {@link
 * #pendingOperation()} on failure paths.
 */
public final class StepEvents {
  /** The system property that turns the events on ({@value}, default false). */
  public static final String PROPERTY = "commplan.nccl.stepEvents";

  private final FlightRecorder recorder;
  private final boolean enabled;
  /** One CUDA event per recorder slot, recorded after the slot's work; 0 where none. */
  private final long[] slotEvents;
  private final boolean[] slotHasEvent;
  /** The {@code cudaStream_t} each slot's operation was enqueued on; 0 where it names none. */
  private final long[] slotStream;
  /** The one stream operations named so far, or -1 once they named two: a synchronize then finishes only its own. */
  private long onlyStream;

  /** Makes the events (when {@link #PROPERTY} is on) on the current device. */
  public StepEvents(int rank) {
    this.recorder = new FlightRecorder(rank, FlightRecorder.DEFAULT_CAPACITY);
    this.enabled = Boolean.parseBoolean(System.getProperty(PROPERTY, "false"));
    this.slotEvents = new long[enabled ? recorder.capacity() : 0];
    this.slotHasEvent = new boolean[recorder.capacity()];
    this.slotStream = new long[recorder.capacity()];
    try {
      for (int i = 0; i < slotEvents.length; i++) {
        slotEvents[i] = CheckedCuda.cudaEventCreateDisableTiming();
      }
    } catch (RuntimeException e) {
      destroy();
      throw e;
    }
  }

  public FlightRecorder recorder() {
    return recorder;
  }

  public boolean enabled() {
    return enabled;
  }

  /**
   * Records an operation; with {@code cudaStream != 0} also its slot's event (if events are on), else it
   * is left to a later {@link #markLast} (inside a user's group, the calls are launched at its end).
   */
  public void record(OperationLabel label, long cudaStream) {
    long seq = recorder.enqueued(label, System.nanoTime());
    int slot = recorder.slot(seq);
    slotHasEvent[slot] = false;
    slotStream[slot] = cudaStream;
    if (cudaStream != 0 && onlyStream != cudaStream) {
      onlyStream = onlyStream == 0 ? cudaStream : -1;
    }
    if (cudaStream != 0) {
      recordEvent(slot, cudaStream);
    }
  }

  /** After a user's group: the last recorded operation gets the event (the group's calls finish together). */
  public void markLast(long cudaStream) {
    long next = recorder.nextSequence();
    if (next > 0 && cudaStream != 0) {
      recordEvent(recorder.slot(next - 1), cudaStream);
    }
  }

  private void recordEvent(int slot, long cudaStream) {
    if (!enabled) {
      return;
    }
    // On the hot path (with events on): a raw call, its code checked here.
    int rc = CheckedCuda.cudaEventRecordRaw(slotEvents[slot], cudaStream);
    if (rc != 0) {
      throw CheckedCuda.cudaError("cudaEventRecord (flight recorder)", rc);
    }
    slotHasEvent[slot] = true;
  }

  /**
   * A synchronize of {@code cudaStream} returned: what was recorded on it so far has finished (stream order),
   * and, after the own stream's ({@code ownStream}), what named no stream. While every operation named one
   * stream, that is everything recorded so far.
   */
  public void finishedOn(long cudaStream, boolean ownStream) {
    long now = System.nanoTime();
    if (onlyStream != -1) {
      if (ownStream || onlyStream == cudaStream) {
        recorder.finishedBefore(recorder.nextSequence(), now);
      }
      return;
    }
    long next = recorder.nextSequence();
    for (long seq = Math.max(0, next - slotStream.length); seq < next; seq++) {
      long lane = slotStream[recorder.slot(seq)];
      if (lane == cudaStream || lane == 0 && ownStream) {
        recorder.finishedIfPending(seq, now);
      }
    }
  }

  /**
   * Asks the CUDA events which recorded operations have finished, marks them, and returns the oldest
   * that has not (null when all have). For failure paths; allocates.
   */
  public FlightRecorder.Entry pendingOperation() {
    List<FlightRecorder.Entry> entries = recorder.snapshot();
    long now = System.nanoTime();
    for (int i = entries.size() - 1; i >= 0; i--) {
      FlightRecorder.Entry e = entries.get(i);
      int slot = recorder.slot(e.sequence());
      if (!slotHasEvent[slot]) {
        continue;
      }
      boolean done;
      try {
        done = CheckedCuda.cudaEventQuery(slotEvents[slot]);
      } catch (RuntimeException failure) {
        break; // the device is in trouble; the record stays as it is
      }
      if (done) {
        recorder.finishedBefore(e.sequence() + 1, now); // stream order: everything up to it is done
        break;
      }
    }
    return recorder.oldestPending();
  }

  /** Destroys the events; best effort (nothing useful to do if one fails). Idempotent. */
  public void destroy() {
    for (int i = 0; i < slotEvents.length; i++) {
      if (slotEvents[i] != 0) {
        CheckedCuda.cudaEventDestroyQuietly(slotEvents[i]);
        slotEvents[i] = 0;
      }
    }
  }
}
