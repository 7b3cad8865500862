package dev.commplan.samples;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.local.LocalStream;

/**
 * Where a rank's host compute runs. On the local backend, on the stream's worker thread in stream order
 * ({@link LocalStream#enqueueHostTask}, like {@code cudaLaunchHostFunc}), so that it overlaps with
 * communication on another stream as GPU kernels would; elsewhere (MPI, whose streams run no host work),
 * at once on the calling thread, the rank's.
 */
interface HostQueue {
  /** Runs {@code work} after everything enqueued before it. */
  void submit(Runnable work);

  /**
   * Runs {@code work}, which reads what the plan reduced, after the reduction: in stream order where the
   * stream runs host work; else after {@code synchronize()}, which waits for the communication.
   */
  void submitAfterCommunication(Runnable work);

  /** The queue of {@code stream}: ordered on a local stream, inline otherwise. */
  static HostQueue of(Stream stream) {
    if (stream instanceof LocalStream local) {
      return new HostQueue() {
        @Override
        public void submit(Runnable work) {
          local.enqueueHostTask(work::run);
        }

        @Override
        public void submitAfterCommunication(Runnable work) {
          local.enqueueHostTask(work::run);
        }
      };
    }
    return new HostQueue() {
      @Override
      public void submit(Runnable work) {
        work.run();
      }

      @Override
      public void submitAfterCommunication(Runnable work) {
        stream.synchronize();
        work.run();
      }
    };
  }
}
