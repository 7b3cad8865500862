package dev.commplan.runtime.guard;

/**
 * A thread that runs only a stream's work, in stream order (the local backend's stream workers: its kernels
 * and the host tasks users enqueue, which stand for GPU kernels). What such a thread does to a buffer is
 * device work, ordered by streams and events, which the runtime enforces; the host-access guard checks the
 * host's own accesses, and on a GPU it never sees a kernel either. So no access from one of these threads is
 * refused, whichever stream's work holds the buffer: a producer's host task that writes a gradient before the
 * bucket waiting for it (through {@code ready}'s event) runs, say.
 */
public final class StreamWorkerThread extends Thread {
  /**
   * @param work the stream's work loop
   * @param name the thread's name
   */
  public StreamWorkerThread(Runnable work, String name) {
    super(work, name);
    setDaemon(true);
  }

  /** Whether the calling thread runs stream work only. */
  public static boolean isCurrent() {
    return Thread.currentThread() instanceof StreamWorkerThread;
  }
}
