package dev.commplan.runtime.mpi;

import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.spi.FlightJob;
import dev.commplan.runtime.spi.FlightLog;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.LockSupport;

/**
 * A world communicator ({@link MpiBackend#world()}) and every communicator split from it, on this rank: the
 * family that fails together. MPI cannot cancel a collective, and a rank that fails leaves its peers
 * waiting inside calls it will never make; so the family has a channel of its own for saying so ({@link
 * MpiNoticeChannel}): a duplicate of the world communicator (the <em>control</em> communicator) that carries
 * only notices ({@link MpiNotice}), small messages of one kind (failed, timed out, gave up), the sender's world
 * and group rank, its group's label, whether it is closing that group, and a sentence. Every rank keeps one
 * receive from any source posted on it.
 *
 * <ul>
 *   <li>A rank whose call fails (an MPI error, a timeout) sends a notice to every other rank of the world,
 *       once, and every communicator of the family on this rank fails with that exception.
 *   <li>A rank waiting for its calls looks for notices between bursts of polls ({@link #poll}); one that
 *       arrives ends the wait with a {@link RankAbortedException} naming the rank, its group and what it
 *       said, and this rank gives up too (and says so, once).
 *   <li>Closing the world ({@link #closeWorld}) is a barrier on the control communicator ({@link
 *       MpiCloseBarrier}), waited for as long as a close waits ({@link #closeWaitNanos}) and with notices
 *       looked for, so that a rank whose own calls all succeeded still learns, at the latest when it closes,
 *       that another failed (a send that completed into a receive that was too short). A rank that has waited
 *       there a second says so ({@link MpiNotice#LEFT}): not a failure, but a rank that times out names it as
 *       the one that left its call.
 *   <li>When the family fails on this rank (its own failure, or another rank's notice), this rank writes its
 *       flight record ({@link FlightLog#writeOnFailure}), where the options give a folder: so every rank that
 *       hears of a failure writes its file, those that were only waiting included.
 *   <li>A rank that times out ({@link #timedOut}) tells every rank, collects their answers for a moment,
 *       and names the ranks of its group that did not answer or are closing a communicator: at the world's
 *       close barrier, or in the comparison of the last calls that a close makes (over the agreement
 *       check's own communicator, {@link MpiCommPair}, where it meets no call of the others).
 * </ul>
 *
 * <p>Every method is called holding {@link MpiRuntime#LOCK}; the failure is read without it.
 */
final class MpiFamily {
  /** What messages call the comparison of the last calls that a close makes, before the communicator's label. */
  static final String CHECK_AT_CLOSE = "agreement check at close() of ";

  final int worldRank;
  final int worldSize;
  private final MpiNoticeChannel channel;
  private final List<MpiNotice> notices = new ArrayList<>();
  private final Set<MpiCommunicator> members = ConcurrentHashMap.newKeySet();
  private volatile RuntimeException failure;
  private volatile long lastLook = System.nanoTime();
  private boolean announced;
  private boolean announcedLeft;
  private boolean atCloseBarrier; // this rank waits at the world's close barrier, or did
  private volatile int liveCalls; // written holding the lock; read without it
  /** This rank's flight record: every communicator of the family; written when the family fails. */
  private final FlightLog flightLog;

  private MpiFamily(MpiNoticeChannel channel, int worldRank, int worldSize, FlightJob job) {
    this.channel = channel;
    this.worldRank = worldRank;
    this.worldSize = worldSize;
    this.flightLog = job.log(worldRank);
  }

  /**
   * A new family for the world communicator {@code world} (collective: duplicates it, and shares the flight
   * records' job id, {@link MpiFlightJob}); holding the lock.
   */
  static MpiFamily open(long world, int worldRank, int worldSize, Path flightRecordDir) {
    FlightJob job = MpiFlightJob.share(world, worldRank, worldSize, flightRecordDir);
    return new MpiFamily(MpiNoticeChannel.open(world, worldRank, worldSize), worldRank, worldSize, job);
  }

  /** {@return this rank's flight record, of which each communicator of the family is a group} */
  FlightLog flightLog() {
    return flightLog;
  }

  /** A call over a communicator of the family was started ({@link MpiCommHandle}). */
  void callStarted() {
    liveCalls++;
  }

  /** A call over a communicator of the family completed, or was given up for good ({@link MpiCommHandle}). */
  void callEnded() {
    liveCalls--;
  }

  /** Whether calls over its communicators are live (started, not completed): MPI may use their memory. No lock. */
  boolean busy() {
    return liveCalls > 0;
  }

