package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.spi.FlightRecorder;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.Arrays;
import java.util.concurrent.locks.LockSupport;

/**
 * What one stream of a communicator has in flight: steps of call tables, started and not yet completed, in
 * start order; and the wait that completes them ({@link #complete}). The wait polls {@code MPI_Testall},
 * which is also what makes Open MPI progress, and between bursts of polls looks at the clock and at the
 * family's notices (another rank's failure ends the wait at once, see {@link MpiFamily}).
 *
 * <p>Each step is recorded in the stream's flight recorder when it starts (MPI starts a non-blocking call when
 * it is issued), and finished there when a wait completes it, with how long this rank waited in it for its
 * peers: what the host sees, from when the wait began (or the step started, if later) to when {@code
 * MPI_Testall} said it was done. A step completed by a test that did not wait ({@link #testTo}: an event's
 * {@code isDone()}) has no wait recorded. Recording allocates nothing.
 */
final class MpiInFlight {
  /** Polls between two looks at the clock and the notices (a poll is a fraction of a microsecond). */
  private static final int POLL_BURST = 32;

  private final MpiCommunicator comm;
  /** The stream's flight recorder. */
  private final FlightRecorder recorder;
  private final MemorySegment flag = Arena.ofAuto().allocate(JAVA_INT);
  private final boolean yieldWhenIdle = MpiRuntime.yieldWhenIdle();
  private MpiCallTable[] tables = new MpiCallTable[8];
  private int[] steps = new int[8];
  /** Each step's sequence number in the recorder, and when it started. */
  private long[] recorded = new long[8];
  private long[] startedAt = new long[8];
  private int count;
  /** How many steps were ever added, and how many of them have completed (in start order). */
  private long started;
  private long finished;
  /**
   * Positive inside {@link #completingDespiteNotices}: how long after a notice the calls in flight may still
   * complete.
   */
  private long noticeGraceNanos;
  /** The notice that will end the current wait once the grace after it has passed, and when it came. */
  private MpiNotice putOff;
  private long putOffAt;

  MpiInFlight(MpiCommunicator comm, FlightRecorder recorder) {
    this.comm = comm;
    this.recorder = recorder;
  }

  /** {@return the stream's flight recorder} */
  FlightRecorder recorder() {
    return recorder;
  }

  boolean isEmpty() {
    return count == 0;
  }

  void add(MpiCallTable table, int step) {
    if (count == tables.length) {
      tables = Arrays.copyOf(tables, count * 2);
      steps = Arrays.copyOf(steps, count * 2);
      recorded = Arrays.copyOf(recorded, count * 2);
      startedAt = Arrays.copyOf(startedAt, count * 2);
    }
    long now = System.nanoTime();
    tables[count] = table;
    steps[count] = step;
    startedAt[count] = now;
    recorded[count] = table.record(step, recorder, now);
    count++;
    started++;
  }

  /** The step just added could not be started: its record says it failed. */
  void lastFailed() {
    recorder.failed(recorded[count - 1], System.nanoTime());
  }

  /** {@return how many steps were ever added: an event of the stream stands for those} */
  long started() {
    return started;
  }

  /** {@return whether the first {@code target} steps ever added have completed} */
  boolean reached(long target) {
    return finished >= target;
  }

