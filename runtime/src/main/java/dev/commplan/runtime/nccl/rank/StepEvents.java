package dev.commplan.runtime.nccl.rank;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import java.util.Arrays;
import java.util.List;

/**
 * A rank's flight record on this backend: every step and direct collective it enqueued ({@link
 * FlightRecorder}), and, with {@value #PROPERTY}{@code =true}, a CUDA event per recorder slot recorded
 * after the slot's work, so that a timeout can name exactly which of several pending steps is stuck.
 * Events are off by default so that {@code execute()} issues nothing but the NCCL calls: on an H200 the
 * {@code cudaEventRecord} cost about 0.3 µs per step (docs/gpu.md, "Step events"); without them a timeout
 * names the oldest step not known to have finished. Used by the rank's one thread, except {@link
 * #pendingOperation()} on failure paths.
 *
 * <p>The recorder is its communicator's in the rank's flight record on disk (a {@code FlightGroup}'s), over all
 * of the communicator's streams: each operation is recorded with its stream's name ({@value
 * FlightRecorder#OWN_STREAM} for the own, {@code stream 1}, ... in the order other streams are first seen; a
 * name is made once per stream). This rank's wait for its peers is what the host sees: when a {@code
 * synchronize()} returns having finished exactly one collective, its wait is from the synchronize's start (or
 * the collective's enqueue, if later) to its return, plus what the host waited for the peers at the fence
 * before launching it, where ranks share the GPU (they meet there first, {@code NcclRank.meetGroup}); where it
 * finished several, none is timed (the wait cannot be split between them). Recording allocates nothing once a
 * stream has its name.
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
  /** When each slot's operation was enqueued ({@code System.nanoTime()}), for its wait. */
  private final long[] slotEnqueued;
  /** How long the host waited for the peers at the fence before each slot's operation (ranks sharing a GPU). */
  private final long[] slotFenced;
  /** The one stream operations named so far, or -1 once they named two: a synchronize then finishes only its own. */
  private long onlyStream;
  /** The communicator's own {@code cudaStream_t}, and the other streams seen so far with their names in records. */
  private final long ownStream;
  private long[] streamHandles = new long[0];
  private String[] streamNames = new String[0];

  /** Makes the events (when {@link #PROPERTY} is on) on the current device, with a recorder outside any group. */
  public StepEvents(int rank) {
    this(new FlightRecorder(rank, FlightRecorder.DEFAULT_CAPACITY), 0);
  }

  /**
   * Makes the events (when {@link #PROPERTY} is on) on the current device, recording into {@code recorder}.
   *
   * @param recorder the communicator's recorder (its {@code FlightGroup}'s), over all of its streams
   * @param ownStream the communicator's own {@code cudaStream_t}, named {@value FlightRecorder#OWN_STREAM}
   */
  public StepEvents(FlightRecorder recorder, long ownStream) {
    this.recorder = recorder;
    this.ownStream = ownStream;
    this.enabled = Boolean.parseBoolean(System.getProperty(PROPERTY, "false"));
    this.slotEvents = new long[enabled ? recorder.capacity() : 0];
    this.slotHasEvent = new boolean[recorder.capacity()];
    this.slotStream = new long[recorder.capacity()];
    this.slotEnqueued = new long[recorder.capacity()];
    this.slotFenced = new long[recorder.capacity()];
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
    record(label, cudaStream, 0);
  }

  /**
   * {@link #record(OperationLabel, long)}, after this rank waited {@code fencedNanos} for its peers on the host
   * before launching it (ranks sharing a GPU meet at a fence first: {@code NcclRank.meetGroup}), which counts in
   * its wait.
   */
  public void record(OperationLabel label, long cudaStream, long fencedNanos) {
    long now = System.nanoTime();
    recorded(recorder.enqueued(label, streamName(cudaStream), now), cudaStream, now, fencedNanos);
  }

  /**
   * Records a direct call by its arguments (nothing is allocated), as {@link #record} does.
   *
   * @param kind {@code COLLECTIVE}, {@code P2P}, or {@code CHECK} for the agreement check's own
   * @param fencedNanos how long this rank waited for its peers at the fence before launching it, or 0
   */
  public void recordDirect(Collective collective, DataType type, ReduceOp op, long count, int rootOrPeer,
      OperationLabel.Kind kind, long cudaStream, long fencedNanos) {
    long now = System.nanoTime();
    recorded(recorder.enqueuedDirect(collective, type, op, count, rootOrPeer, kind, null, streamName(cudaStream),
        now), cudaStream, now, fencedNanos);
  }

  private void recorded(long seq, long cudaStream, long now, long fencedNanos) {
    int slot = recorder.slot(seq);
    slotHasEvent[slot] = false;
    slotStream[slot] = cudaStream;
    slotEnqueued[slot] = now;
    slotFenced[slot] = fencedNanos;
    if (cudaStream != 0 && onlyStream != cudaStream) {
      onlyStream = onlyStream == 0 ? cudaStream : -1;
    }
    if (cudaStream != 0) {
      recordEvent(slot, cudaStream);
    }
  }

  /** The name of {@code cudaStream} in records: the own stream's, or one made the first time it is seen. */
  private String streamName(long cudaStream) {
    if (cudaStream == 0 || cudaStream == ownStream) {
      return FlightRecorder.OWN_STREAM;
    }
    for (int i = 0; i < streamHandles.length; i++) {
      if (streamHandles[i] == cudaStream) {
        return streamNames[i];
      }
    }
    int n = streamHandles.length;
    streamHandles = Arrays.copyOf(streamHandles, n + 1);
    streamNames = Arrays.copyOf(streamNames, n + 1);
    streamHandles[n] = cudaStream;
    streamNames[n] = "stream " + (n + 1);
    return streamNames[n];
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
   * A synchronize of {@code cudaStream}, begun at {@code waitStart}, returned: what was recorded on it so far has
   * finished (stream order), and, after the own stream's ({@code ownStream}), what named no stream. While every
   * operation named one stream, that is everything recorded so far. Where exactly one collective was pending,
   * this rank's wait in it is recorded (see the class comment).
   */
  public void finishedOn(long cudaStream, boolean ownStream, long waitStart) {
    long now = System.nanoTime();
    long next = recorder.nextSequence();
    long timed = -1; // the one collective this synchronize finished, or -1 (none, or several: -2)
    for (long seq = Math.max(0, next - slotStream.length); seq < next; seq++) {
      long lane = slotStream[recorder.slot(seq)];
      boolean covered = onlyStream != -1 ? ownStream || onlyStream == cudaStream
          : lane == cudaStream || lane == 0 && ownStream;
      if (covered && recorder.pendingCollective(seq)) {
        timed = timed == -1 ? seq : -2;
      }
    }
    if (timed >= 0) {
      int slot = recorder.slot(timed);
      recorder.waited(timed, slotFenced[slot] + now - Math.max(waitStart, slotEnqueued[slot]));
    }
    if (onlyStream != -1) {
      if (ownStream || onlyStream == cudaStream) {
        recorder.finishedBefore(next, now);
      }
      return;
    }
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
