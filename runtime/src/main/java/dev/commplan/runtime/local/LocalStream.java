package dev.commplan.runtime.local;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.spi.StreamProgress;
import java.util.ArrayDeque;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A rank's stream on the local backend: one worker thread that runs enqueued work asynchronously and in
 * order, like a CUDA stream. Enqueueing returns at once; results are only guaranteed visible to the host
 * after {@link #synchronize()} (a read before it may well see the old data).
 *
 * <p>Errors are sticky, as on a GPU: once a piece of work fails, the work after it is discarded, every
 * later {@code synchronize()} throws that failure, and the cluster is aborted so that no other rank
 * waits for this one.
 */
public final class LocalStream implements Stream, StreamProgress.Tracked {
  /** A piece of host work run on the stream, in order with the collectives (like {@code cudaLaunchHostFunc}). */
  @FunctionalInterface
  public interface HostTask {
    void run() throws Exception;
  }

  /** Work the backend enqueues; runs on the worker thread. */
  @FunctionalInterface
  interface Work {
    void run(LocalStream stream) throws Exception;
  }

  private final LocalCommunicator comm;
  private final Thread worker;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition workAvailable = lock.newCondition();
  private final Condition progress = lock.newCondition();
  private final ArrayDeque<Work> queue = new ArrayDeque<>();
  private long enqueued;
  private long completed;
  private Throwable failure;
  private boolean shutDown;
  /** Host-access guard hook: how far this stream is synchronized (the worker's own accesses are in order). */
  private final StreamProgress hostAccessProgress;

  /** Scratch memory for the collectives' kernels; used only by the worker thread, allocated once. */
  final KernelScratch scratch = new KernelScratch();

  LocalStream(LocalCommunicator comm) {
    this.comm = comm;
    this.worker = Thread.ofPlatform()
        .name("commplan-local-stream-rank-" + comm.rank())
        .daemon(true)
        .unstarted(this::workLoop);
    this.hostAccessProgress = new StreamProgress(worker);
    worker.start();
  }

  @Override
  public StreamProgress progress() {
    return hostAccessProgress;
  }

  @Override
  public Communicator communicator() {
    return comm;
  }

  /**
   * Enqueues {@code task} to run on the stream's worker after everything enqueued before it; returns at
   * once. A task that throws fails the stream (see the class comment).
   */
  public void enqueueHostTask(HostTask task) {
    Objects.requireNonNull(task, "task");
    enqueue(stream -> task.run());
  }

  /**
   * Blocks until everything enqueued so far has run.
   *
   * @throws RankAbortedException if the cluster was aborted (the cause is the failing rank's exception)
   * @throws CommPlanException if enqueued work failed (the cause is that failure)
   * @throws IllegalStateException if called from a task running on this very stream (it would wait for itself)
   */
  @Override
  public void synchronize() {
    if (Thread.currentThread() == worker) {
      throw new IllegalStateException("synchronize() called from work running on rank " + comm.rank()
          + "'s own stream; it would wait for itself");
    }
    long ticket = hostAccessProgress.issued(); // host-access guard hook
    lock.lock();
    try {
      long target = enqueued;
      while (completed < target && failure == null && !shutDown) {
        try {
          progress.await();
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
          throw comm.cluster().abortedOr(
              new CommPlanException("rank " + comm.rank() + ": interrupted while synchronizing its stream", e));
        }
      }
      if (failure != null) {
        throw rethrowable(failure);
      }
      if (shutDown) { // use after close: refused even when nothing was pending
        throw new IllegalStateException("rank " + comm.rank() + "'s stream was shut down (its cluster is closed)");
      }
    } finally {
      lock.unlock();
    }
    hostAccessProgress.synchronizedTo(ticket); // host-access guard hook: reached only when nothing failed
  }

  /** A fresh exception for this caller, so that each throw has the synchronizing thread's stack. */
  private RuntimeException rethrowable(Throwable cause) {
    String message = "rank " + comm.rank() + "'s stream failed: " + cause.getMessage();
    return cause instanceof RankAbortedException
        ? new RankAbortedException(message, cause)
        : new CommPlanException(message, cause);
  }

  void enqueue(Work work) {
    lock.lock();
    try {
      if (shutDown) {
        throw new IllegalStateException("rank " + comm.rank() + "'s stream is shut down (its cluster is closed)");
      }
      queue.addLast(work);
      enqueued++;
      workAvailable.signal();
    } finally {
      lock.unlock();
    }
  }

  /** Marks the stream failed (if it has not failed already) and wakes whoever waits; for aborts. */
  void fail(Throwable cause) {
    lock.lock();
    try {
      if (failure == null) {
        failure = cause;
      }
      progress.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Interrupts whatever the worker is doing (a blocked host task, say); for aborts. */
  void interruptWorker() {
    if (Thread.currentThread() != worker) {
      worker.interrupt();
    }
  }

  /** Stops the worker: pending work is dropped; waits up to {@code timeoutMillis} for it to end. */
  void shutDown(long timeoutMillis) {
    lock.lock();
    try {
      shutDown = true;
      queue.clear();
      workAvailable.signalAll();
      progress.signalAll();
    } finally {
      lock.unlock();
    }
    worker.interrupt();
    if (Thread.currentThread() != worker) {
      try {
        worker.join(timeoutMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
  }

  /** Whether the stream's work has failed (sticky). */
  boolean hasFailed() {
    lock.lock();
    try {
      return failure != null;
    } finally {
      lock.unlock();
    }
  }

  private void workLoop() {
    while (true) {
      Work work;
      boolean skip;
      lock.lock();
      try {
        while (queue.isEmpty() && !shutDown) {
          workAvailable.awaitUninterruptibly();
        }
        if (shutDown) {
          return;
        }
        work = queue.pollFirst();
        skip = failure != null;
      } finally {
        lock.unlock();
      }
      Throwable thrown = null;
      if (!skip) {
        try {
          work.run(this);
        } catch (Throwable t) {
          thrown = t;
        }
      }
      Thread.interrupted(); // an abort's interrupt is for the work it hit, not for the next one
      lock.lock();
      try {
        completed++;
        if (thrown != null && failure == null) {
          failure = thrown;
        }
        progress.signalAll();
      } finally {
        lock.unlock();
      }
      if (thrown != null) {
        comm.cluster().abort(comm.rank(), thrown);
      }
    }
  }

  @Override
  public String toString() {
    return "LocalStream[rank " + comm.rank() + "]";
  }
}
