package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Stream;
import java.time.Duration;
import java.util.Arrays;
import java.util.Objects;

/**
 * The streams of one {@link MpiCommunicator} (its own first, then those {@code newStream()} made and not yet
 * closed) and the waits that complete what they have in flight.
 *
 * <p>Each stream has its own requests in flight; an enqueue completes only its own stream's (and the events
 * that stream was told to wait for), so work on two streams is in flight side by side. Collectives of one
 * communicator are started in the order the host enqueues them, whichever stream they are on, and every rank
 * must enqueue them in the same order, as MPI requires of its non-blocking collectives.
 */
final class MpiStreams {
  /** Replaced, never changed, so that the waits walk it without allocating (an iterator would). */
  private volatile MpiStream[] all;
  /** How many streams {@code newStream()} made: the next one's number. */
  private int made;

  MpiStreams(MpiStream own) {
    all = new MpiStream[] {own};
  }

  /** A new stream of {@code own}'s communicator, kept here until it is closed. */
  synchronized MpiStream open(Duration timeout) {
    MpiStream s = new MpiStream((MpiCommunicator) all[0].communicator(), timeout, ++made);
    MpiStream[] more = Arrays.copyOf(all, all.length + 1);
    more[all.length] = s;
    all = more;
    return s;
  }

  private synchronized void forget(MpiStream s) {
    all = Arrays.stream(all).filter(x -> x != s).toArray(MpiStream[]::new);
  }

  /**
   * Forgets {@code s}, closed by its user; when {@code canComplete} (the communicator and MPI are still
   * usable), first completes what it has in flight, within {@code waitNanos}.
   */
  void close(MpiStream s, boolean canComplete, long waitNanos) {
    try {
      if (canComplete) {
        complete(s, waitNanos);
      }
    } finally {
      if (s.inFlight.isEmpty()) {
        forget(s); // else its requests keep the communicator's memory from being freed, as the own stream's do
      }
    }
  }

  /** {@code target}, checked to be an open stream of {@code comm} (its own, or one {@code newStream()} made). */
  MpiStream of(MpiCommunicator comm, Stream target) {
    Objects.requireNonNull(target, "stream");
    if (target instanceof MpiStream s && s.communicator() == comm) {
      if (s.closedByUser()) {
        throw new IllegalStateException(comm.rankText() + ": " + s + " is closed");
      }
      return s;
    }
    throw new IllegalArgumentException(comm.rankText() + ": a schedule compiled for this communicator runs on a"
        + " stream of it (stream() or one newStream() made), not on " + target);
  }

  /** Whether no stream has requests in flight. */
  boolean idle() {
    for (MpiStream s : all) {
      if (!s.inFlight.isEmpty()) {
        return false;
      }
    }
    return true;
  }

  /** Completes what every stream has in flight, and the events each waits for, within {@code waitNanos} each. */
  void completeAll(long waitNanos) {
    for (MpiStream s : all) {
      complete(s, waitNanos);
    }
  }

  /** Completes the events {@code s} waits for, then what it has in flight, within {@code waitNanos} each. */
  static void complete(MpiStream s, long waitNanos) {
    s.completeWaits(waitNanos);
    s.inFlight.complete(waitNanos);
  }
}