  /**
   * Where this rank has not looked for a while ({@link MpiFamily#due}) at {@code now}: another rank's notice
   * ends what it is about to do ({@code doing} step {@code step} of {@code table}) with a {@link
   * RankAbortedException}. Called when a wait starts, before it can return: a rank back from far away fails
   * there, even if the calls it started completed against what its peers left behind.
   */
  private void lookForNotices(MpiCallTable table, int step, String doing, long now) {
    if (!comm.family().due(now)) {
      return;
    }
    MpiNotice notice;
    MpiRuntime.LOCK.lock();
    try {
      notice = MpiRuntime.isInitialized() ? comm.family().poll() : null;
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    endIfNoticed(notice, table, step, doing, now);
  }

  /**
   * Runs {@code waits}, in which another rank's notice ends a wait only when the calls in flight have not
   * completed within {@code graceNanos} of it. For the exchange before a blocking MPI call that every rank
   * of the group must make ({@code MPI_Comm_split}, which has no timeout): a peer whose exchange completed
   * before the notice reached it is inside that call already, and only this rank joining it lets it out.
   * Every rank that started the exchange completes it within the grace (it needs no more than their
   * starts), so they all make the call; if one never started it, no rank completes it, and none does.
   *
   * @return the notice put off while the calls completed, or null: the caller makes the blocking call, then
   *     gives up with it
   */
  MpiNotice completingDespiteNotices(long graceNanos, Runnable waits) {
    noticeGraceNanos = graceNanos;
    try {
      waits.run();
      return putOff;
    } finally {
      noticeGraceNanos = 0;
      putOff = null;
    }
  }

  /**
   * A notice (or one put off before, when {@code notice} is null) ends the wait for step {@code step} of
   * {@code table}, at once or, while notices are put off, once the grace after it has passed.
   */
  private void endIfNoticed(MpiNotice notice, MpiCallTable table, int step, String doing, long now) {
    if (notice != null && notice.outranks(putOff)) {
      putOffAt = putOff == null ? now : putOffAt; // the grace counts from the first notice
      putOff = notice;
    }
    if (putOff != null && (noticeGraceNanos == 0 || now - putOffAt > noticeGraceNanos)) {
      MpiNotice ending = putOff;
      putOff = null;
      MpiRuntime.LOCK.lock();
      try {
        throw comm.family().gaveUp(comm, doing + table.describeStep(step), ending);
      } finally {
        MpiRuntime.LOCK.unlock();
      }
    }
  }

  /** Each step in flight, one a line, for messages. */
  String describe() {
    StringBuilder pending = new StringBuilder();
    for (int k = 0; k < count; k++) {
      pending.append("\n  ").append(tables[k].describeStep(steps[k]));
    }
    return pending.toString();
  }

  /**
   * Completes everything in flight, in start order, within {@code waitNanos}: polls back to back, as {@code
   * MPI_Wait} does, for the first second (yielding the core between polls after 20 µs where mpirun
   * oversubscribed the cores, as Open MPI's {@code mpi_yield_when_idle} does), then with 50 µs sleeps.
   *
   * @throws MpiException if MPI reported an error for a call (the communicator's family fails with it)
   * @throws RankAbortedException if another rank of the family said it failed
   */
  void complete(long waitNanos) {
    completeTo(started, waitNanos);
  }

  /**
   * {@link #complete}, but only the first {@code target} steps ever added (an event: what was in flight when it
   * was recorded); the later ones stay in flight.
   */
  void completeTo(long target, long waitNanos) {
    if (finished >= target) {
      return;
    }
    long start = System.nanoTime();
    lookForNotices(tables[0], steps[0], "waiting for ", start);
    long deadline = start + waitNanos;
    long since = start; // this rank waits from here for the first step, and from each completion for the next
    long flagAddress = flag.address();
    MpiFamily family = comm.family();
    while (finished < target) {
      MpiCallTable table = tables[0];
      int step = steps[0];
      int polls = POLL_BURST;
      while (true) {
        int rc = Mpi.SUCCESS;
        int done = 0;
        MpiNotice notice = null;
        MpiRuntime.LOCK.lock(); // once per burst of polls: the lock is for the shutdown hook, not for speed
        try {
          comm.requireMpiAlive();
          for (int k = 0; k < polls && done == 0 && rc == Mpi.SUCCESS; k++) {
            rc = table.test(step, flagAddress);
            done = flag.get(JAVA_INT, 0);
          }
          if (rc != Mpi.SUCCESS) {
            throw failed(table, step, rc);
          }
          if (done != 0) {
            table.ended(step); // MPI freed the requests: their communicators may be freed
          } else {
            notice = family.poll();
          }
        } finally {
          MpiRuntime.LOCK.unlock();
        }
        if (done != 0) {
          since = recordWait(since);
          break;
        }
        long now = System.nanoTime();
        endIfNoticed(notice, table, step, "waiting for ", now);
        if (now - deadline > 0) {
          comm.timedOut(now - start, describe(), table, step);
        }
        long waited = now - start;
        if (waited >= 1_000_000_000L) { // most likely a late or dead peer: do not burn a core until the deadline
          polls = 1;
          LockSupport.parkNanos(50_000L);
        } else if (yieldWhenIdle && waited >= 20_000L) {
          polls = 1;
          Thread.yield();
        }
      }
      removeFirst();
      table.finish(step);
      comm.completed(table);
    }
  }

  /**
   * Tests, without waiting, the steps in flight in start order until one is not done or the first {@code
   * target} have completed; for an event's {@code isDone()}. Errors fail the family, as in {@link #complete}.
   *
   * @return whether the first {@code target} steps have completed
   */
  boolean testTo(long target) {
    long flagAddress = flag.address();
    while (finished < target) {
      MpiCallTable table = tables[0];
      int step = steps[0];
      MpiRuntime.LOCK.lock();
      try {
        comm.requireMpiAlive();
        int rc = table.test(step, flagAddress);
        if (rc != Mpi.SUCCESS) {
          throw failed(table, step, rc);
        }
        if (flag.get(JAVA_INT, 0) == 0) {
          return false;
        }
      } finally {
        MpiRuntime.LOCK.unlock();
      }
      recorder.finished(recorded[0], System.nanoTime()); // done when tested; how long the rank waited is not known
      removeFirst();
      table.finish(step);
      comm.completed(table);
    }
    return true;
  }

  /**
   * The first step in flight just completed: records it finished, with how long this rank waited in it, from
   * {@code since} or from its start, whichever is later; returns the time now, where the next step's wait begins.
   */
  private long recordWait(long since) {
    long now = System.nanoTime();
    recorder.finished(recorded[0], now, now - Math.max(since, startedAt[0]));
    return now;
  }

  /** The first step in flight failed with {@code rc}: it is dropped and the family fails (the MPI lock held). */
  private MpiException failed(MpiCallTable table, int step, int rc) {
    MpiException e = MpiCallFailures.of(table, comm, step, rc, comm.rankText());
    table.abandon(step);
    recorder.failed(recorded[0], System.nanoTime());
    removeFirst();
    comm.family().fail(comm, MpiNotice.FAILED, e);
    return e;
  }

  private void removeFirst() {
    System.arraycopy(tables, 1, tables, 0, count - 1);
    System.arraycopy(steps, 1, steps, 0, count - 1);
    System.arraycopy(recorded, 1, recorded, 0, count - 1);
    System.arraycopy(startedAt, 1, startedAt, 0, count - 1);
    count--;
    finished++;
    tables[count] = null;
  }
}