  /** {@code member}, a communicator of the family on this rank, was made: it fails with the family. */
  void join(MpiCommunicator member) {
    members.add(member);
  }

  /** {@code member} was closed. */
  void leave(MpiCommunicator member) {
    members.remove(member);
  }

  /** {@return the first failure of the family this rank knows of, or null} Read without the lock. */
  RuntimeException failure() {
    return failure;
  }

  /** The notices received so far, oldest first. */
  List<MpiNotice> notices() {
    return List.copyOf(notices);
  }

  /**
   * A notice that ends waits (a failure, a timeout, a rank that gave up) among those that arrived since the
   * last look, or null; holding the lock: a failure or timeout in preference to a rank that gave up. Every
   * notice is kept ({@link #notices()}).
   */
  MpiNotice poll() {
    MpiNotice chosen = null;
    for (MpiNotice n = receive(); n != null; n = receive()) {
      if (n.kind() == MpiNotice.LEFT) {
        continue;
      }
      if (n.outranks(chosen)) {
        chosen = n;
      }
      if (chosen.kind() != MpiNotice.GAVE_UP) {
        break;
      }
    }
    return chosen;
  }

  /** The next notice that arrived, or null; holding the lock. */
  private MpiNotice receive() {
    lastLook = System.nanoTime();
    MpiNotice notice = channel.receive();
    if (notice != null) {
      notices.add(notice);
    }
    return notice;
  }

  /**
   * This rank's own failure, {@code cause}, in {@code where}: the family's failure if it is the first, every
   * member failed with it, and a notice of {@code kind} sent to every other rank (once per rank and family).
   */
  void fail(MpiCommunicator where, int kind, RuntimeException cause) {
    failMembers(cause, where.timeout().toNanos());
    announce(kind, where, cause.getMessage());
  }

  /**
   * Another rank's {@code notice} ends what {@code where} was doing ({@code doing}): the exception this
   * rank throws, naming that rank, its group and its words; the family fails with it and says so once.
   */
  RankAbortedException gaveUp(MpiCommunicator where, String doing, MpiNotice notice) {
    RankAbortedException e = new RankAbortedException(where.rankText() + ": " + doing + " abandoned because "
        + notice.who() + " " + notice.verb() + ": " + notice.text(), failure);
    failMembers(e, where.timeout().toNanos());
    // what it was doing, and why it gave up: a rank that hears of this first still learns the first failure
    announce(MpiNotice.GAVE_UP, where, "was " + doing + (notice.kind() == MpiNotice.GAVE_UP ? ", after " : ", when ")
        + notice.who() + " " + notice.verb() + ": " + notice.text());
    return e;
  }

  /**
   * The family fails: with {@code cause} if it had not failed yet, every member with the family's failure;
   * holding the lock.
   */
  private void failMembers(RuntimeException cause, long timeoutNanos) {
    if (failure == null) {
      failure = cause;
    }
    MpiRuntime.familyFailed(timeoutNanos);
    for (MpiCommunicator member : members) {
      member.failedBy(failure);
    }
    // every rank hears of the failure (its own, or another's notice) and writes its record, once
    flightLog.writeOnFailure(failure.getMessage());
  }

  /**
   * {@return how long a close waits for the other ranks: twice {@code timeoutNanos}, where a call waits once} Its
   * peers may still be waiting out the timeout in a call before it; there the rank that times out names the rank
   * that never came. A close that timed out first would name only peers that were waiting too, and its notice
   * would end their waits before they could name it. For the comparison a close makes and the world's barrier.
   */
  static long closeWaitNanos(long timeoutNanos) {
    return 2 * timeoutNanos;
  }

  /** {@return how long ranks get to answer a notice: a tenth of {@code timeout}, 0.2 to 2 s} */
  static long answerGrace(Duration timeout) {
    return Math.min(2_000_000_000L, Math.max(200_000_000L, timeout.toNanos() / 10));
  }

  /**
   * Whether this rank has not looked for notices for a while (a millisecond): a rank that was away (computing,
   * stalled) looks before it starts or waits for calls, so that it does not run a call its peers gave up on.
   * Read without the lock.
   */
  boolean due(long now) {
    return now - lastLook > 1_000_000L;
  }

  /** {@return the communicators of the family on this rank} */
  List<MpiCommunicator> members() {
    return List.copyOf(members);
  }

