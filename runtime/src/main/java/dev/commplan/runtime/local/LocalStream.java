package dev.commplan.runtime.local;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.guard.StreamWorkerThread;
import dev.commplan.runtime.spi.EventBase;
import dev.commplan.runtime.spi.FlightRecorder;
import dev.commplan.runtime.spi.OperationLabel;
import dev.commplan.runtime.spi.StreamBase;
import java.time.Duration;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.locks.Condition;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A rank's stream on the local backend: one worker thread that runs enqueued work asynchronously and in
 * order, like a CUDA stream. Enqueueing returns at once; results are only guaranteed visible to the host
 * after {@link #synchronize()} (a read before it may well see the old data).
 *
 * <p>Errors are sticky, as on a GPU: once a piece of work fails, the work after it is discarded and every
 * later {@code synchronize()} throws that failure. The cluster is aborted when the failure leaves other ranks
 * waiting for this one: a collective, send or receive that fails, or that is discarded because the stream
 * failed before it. A host task that throws (caught by its rank at {@code synchronize()}) fails the stream
 * alone.
 *
 * <p>Nothing waits forever: a collective waits for the other ranks at most the cluster's timeout ({@link
 * LocalCluster#timeout()}), and {@code synchronize()} gives up with {@link CommTimeoutException} when the
 * stream has made no progress for the timeout plus a quarter (at most one second more), which catches a
 * host task that hangs; the collective's own timeout, with the better message, normally comes first.
 * Every enqueued piece of work is recorded in the stream's {@link FlightRecorder}.
 *
 * <p>A communicator has its own stream and may make more ({@code newStream()}), each a worker of its own.
 * A collective takes its number in its communicator's sequence when it is enqueued, not when it runs, so
 * that collectives on several streams of one communicator meet their peers' in the order the host
 * enqueued them (as NCCL orders a communicator's calls), whichever worker gets there first. An event
 * ({@link #record()}) is a place in the queue: it is done once the worker has run everything before it;
 * {@link #waitFor} enqueues an item that blocks this worker, not the host, until the event is done (at
 * most the timeout).
 */
public final class LocalStream extends StreamBase {
  /** A piece of host work run on the stream, in order with the collectives (like {@code cudaLaunchHostFunc}). */
  @FunctionalInterface
  public interface HostTask {
    /**
     * Runs the task on the stream's worker thread.
     *
     * @throws Exception any failure, which fails the stream: its next {@code synchronize()} throws it
     */
    void run() throws Exception;
  }

  /** Work the backend enqueues; runs on the worker thread. */
  @FunctionalInterface
  interface Work {
    /**
     * Runs the work on {@code stream}'s worker.
     *
     * @param sequence its number in the sequence of {@link #sequencedBy()}, taken when it was enqueued; -1
     *     for work that takes none
     */
    void run(LocalStream stream, long sequence) throws Exception;

    /** What the flight record calls it. */
    default OperationLabel label() {
      return HOST_TASK;
    }

    /** The communicator whose collective sequence this work takes a number of when enqueued, or null. */
    default LocalCommunicator sequencedBy() {
      return null;
    }

    /**
     * Whether other ranks wait for this work (a collective, a send or receive): if it fails, or is skipped
     * because the stream failed before it, the cluster is aborted so that they do not wait for nothing. Host
     * tasks and waits for events involve no other rank: their failure fails this stream alone (sticky).
     */
    default boolean peersWaitForIt() {
      return true;
    }
  }

  private static final OperationLabel HOST_TASK = OperationLabel.local("host task");

  private final LocalCommunicator comm;
  private final Thread worker;
  private final ReentrantLock lock = new ReentrantLock();
  private final Condition workAvailable = lock.newCondition();
  private final Condition progress = lock.newCondition();
  /** The work not yet taken by the worker, with each item's sequence number. */
  private final LocalWorkQueue queue = new LocalWorkQueue();
  private long enqueued;
  private long completed;
  private Throwable failure;
  /** The stream whose event this stream's worker waits for now ({@link #awaitOnWorker}), or null. */
  private volatile LocalStream waitingOn;
  /** The first item the failure kept from completing (the failed one, or the next after an abort). */
  private long failedAt = Long.MAX_VALUE;
  private boolean shutDown;
  /** Closed by its user ({@code close()} of a stream {@code newStream()} made): the worker ends once idle. */
  private boolean draining;

  /** Scratch memory for the collectives' kernels; used only by the worker thread, allocated once. */
  final KernelScratch scratch = new KernelScratch();

  /** The rank's last operations; see {@link LocalCommunicator#flightRecorder()}. */
  final FlightRecorder recorder;

  /** The stream's number among its communicator's: 0 for its own, 1, 2, ... for those {@code newStream()} made. */
  private final int index;

  /**
   * How long this rank waited for its peers in the work the worker is running (a collective's arrival to the
   * last rank's arrival, {@link LocalRendezvous}), or -1; written and read by the worker only.
   */
  private long waited = -1;
  /**
   * When the collective the worker runs arrived at its rendezvous ({@code System.nanoTime()}), for its wait;
   * written by the worker there, holding the rendezvous' lock, and read by it.
   */
  long arrivedNanos;

  LocalStream(LocalCommunicator comm, Duration timeout, int index) {
    super(comm, timeout);
    this.comm = comm;
    this.index = index;
    this.recorder = comm.flightGroup().recorder("stream " + index);
    // device work: no access of its is refused by the host-access guard (StreamWorkerThread says why)
    this.worker = new StreamWorkerThread(this::workLoop, "commplan-local-stream-rank-" + comm.worldRank()
        + (index == 0 ? "" : "-" + index) + (comm.group().isWorld() ? "" : " (" + comm.group().label + ")"));
    worker.start();
  }

  /**
   * Enqueues {@code task} to run on the stream's worker after everything enqueued before it; returns at
   * once. A task that throws fails the stream (see the class comment).
   *
   * @param task the work, run once on the worker thread
   */
  public void enqueueHostTask(HostTask task) {
    Objects.requireNonNull(task, "task");
    enqueue(new Work() {
      @Override
      public void run(LocalStream stream, long sequence) throws Exception {
        task.run();
      }

      @Override
      public boolean peersWaitForIt() {
        return false;
      }
    });
  }

  /**
   * Blocks until everything enqueued so far has run.
   *
   * @throws RankAbortedException if the cluster was aborted (the cause is the failing rank's exception)
   * @throws CommTimeoutException if a collective of this rank timed out, or the stream made no progress
   *     for longer than the timeout (see the class comment); the cluster is aborted
   * @throws CommPlanException if enqueued work failed (the cause is that failure)
   * @throws IllegalStateException if called from a task running on this very stream (it would wait for itself)
   */
  @Override
  protected void awaitIdle(Duration timeout) {
    lock.lock();
    long target;
    try {
      target = enqueued;
    } finally {
      lock.unlock();
    }
    awaitCompleted(target, timeout, "synchronize()");
  }

  /**
   * Blocks until the worker has run the first {@code target} items (a synchronize: everything enqueued; an
   * event: what was enqueued before it), with {@link #awaitIdle}'s failures and stall limit.
   */
  void awaitCompleted(long target, Duration timeout, String what) {
    if (Thread.currentThread() == worker) {
      throw new IllegalStateException(what + " called from work running on " + who()
          + "'s own stream; it would wait for itself");
    }
    CommTimeoutException stalled = null;
    lock.lock();
    try {
      long stallLimit = stallLimitNanos(timeout);
      long seen = completed;
      long lastProgress = System.nanoTime();
      while (completed < target && failure == null && !shutDown) {
        long now = System.nanoTime();
        if (completed != seen) {
          seen = completed;
          lastProgress = now;
        }
        long left = lastProgress + stallLimit - now;
        if (left <= 0) {
          stalled = stalled(now - lastProgress);
          failure = stalled;
          failedAt = completed;
          progress.signalAll();
          break;
        }
        try {
          progress.awaitNanos(left);
        } catch (InterruptedException e) {
          // An abort interrupts this thread, often because a peer timed out at the very collective this
          // stream is failing at: give the stream a moment to report its own failure, which says more.
          awaitFailureBriefly(target);
          Thread.currentThread().interrupt();
          if (failure != null) {
            throw rethrowable(failure);
          }
          throw comm.cluster().abortedOr(
              new CommPlanException(who() + ": interrupted while synchronizing its stream", e));
        }
      }
      if (stalled == null) {
        if (failure != null) {
          throw rethrowable(failure);
        }
        if (shutDown) { // use after close: refused even when nothing was pending
          throw new IllegalStateException(who() + "'s stream was shut down (its cluster is closed)");
        }
        return;
      }
    } finally {
      lock.unlock();
    }
    comm.cluster().abort(comm.worldRank(), stalled); // outside the lock: the abort fails every stream
    throw new CommTimeoutException(stalled);
  }

  /** Waits (uninterruptibly, at most 200 ms; the lock held) for the stream to fail or finish {@code target}. */
  private void awaitFailureBriefly(long target) {
    long deadline = System.nanoTime() + 200_000_000L;
    long left;
    while (failure == null && completed < target && !shutDown && (left = deadline - System.nanoTime()) > 0) {
      try {
        progress.awaitNanos(left);
      } catch (InterruptedException again) {
        // keep waiting the short while; the caller restores the interrupt
      }
    }
  }

  /** The timeout plus a quarter, at most one second more: the collectives' own timeout goes first. */
  static long stallLimitNanos(Duration timeout) {
    long t = timeout.toNanos();
    return t + Math.min(t / 4, 1_000_000_000L);
  }

  /**
   * The timeout of a stream that made no progress for {@code waitedNanos}: it names what the stream was running,
   * or, where its worker waits for an event of another stream, that wait and what the other stream was running
   * (its plan, step and fields), which is what never finished.
   */
  private CommTimeoutException stalled(long waitedNanos) {
    LocalStream origin = waitingOn;
    FlightRecorder.Entry pending = (origin != null ? origin.recorder : recorder).oldestPending();
    OperationLabel what = pending != null ? pending.label() : HOST_TASK;
    Duration timeout = comm.cluster().timeout();
    String summary = "local backend: " + who() + " timed out after " + timeout + ": "
        + (origin != null ? "it waited for an event of " + origin + ", whose stream" : "its stream")
        + " made no progress for " + Duration.ofNanos(waitedNanos) + " while running " + what
        + (pending != null ? " (operation #" + pending.sequence() + ")" : "")
        + " (a host task that blocks, or work that waits for something that never comes); the cluster is aborted";
    return new CommTimeoutException(summary, what.planName(), what.step(), what.collective(), what.fields(),
        comm.rank(), timeout, List.of(), recorder.format(), null);
  }

  /** A fresh exception for this caller, so that each throw has the synchronizing thread's stack. */
  private RuntimeException rethrowable(Throwable cause) {
    if (cause instanceof CommTimeoutException timeout) {
      return new CommTimeoutException(timeout);
    }
    if (cause instanceof DisagreementException d) { // the agreement check's words, as on every backend: unwrapped
      DisagreementException again = new DisagreementException(d.getMessage(), d.thisRank(), d.otherRank(),
          d.differingRanks(), d.differingFields());
      again.initCause(d);
      return again;
    }
    String message = who() + "'s stream failed: " + cause.getMessage();
    return cause instanceof RankAbortedException
        ? new RankAbortedException(message, cause)
        : new CommPlanException(message, cause);
  }

  /**
   * Puts {@code work} at the end of the queue, with the next number of its communicator's collective
   * sequence if it takes one (taken here, in the order the host enqueues, whichever stream it goes to).
   */
  void enqueue(Work work) {
    lock.lock();
    try {
      if (shutDown || draining) {
        throw new IllegalStateException(who() + "'s stream is " + (draining ? "closed" : "shut down (its cluster is"
            + " closed)"));
      }
      LocalCommunicator sequence = work.sequencedBy();
      queue.add(work, sequence == null ? -1 : sequence.takeSequenceNumber());
      recorder.enqueued(work.label(), System.nanoTime()); // its sequence number is `enqueued`, the work's index
      enqueued++;
      workAvailable.signal();
    } finally {
      lock.unlock();
    }
  }

  /** {@inheritDoc} Here: a place in the queue, done once the worker has run everything enqueued before it. */
  @Override
  protected EventBase recordEvent() {
    lock.lock();
    try {
      return new LocalEvent(this, enqueued);
    } finally {
      lock.unlock();
    }
  }

  /** {@inheritDoc} Here: an item that blocks this stream's worker until the event is done, at most the timeout. */
  @Override
  protected void waitForEvent(EventBase event) {
    enqueue(((LocalEvent) event).waitItem(this)); // checked by StreamBase: a local stream's event
  }

  /**
   * {@inheritDoc} Here: the worker runs what is queued, then ends; when the communicator is closing, it stops
   * at once and the queue is dropped, as with the communicator's own stream.
   */
  @Override
  protected void closeStream() {
    if (comm.isClosed()) {
      shutDown(comm.cluster().timeout().toMillis());
      return;
    }
    comm.draining(this); // until its worker ends, an abort or the communicator's close still reaches it
    comm.flightGroup().detach(recorder); // closed by its user: its operations leave the record
    lock.lock();
    try {
      draining = true;
      workAvailable.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** Whether the worker has run the first {@code target} items; a failure or shutdown also ends the wait. */
  boolean hasCompleted(long target) {
    lock.lock();
    try {
      return completed >= target || failedAt < target || shutDown;
    } finally {
      lock.unlock();
    }
  }

  /**
   * Blocks this (another stream's) worker until the worker of this stream has run the first {@code target}
   * items; throws if this stream failed or was shut down first. This stream's own work has its own timeouts (a
   * collective's names its plan, step or bucket, fields and the ranks that never came), and its failure is
   * rethrown here as it is, so the wait gives up on its own only where this stream makes no progress for
   * {@link #stallLimitNanos} of {@code timeout} (a host task that blocks), naming what this stream was running.
   */
  void awaitOnWorker(long target, Duration timeout, LocalStream waiting) throws InterruptedException {
    lock.lock();
    waiting.waitingOn = this;
    try {
      long stallLimit = stallLimitNanos(timeout);
      long seen = completed;
      long lastProgress = System.nanoTime();
      while (completed < target || failedAt < target) {
        if (failedAt < target) {
          if (failure instanceof CommTimeoutException timedOut) {
            throw new CommTimeoutException(timedOut); // what this stream's work waited for, in its own words
          }
          throw new CommPlanException(waiting.who() + "'s stream waited for an event of " + this + ", whose work"
              + " failed: " + failure.getMessage(), failure);
        }
        if (shutDown) {
          throw new IllegalStateException(waiting.who() + "'s stream waited for an event of " + this + ", which was"
              + " shut down (its cluster is closed)");
        }
        long now = System.nanoTime();
        if (completed != seen) {
          seen = completed;
          lastProgress = now;
        }
        long left = lastProgress + stallLimit - now;
        if (left <= 0) {
          throw waiting.stalled(now - lastProgress);
        }
        progress.awaitNanos(left);
      }
    } finally {
      waiting.waitingOn = null;
      lock.unlock();
    }
  }

  /**
   * Marks the stream failed (if it has not failed already) and wakes whoever waits; for aborts, and for the
   * peers of a collective that timed out. An abort that finds the worker waiting for an event of a stream
   * whose work timed out fails this stream with that timeout instead: it says what the wait waited for (the
   * plan, bucket, fields and missing ranks), the abort only that a rank failed.
   */
  void fail(Throwable cause) {
    LocalStream origin = waitingOn;
    Throwable originFailure = origin == null || !(cause instanceof RankAbortedException) ? null : origin.failure();
    Throwable reported = originFailure instanceof CommTimeoutException timedOut ? new CommTimeoutException(timedOut)
        : cause;
    lock.lock();
    try {
      if (failure == null) {
        failure = reported;
        failedAt = completed;
      }
      progress.signalAll();
    } finally {
      lock.unlock();
    }
  }

  /** The stream's failure, or null. */
  private Throwable failure() {
    lock.lock();
    try {
      return failure;
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

  /** The worker thread, for tests of its lifecycle. */
  Thread worker() {
    return worker;
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

  /** The worker's loop: takes each item in order and runs it, or skips it once the stream has failed. */
  private void workLoop() {
    while (true) {
      Work work;
      long sequence;
      long index;
      boolean skip;
      lock.lock();
      try {
        if (!awaitWork()) {
          return;
        }
        sequence = queue.firstSequence();
        work = queue.removeFirst();
        index = completed;
        skip = failure != null;
      } finally {
        lock.unlock();
      }
      Throwable thrown = null;
      if (skip) {
        recorder.failed(index, System.nanoTime()); // skipped: the stream had already failed
      } else {
        thrown = run(work, sequence, index);
      }
      Thread.interrupted(); // an abort's interrupt is for the work it hit, not for the next one
      completed(work, index, thrown, skip);
    }
  }

  /**
   * Waits, the lock held, until there is work to take; returns false when the worker ends instead: the stream
   * was shut down, or closed by its user with nothing left to run (then its communicator is told).
   */
  private boolean awaitWork() {
    while (queue.isEmpty() && !shutDown && !draining) {
      workAvailable.awaitUninterruptibly();
    }
    if (shutDown || queue.isEmpty()) {
      if (!shutDown) {
        comm.drained(this);
      }
      return false;
    }
    return true;
  }

  /** Runs item {@code index} of the stream, recording it in the flight record; returns what it threw, or null. */
  private Throwable run(Work work, long sequence, long index) {
    recorder.started(index, System.nanoTime());
    waited = -1;
    try {
      work.run(this, sequence);
    } catch (Throwable t) {
      recorder.failed(index, System.nanoTime());
      return t;
    }
    recorder.finished(index, System.nanoTime(), waited);
    return null;
  }

  /** The work the worker runs waited {@code nanos} for its peers (its collective's rendezvous says so). */
  void waited(long nanos) {
    waited = nanos;
  }

  /**
   * Item {@code index} ended ({@code thrown}: its failure, or null; {@code skipped}: not run, as the stream had
   * failed): the waits see the progress, its failure becomes the stream's if it is the first, and the cluster is
   * aborted where the failure leaves other ranks waiting in this work.
   */
  private void completed(Work work, long index, Throwable thrown, boolean skipped) {
    Throwable strandsPeers = null;
    lock.lock();
    try {
      completed++;
      if (thrown != null && failure == null) {
        failure = thrown;
        failedAt = index;
      }
      if ((thrown != null || skipped) && work.peersWaitForIt()) {
        strandsPeers = thrown != null ? thrown : failure;
      }
      progress.signalAll();
    } finally {
      lock.unlock();
    }
    if (strandsPeers != null) {
      comm.cluster().abort(comm.worldRank(), strandsPeers);
    }
  }

  @Override
  public String toString() {
    return "LocalStream[" + who() + "]";
  }

  /**
   * {@code rank 3}, {@code rank 1 of axis tp of mesh [dp=2, tp=2]} for a split group's stream, with {@code
   * (stream 2)} for one {@code newStream()} made.
   */
  String who() {
    return comm.group().rankText(comm.rank()) + (index == 0 ? "" : " (stream " + index + ")");
  }
}
