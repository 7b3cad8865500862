package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.CommTimeoutException;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.MpiCollectives;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A world communicator ({@link MpiBackend#world()}) and every communicator split from it, on this rank: the
 * family that fails together. MPI cannot cancel a collective, and a rank that fails leaves its peers
 * waiting inside calls it will never make; so the family has a channel of its own for saying so: a
 * duplicate of the world communicator (the <em>control</em> communicator) that carries only notices, small
 * messages of one kind (failed, timed out, gave up), the sender's world and group rank, its group's label,
 * whether it is closing that group, and a sentence. Every rank keeps one receive from any source posted on it.
 *
 * <ul>
 *   <li>A rank whose call fails (an MPI error, a timeout) sends a notice to every other rank of the world,
 *       once, and every communicator of the family on this rank fails with that exception.
 *   <li>A rank waiting for its calls looks for notices between bursts of polls ({@link #poll}); one that
 *       arrives ends the wait with a {@link RankAbortedException} naming the rank, its group and what it
 *       said, and this rank gives up too (and says so, once).
 *   <li>Closing the world ({@link #closeWorld}) is a barrier on the control communicator, waited for as
 *       long as a close waits ({@link #closeWaitNanos}) and with notices looked for, so that a rank whose own
 *       calls all succeeded still learns, at the latest when it closes, that another failed (a send that
 *       completed into a receive that was too short). A rank that has waited there a second says so ({@link
 *       #LEFT}): not a failure, but a rank that times out names it as the one that left its call.
 *   <li>A rank that times out ({@link #timedOut}) tells every rank, collects their answers for a moment,
 *       and names the ranks of its group that did not answer or are closing a communicator: at the world's
 *       close barrier, or in the comparison of the last calls that a close makes (over the agreement
 *       check's own communicator, {@link MpiCommPair}, where it meets no call of the others).
 * </ul>
 *
 * <p>Every method is called holding {@link MpiRuntime#LOCK}; the failure is read without it.
 */
final class MpiFamily {
  /** Tags are the family's alone on the control communicator: one for notices. */
  private static final int NOTICE_TAG = 1;
  private static final int NOTICE_BYTES = 4096;
  private static final int HEADER_BYTES = 24; // kind, world rank, group rank, closing, label bytes, text bytes
  /** What the close of the world is called in notices. */
  private static final String CLOSING = "close() of world";
  /** What messages call the comparison of the last calls that a close makes, before the communicator's label. */
  static final String CHECK_AT_CLOSE = "agreement check at close() of ";

  /** A notice's kind: the sender's call failed (an MPI error, or CommPlan's own check). */
  static final int FAILED = 1;
  /** A notice's kind: the sender waited past its timeout. */
  static final int TIMED_OUT = 2;
  /** A notice's kind: the sender gave up because of another rank's notice. */
  static final int GAVE_UP = 3;
  /**
   * A notice's kind: the sender is closing the world and has waited a second there for the others. Not a
   * failure (a peer still finishing its last call may see it): it ends no wait, but a rank that times out
   * names the ranks that left this way.
   */
  static final int LEFT = 4;

  /**
   * What another rank said; {@code closing}: it was closing {@code group} (waiting at the world's close barrier,
   * or in the comparison of the last calls that a close makes), so it has left its calls there.
   */
  record Notice(int kind, int worldRank, int groupRank, String group, boolean closing, String text) {
    /** {@code rank 2 of axis tp of mesh [dp=2, tp=4] (world rank 6)}, or {@code rank 2 of world}. */
    String who() {
      return group.equals("world") ? "rank " + worldRank + " of world"
          : "rank " + groupRank + " of " + group + " (world rank " + worldRank + ")";
    }

    String verb() {
      return switch (kind) {
        case FAILED -> "failed";
        case TIMED_OUT -> "timed out";
        case LEFT -> "is closing world";
        default -> "gave up";
      };
    }

    /**
     * {@return whether this notice, of one wait, is the one to name rather than {@code earlier} (or none)}: the
     * first failure or timeout rather than a rank that gave up on it.
     */
    boolean outranks(Notice earlier) {
      return earlier == null || earlier.kind() == GAVE_UP && kind != GAVE_UP;
    }
  }

  final int worldRank;
  final int worldSize;
  private final long control;
  private final MemorySegment inbox;
  private final MemorySegment request;
  private final MemorySegment flag;
  private MemorySegment sentNotice; // this rank's notice and its sends' requests, alive until sent
  private MemorySegment sentRequests;
  private int sends;
  private final List<Notice> notices = new ArrayList<>();
  private final Set<MpiCommunicator> members = ConcurrentHashMap.newKeySet();
  private volatile RuntimeException failure;
  private volatile long lastLook = System.nanoTime();
  private boolean announced;
  private boolean announcedLeft;
  private boolean atCloseBarrier; // this rank waits at the world's close barrier, or did
  private boolean controlFreed;
  private volatile int liveCalls; // written holding the lock; read without it

  private MpiFamily(long control, int worldRank, int worldSize) {
    this.control = control;
    this.worldRank = worldRank;
    this.worldSize = worldSize;
    Arena arena = Arena.ofAuto(); // lives as long as the family: MPI may write the inbox until the end
    inbox = arena.allocate(NOTICE_BYTES, 8);
    request = arena.allocate(JAVA_LONG);
    flag = arena.allocate(JAVA_INT);
  }

  /** A new family for the world communicator {@code world} (collective: duplicates it); holding the lock. */
  static MpiFamily open(long world, int worldRank, int worldSize) {
    MpiFamily family = new MpiFamily(MpiRuntime.dup(world, "the family's control communicator"), worldRank, worldSize);
    family.postReceive();
    return family;
  }

  private void postReceive() {
    MpiRuntime.check("MPI_Irecv", MpiCollectives.MPI_Irecv(inbox.address(), NOTICE_BYTES, Mpi.Handles.UINT8,
        Mpi.ANY_SOURCE, NOTICE_TAG, control, request.address()), "posting the receive for other ranks' notices");
  }

  /** A call over a communicator of the family was started ({@link MpiCommHandle}). */
  void callStarted() {
    liveCalls++;
  }

  void callEnded() {
    liveCalls--;
  }

  /** Whether calls over its communicators are live (started, not completed): MPI may use their memory. No lock. */
  boolean busy() {
    return liveCalls > 0;
  }

  void join(MpiCommunicator member) {
    members.add(member);
  }

  void leave(MpiCommunicator member) {
    members.remove(member);
  }

  /** {@return the first failure of the family this rank knows of, or null} Read without the lock. */
  RuntimeException failure() {
    return failure;
  }

  /** The notices received so far, oldest first. */
  List<Notice> notices() {
    return List.copyOf(notices);
  }

  /**
   * A notice that ends waits (a failure, a timeout, a rank that gave up) among those that arrived since the
   * last look, or null; holding the lock: a failure or timeout in preference to a rank that gave up. Every
   * notice is kept ({@link #notices()}).
   */
  Notice poll() {
    Notice chosen = null;
    for (Notice n = receive(); n != null; n = receive()) {
      if (n.kind() == LEFT) {
        continue;
      }
      if (n.outranks(chosen)) {
        chosen = n;
      }
      if (chosen.kind() != GAVE_UP) {
        break;
      }
    }
    return chosen;
  }

  /** The next notice that arrived, or null; holding the lock. Re-posts the receive. */
  private Notice receive() {
    lastLook = System.nanoTime();
    if (controlFreed) {
      return null;
    }
    int rc = Mpi.MPI_Test(request.address(), flag.address(), Mpi.STATUSES_IGNORE);
    if (rc != Mpi.SUCCESS || flag.get(JAVA_INT, 0) == 0) {
      return null; // an error on the control channel is not the family's failure: the calls' own waits report
    }
    Notice notice = decode();
    notices.add(notice);
    postReceive();
    return notice;
  }

  /**
   * This rank's own failure, {@code cause}, in {@code where}: the family's failure if it is the first, every
   * member failed with it, and a notice of {@code kind} sent to every other rank (once per rank and family).
   */
  void fail(MpiCommunicator where, int kind, RuntimeException cause) {
    if (failure == null) {
      failure = cause;
    }
    MpiRuntime.familyFailed(where.timeout().toNanos());
    for (MpiCommunicator member : members) {
      member.failedBy(failure);
    }
    announce(kind, where, cause.getMessage());
  }

  /**
   * Another rank's {@code notice} ends what {@code where} was doing ({@code doing}): the exception this
   * rank throws, naming that rank, its group and its words; the family fails with it and says so once.
   */
  RankAbortedException gaveUp(MpiCommunicator where, String doing, Notice notice) {
    RankAbortedException e = new RankAbortedException(where.rankText() + ": " + doing + " abandoned because "
        + notice.who() + " " + notice.verb() + ": " + notice.text(), failure);
    if (failure == null) {
      failure = e;
    }
    MpiRuntime.familyFailed(where.timeout().toNanos());
    for (MpiCommunicator member : members) {
      member.failedBy(failure);
    }
    // what it was doing, and why it gave up: a rank that hears of this first still learns the first failure
    announce(GAVE_UP, where, "was " + doing + (notice.kind() == GAVE_UP ? ", after " : ", when ") + notice.who() + " "
        + notice.verb() + ": " + notice.text());
    return e;
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
  static long answerGrace(java.time.Duration timeout) {
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
   * {@code step} first): tells every rank of the world, gives them a moment (a tenth of the timeout, 0.2 to 2
   * s) to answer (each rank that learns of it says once what it was doing), and returns the exception naming
   * the ranks of {@code where}'s group that did not answer or are closing: stalled, gone, or not in this call
   * ({@link MpiTimeoutReport}). Takes and lets go of the lock itself.
   */
  CommTimeoutException timedOut(MpiCommunicator where, long waitedNanos, java.time.Duration timeout, String pending,
      MpiCallTable first, int step) {
    String waited = String.format(java.util.Locale.ROOT, "%.1f s", waitedNanos / 1e9);
    MpiRuntime.LOCK.lock();
    try {
      announce(TIMED_OUT, where, "waited " + waited + " (the timeout is " + timeout + ") for:" + pending);
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    long grace = answerGrace(timeout);
    long start = System.nanoTime();
    while (System.nanoTime() - start < grace) {
      MpiRuntime.LOCK.lock();
      try {
        while (poll() != null) {
          // collect every answer that arrived
        }
      } finally {
        MpiRuntime.LOCK.unlock();
      }
      java.util.concurrent.locks.LockSupport.parkNanos(1_000_000L);
    }
    MpiTimeoutReport report = new MpiTimeoutReport(where, worldRank, waited, timeout, pending, notices, grace);
    CommTimeoutException e = new CommTimeoutException(report.text(), first.planName, first.planName == null ? -1
        : first.stepNumber(step), first.describeStep(step), first.stepFields(step), where.rank(), timeout, report.missing(), null,
        null);
    MpiRuntime.LOCK.lock();
    try {
      if (failure == null) {
        failure = e;
      }
      MpiRuntime.familyFailed(timeout.toNanos());
      for (MpiCommunicator member : members) {
        member.failedBy(failure);
      }
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    return e;
  }

  private void announce(int kind, MpiCommunicator where, String text) {
    if (kind == LEFT ? announced || announcedLeft : announced || controlFreed) {
      return;
    }
    if (controlFreed || sends > 0 && flushPending()) {
      return; // the earlier notice is still on its way (its buffers are in use): this one is not sent
    }
    announced |= kind != LEFT;
    announcedLeft = true;
    byte[] label = where.groupLabel().getBytes(StandardCharsets.UTF_8);
    byte[] words = (text == null ? "" : text).getBytes(StandardCharsets.UTF_8);
    int labelBytes = Math.min(label.length, 256);
    int textBytes = Math.min(words.length, NOTICE_BYTES - HEADER_BYTES - labelBytes);
    MemorySegment notice = Arena.ofAuto().allocate(NOTICE_BYTES, 8);
    notice.set(JAVA_INT, 0, kind);
    notice.set(JAVA_INT, 4, worldRank);
    notice.set(JAVA_INT, 8, where.rank());
    notice.set(JAVA_INT, 12, kind == LEFT || atCloseBarrier || where.directCalls().checkingAtClose() ? 1 : 0);
    notice.set(JAVA_INT, 16, labelBytes);
    notice.set(JAVA_INT, 20, textBytes);
    MemorySegment.copy(label, 0, notice, JAVA_BYTE, HEADER_BYTES, labelBytes);
    MemorySegment.copy(words, 0, notice, JAVA_BYTE, HEADER_BYTES + labelBytes, textBytes);
    int bytes = HEADER_BYTES + labelBytes + textBytes;
    sentNotice = notice;
    sentRequests = Arena.ofAuto().allocate(JAVA_LONG, Math.max(1, worldSize - 1));
    for (int r = 0, j = 0; r < worldSize; r++) {
      if (r != worldRank) {
        int rc = MpiCollectives.MPI_Isend(notice.address(), bytes, Mpi.Handles.UINT8, r, NOTICE_TAG, control,
            sentRequests.address() + 8L * j);
        sends = rc == Mpi.SUCCESS ? j + 1 : sends; // requests [0, sends) are to be completed
        j += rc == Mpi.SUCCESS ? 1 : 0;
      }
    }
  }

  /** Whether sends of an earlier notice are still in flight (holding the lock). */
  private boolean flushPending() {
    int rc = Mpi.MPI_Testall(sends, sentRequests.address(), flag.address(), Mpi.STATUSES_IGNORE);
    if (rc != Mpi.SUCCESS || flag.get(JAVA_INT, 0) != 0) {
      sends = 0;
    }
    return sends > 0;
  }

  /**
   * Completes the sends of this rank's notice, for at most a second (holding the lock): a notice is a few
   * hundred bytes, which MPI sends at once, but the process may end right after its failure.
   */
  void flush() {
    long start = System.nanoTime();
    while (sends > 0 && !controlFreed) {
      int rc = Mpi.MPI_Testall(sends, sentRequests.address(), flag.address(), Mpi.STATUSES_IGNORE);
      if (rc != Mpi.SUCCESS || flag.get(JAVA_INT, 0) != 0 || System.nanoTime() - start > 1_000_000_000L) {
        sends = 0;
      }
    }
  }

  private Notice decode() {
    int kind = inbox.get(JAVA_INT, 0);
    int from = inbox.get(JAVA_INT, 4);
    int groupRank = inbox.get(JAVA_INT, 8);
    boolean closing = inbox.get(JAVA_INT, 12) != 0;
    int labelBytes = Math.max(0, Math.min(inbox.get(JAVA_INT, 16), NOTICE_BYTES - HEADER_BYTES));
    int textBytes = Math.max(0, Math.min(inbox.get(JAVA_INT, 20), NOTICE_BYTES - HEADER_BYTES - labelBytes));
    byte[] label = new byte[labelBytes];
    byte[] text = new byte[textBytes];
    MemorySegment.copy(inbox, JAVA_BYTE, HEADER_BYTES, label, 0, labelBytes);
    MemorySegment.copy(inbox, JAVA_BYTE, HEADER_BYTES + labelBytes, text, 0, textBytes);
    return new Notice(kind, from, groupRank, new String(label, StandardCharsets.UTF_8), closing,
        new String(text, StandardCharsets.UTF_8));
  }

  /**
   * Closing the world communicator {@code world}: a barrier on the control communicator, waited for at most
   * {@link #closeWaitNanos} of {@code timeoutNanos} while looking for notices, unless the family already failed
   * (then this rank's peers know, and nobody waits for it here). Throws when another rank failed, or when the
   * barrier times out; frees the control communicator when the barrier completed. Takes and lets go of the lock
   * itself, between polls. Unless the control communicator was freed, the family stays reachable until MPI is
   * finalized: its posted receive and its notices' sends still point into its memory.
   */
  void closeWorld(MpiCommunicator world, long timeoutNanos) {
    try {
      barrierAtClose(world, timeoutNanos);
    } finally {
      if (!controlFreed) {
        MpiRuntime.keepUntilFinalized(this);
      }
    }
  }

  private void barrierAtClose(MpiCommunicator world, long timeoutNanos) {
    if (controlFreed) {
      return;
    }
    MemorySegment barrier = Arena.ofAuto().allocate(JAVA_LONG);
    MpiRuntime.LOCK.lock();
    try {
      if (failure != null) {
        flush(); // the peers learn from the notice; nobody waits for this rank at the barrier
        return;
      }
      atCloseBarrier = true;
      MpiRuntime.check("MPI_Ibarrier", Mpi.MPI_Ibarrier(control, barrier.address()),
          "starting the barrier of " + world.rankText() + "'s close");
    } finally {
      MpiRuntime.LOCK.unlock();
    }
    long start = System.nanoTime();
    long limit = closeWaitNanos(timeoutNanos);
    while (true) {
      MpiRuntime.LOCK.lock();
      try {
        Notice notice = poll();
        if (notice != null) {
          RankAbortedException e = gaveUp(world, CLOSING, notice);
          flush();
          throw e;
        }
        int rc = Mpi.MPI_Test(barrier.address(), flag.address(), Mpi.STATUSES_IGNORE);
        if (rc != Mpi.SUCCESS) {
          throw MpiRuntime.error("MPI_Test", rc, "waiting at the barrier of " + world.rankText() + "'s close");
        }
        if (flag.get(JAVA_INT, 0) != 0) {
          freeControl();
          return;
        }
      } finally {
        MpiRuntime.LOCK.unlock();
      }
      long waited = System.nanoTime() - start;
      if (waited > 1_000_000_000L && !announcedLeft) {
        MpiRuntime.LOCK.lock();
        try {
          announce(LEFT, world, CLOSING + " has waited 1 s for the other ranks to close it too");
        } finally {
          MpiRuntime.LOCK.unlock();
        }
      }
      if (waited > limit) {
        CommPlanException e = new CommPlanException(String.format(java.util.Locale.ROOT, "%s: %s waited %.1f s"
            + " (twice the timeout) for the other ranks of world to close it too; a rank that is still working,"
            + " stalled or gone leaves the others waiting here", world.rankText(), CLOSING, waited / 1e9));
        MpiRuntime.LOCK.lock();
        try {
          fail(world, TIMED_OUT, e);
          flush();
        } finally {
          MpiRuntime.LOCK.unlock();
        }
        throw e;
      }
      if (waited > 1_000_000L) {
        java.util.concurrent.locks.LockSupport.parkNanos(50_000L);
      } else {
        Thread.yield();
      }
    }
  }

  /**
   * Frees the control communicator after a completed close barrier (holding the lock), once the posted receive
   * is cancelled and completed, so that a late notice is not written into an inbox the GC freed.
   */
  private void freeControl() {
    if (Mpi.MPI_Cancel(request.address()) != Mpi.SUCCESS
        || Mpi.MPI_Waitall(1, request.address(), Mpi.STATUSES_IGNORE) != Mpi.SUCCESS) { // completes at once
      MpiRuntime.keepUntilFinalized(this); // MPI may still write the inbox
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment handle = arena.allocate(JAVA_LONG);
      handle.set(JAVA_LONG, 0, control);
      Mpi.MPI_Comm_free(handle.address());
      controlFreed = true;
    }
  }
}
