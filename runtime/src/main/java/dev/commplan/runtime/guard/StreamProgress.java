package dev.commplan.runtime.guard;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.Objects;

/**
 * How far a stream is known to be synchronized, for the host-access guard ({@link HostAccessGuard}).
 *
 * <p>Each plan execute on the stream takes the next ticket ({@link #issue()}). A {@code synchronize()}
 * reads {@link #issued()} when it starts and, only when it returns normally, records that ticket with
 * {@link #synchronizedTo}: all work of that ticket and before is then finished. A failed synchronize
 * records nothing, so buffers that failed work touched stay guarded. Two volatile longs; nothing
 * allocated.
 *
 * <p>Backends get one by building their stream on the SPI's {@code StreamBase}, which keeps it and
 * updates it around every {@code synchronize()}; plans do not guard buffers for a stream that does not.
 */
public final class StreamProgress {
  private static final VarHandle SYNCHRONIZED;

  static {
    try {
      SYNCHRONIZED = MethodHandles.lookup().findVarHandle(StreamProgress.class, "synchronizedTicket", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  private volatile Thread inOrderThread;
  private final CallGate gate;
  private volatile long issuedTicket;
  private volatile long synchronizedTicket;
  private volatile boolean closed;

  /** @param gate the stream's communicator's gate: plans hold it while they execute on the stream */
  public StreamProgress(CallGate gate) {
    this.gate = Objects.requireNonNull(gate, "gate");
  }

  /** The stream's communicator's gate ({@link CallGate}). */
  public CallGate gate() {
    return gate;
  }

  /**
   * Names the thread that runs the stream's work, in order (a backend's worker, whose host tasks run after
   * the work enqueued before them): host access from that thread is in stream order and is not refused. None
   * by default (a CUDA stream has no such thread); the local backend's workers are {@link StreamWorkerThread}s
   * instead, exempt on every stream.
   */
  public void runsInOrderOn(Thread worker) {
    this.inOrderThread = worker;
  }

  /** Takes the next ticket, for work about to be enqueued; called by the communicator's one thread. */
  public long issue() {
    long ticket = issuedTicket + 1;
    issuedTicket = ticket;
    return ticket;
  }

  /** Records that the stream was closed: it takes no more work, and no event can be recorded on it. */
  public void closed() {
    closed = true;
  }

  /** Whether the stream was closed ({@link #closed()}). */
  public boolean isClosed() {
    return closed;
  }

  /** The last ticket issued (0 before the first). */
  public long issued() {
    return issuedTicket;
  }

  /** Records that the work of every ticket up to {@code ticket} has finished; never moves backwards. */
  public void synchronizedTo(long ticket) {
    long current = synchronizedTicket;
    while (ticket > current && !SYNCHRONIZED.compareAndSet(this, current, ticket)) {
      current = synchronizedTicket;
    }
  }

  /** The ticket the stream is known to be synchronized up to (0 before the first synchronize). */
  public long synchronizedUpTo() {
    return synchronizedTicket;
  }

  /** Whether the work of {@code ticket} may still be running: no successful synchronize has covered it. */
  public boolean isPending(long ticket) {
    return ticket > synchronizedTicket;
  }

  /** Work to check once the stream is synchronized past it (the execute-order check reads its tags then). */
  @FunctionalInterface
  public interface AfterSynchronize {
    /** Runs on the synchronizing thread; throws to make the synchronize fail. */
    void verify();
  }

  private AfterSynchronize[] checks = new AfterSynchronize[4]; // guarded by this
  private long[] checkTickets = new long[4]; // guarded by this
  private int checkCount; // guarded by this

  /** Registers {@code check}, to run after the synchronize that covers {@code ticket}. */
  public synchronized void afterSynchronize(AfterSynchronize check, long ticket) {
    if (checkCount == checks.length) {
      checks = Arrays.copyOf(checks, checkCount * 2);
      checkTickets = Arrays.copyOf(checkTickets, checkCount * 2);
    }
    checks[checkCount] = check;
    checkTickets[checkCount++] = ticket;
  }

  /**
   * Runs, in registration order, every check whose ticket {@code ticket} covers, and forgets them; the first
   * failure is thrown after all due checks ran (the others suppressed). One at a time, taken under the lock,
   * so that it allocates nothing (the agreement check runs here every few dozen calls).
   */
  public void runChecks(long ticket) {
    RuntimeException failure = null;
    for (AfterSynchronize check = takeDue(ticket); check != null; check = takeDue(ticket)) {
      try {
        check.verify();
      } catch (RuntimeException e) {
        failure = Failures.add(failure, e);
      }
    }
    if (failure != null) {
      throw failure;
    }
  }

  /** Removes and returns the first registered check that {@code ticket} covers, or null. */
  private synchronized AfterSynchronize takeDue(long ticket) {
    for (int i = 0; i < checkCount; i++) {
      if (checkTickets[i] <= ticket) {
        AfterSynchronize due = checks[i];
        System.arraycopy(checks, i + 1, checks, i, checkCount - i - 1);
        System.arraycopy(checkTickets, i + 1, checkTickets, i, checkCount - i - 1);
        checks[--checkCount] = null;
        return due;
      }
    }
    return null;
  }

  /**
   * Whether the calling thread's access is device work, not the host's: the thread that runs this stream's
   * work in order, or any {@link StreamWorkerThread}.
   */
  public boolean isInStreamOrder() {
    return (inOrderThread != null && Thread.currentThread() == inOrderThread) || StreamWorkerThread.isCurrent();
  }

  @Override
  public String toString() {
    return "StreamProgress[issued " + issuedTicket + ", synchronized to " + synchronizedTicket + "]";
  }
}