  /**
   * {@code where} waited {@code waitedNanos} (past {@code timeout}) for {@code pending} ({@code first}'s step
   * {@code step} first): tells every rank of the world, gives them a moment ({@link #answerGrace}) to answer
   * (each rank that learns of it says once what it was doing), and returns the exception naming the ranks of
   * {@code where}'s group that did not answer or are closing: stalled, gone, or not in this call ({@link
   * MpiTimeoutReport}). Takes and lets go of the lock itself.
   */
  CommTimeoutException timedOut(MpiCommunicator where, long waitedNanos, Duration timeout, String pending,
      MpiCallTable first, int step) {
    String waited = String.format(Locale.ROOT, "%.1f s", waitedNanos / 1e9);
    MpiRuntime.LOCK.lock();
    try {
      announce(MpiNotice.TIMED_OUT, where, "waited " + waited + " (the timeout is " + timeout + ") for:" + pending);
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    long grace = answerGrace(timeout);
    collectAnswers(grace);
    MpiTimeoutReport report = new MpiTimeoutReport(where, worldRank, waited, timeout, pending, notices, grace);
    CommTimeoutException e = new CommTimeoutException(report.text(), first.planName, first.planName == null ? -1
        : first.stepNumber(step), first.describeStep(step), first.stepFields(step), where.rank(), timeout,
        report.missing(), null, null);
    MpiRuntime.LOCK.lock();
    try {
      failMembers(e, timeout.toNanos());
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    return e;
  }

  /** Receives every notice that arrives for {@code graceNanos}, looking about every millisecond. */
  private void collectAnswers(long graceNanos) {
    long start = System.nanoTime();
    while (System.nanoTime() - start < graceNanos) {
      MpiRuntime.LOCK.lock();
      try {
        while (poll() != null) {
          // collect every answer that arrived
        }
      } finally {
        MpiRuntime.LOCK.unlock();
      }
      LockSupport.parkNanos(1_000_000L);
    }
  }

  /**
   * Sends a notice of {@code kind} from {@code where} saying {@code text} to every other rank: once per rank and
   * family for a failure, a timeout or giving up, and a {@link MpiNotice#LEFT} only before any of those; not
   * while the earlier notice is still on its way. Holding the lock.
   */
  private void announce(int kind, MpiCommunicator where, String text) {
    if (kind == MpiNotice.LEFT ? announced || announcedLeft : announced) {
      return;
    }
    if (!channel.canSend()) {
      return; // freed, or the earlier notice is still on its way (its buffers are in use): this one is not sent
    }
    announced |= kind != MpiNotice.LEFT;
    announcedLeft = true;
    boolean closing = kind == MpiNotice.LEFT || atCloseBarrier || where.directCalls().checkingAtClose();
    channel.send(new MpiNotice(kind, worldRank, where.rank(), where.groupLabel(), closing, text == null ? "" : text));
  }

  /**
   * Completes the sends of this rank's notice, for at most a second (holding the lock): a notice is a few
   * hundred bytes, which MPI sends at once, but the process may end right after its failure.
   */
  void flush() {
    channel.flush();
  }

  /** This rank starts waiting at the world's close barrier: its notices say it is closing (holding the lock). */
  void enteringCloseBarrier() {
    atCloseBarrier = true;
  }

  /**
   * This rank has waited a while at the world's close barrier: it tells the others once ({@link
   * MpiNotice#LEFT}), unless it sent a notice already. Takes and lets go of the lock itself.
   */
  void sayWaitingToClose(MpiCommunicator world, String text) {
    if (announcedLeft) {
      return;
    }
    MpiRuntime.LOCK.lock();
    try {
      announce(MpiNotice.LEFT, world, text);
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /**
   * Closing the world communicator {@code world}: waits at the world's close barrier ({@link MpiCloseBarrier}),
   * at most {@link #closeWaitNanos} of {@code timeoutNanos} while looking for notices, unless the family already
   * failed (then this rank's peers know, and nobody waits for it here). Throws when another rank failed, or when
   * the barrier times out; frees the control communicator when the barrier completed. Takes and lets go of the
   * lock itself, between polls. Unless the control communicator was freed, the family stays reachable until MPI
   * is finalized: its posted receive and its notices' sends still point into its channel's memory.
   */
  void closeWorld(MpiCommunicator world, long timeoutNanos) {
    try {
      new MpiCloseBarrier(this, channel, world, timeoutNanos).await();
    } finally {
      if (!channel.isFreed()) {
        MpiRuntime.keepUntilFinalized(this);
      }
    }
  }
}
