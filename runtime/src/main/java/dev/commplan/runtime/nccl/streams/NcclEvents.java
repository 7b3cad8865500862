package dev.commplan.runtime.nccl.streams;

import dev.commplan.runtime.nccl.binding.CheckedCuda;
import java.lang.ref.Cleaner;
import java.util.Arrays;
import java.util.List;

/**
 * The CUDA events behind one communicator's {@link dev.commplan.runtime.Event}s ({@code
 * cudaEventCreateWithFlags(cudaEventDisableTiming)}: for ordering only). {@code Event} has no close, so an
 * event's {@code cudaEvent_t} comes back here when the Java object becomes unreachable (the JDK's {@link
 * Cleaner}, one thread for the backend) and is recorded again by a later {@code record()}: a training loop
 * that records a few events per step creates none once it runs. Reusing a handle is safe: a {@code
 * cudaStreamWaitEvent} already issued waits for the record it saw, not for a later one ({@code
 * cudaStreamWaitEvent}'s documented meaning), and nothing can ask the old object any more. {@link
 * #destroyAll()}, when the communicator is released, destroys every handle it made; an event still held then
 * is refused by its communicator's usable check before it touches its handle.
 */
public final class NcclEvents {
  private static final Cleaner CLEANER = Cleaner.create(r -> {
    Thread t = new Thread(r, "commplan-nccl-event-cleaner");
    t.setDaemon(true);
    return t;
  });

  private final int device;
  private long[] free = new long[8]; // guarded by this
  private int freeCount; // guarded by this
  private long[] made = new long[8]; // guarded by this
  private int madeCount; // guarded by this
  private boolean destroyed; // guarded by this

  public NcclEvents(int device) {
    this.device = device;
  }

  /** A {@code cudaEvent_t} of this communicator's device: one given back, or a new one. */
  long take() {
    long handle;
    synchronized (this) {
      if (destroyed) {
        throw new IllegalStateException("the events of device " + device + "'s communicator were destroyed");
      }
      handle = freeCount > 0 ? free[--freeCount] : 0;
    }
    if (handle == 0) {
      CheckedCuda.cudaSetDevice(device);
      handle = CheckedCuda.cudaEventCreateDisableTiming();
      synchronized (this) {
        if (madeCount == made.length) {
          made = Arrays.copyOf(made, madeCount * 2);
        }
        made[madeCount++] = handle;
      }
    }
    return handle;
  }

  /** Gives {@code handle} back once {@code owner}, the event object that holds it, has become unreachable. */
  void giveBackWhenUnreachable(Object owner, long handle) {
    CLEANER.register(owner, () -> giveBack(handle));
  }

  /** Gives {@code handle} back at once: no event object holds it (its record failed, or {@link #makeWait}). */
  synchronized void giveBack(long handle) {
    if (destroyed) {
      return; // destroyed with the rest
    }
    if (freeCount == free.length) {
      free = Arrays.copyOf(free, freeCount * 2);
    }
    free[freeCount++] = handle;
  }

  /** Destroys every event this communicator made (best effort, once): the communicator is being released. */
  public synchronized void destroyAll() {
    if (destroyed) {
      return;
    }
    destroyed = true;
    for (int i = 0; i < madeCount; i++) {
      CheckedCuda.cudaEventDestroyQuietly(made[i]); // pending records complete first (cudaEventDestroy's meaning)
    }
    madeCount = 0;
    freeCount = 0;
  }

  /**
   * Makes {@code waiter} wait on the device for the work enqueued so far on each of {@code streams}: an event
   * of the pool recorded on each, then {@code cudaStreamWaitEvent}, which captures that record at once, so
   * the event goes back to the pool right after. The host does not wait.
   */
  public void makeWait(long waiter, List<Long> streams) {
    for (long s : streams) {
      long event = take();
      try {
        CheckedCuda.cudaEventRecord(event, s);
        CheckedCuda.cudaStreamWaitEvent(waiter, event);
      } finally {
        giveBack(event);
      }
    }
  }
}
