package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.mpi.internal.MpiCollectives;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * An MPI family's channel for notices ({@link MpiNotice}): the <em>control</em> communicator, a duplicate
 * of the world's that carries nothing else, with one receive from any source kept posted on it for the
 * other ranks' notices, and the sends of this rank's own notice to every other rank. The world's close
 * barrier runs on it too ({@link MpiCloseBarrier}).
 *
 * <p>Its memory lives as long as the channel: MPI may write the inbox until the receive is cancelled, and
 * read a notice until its sends complete. Every method is called holding {@link MpiRuntime#LOCK}.
 */
final class MpiNoticeChannel {
  /** Tags are the channel's alone on the control communicator: one for notices. */
  private static final int NOTICE_TAG = 1;

  private final long control;
  private final int worldRank;
  private final int worldSize;
  private final MemorySegment inbox;
  private final MemorySegment request;
  private final MemorySegment flag;
  private MemorySegment sentNotice; // this rank's notice and its sends' requests, alive until sent
  private MemorySegment sentRequests;
  private int sends;
  private boolean freed;

  private MpiNoticeChannel(long control, int worldRank, int worldSize) {
    this.control = control;
    this.worldRank = worldRank;
    this.worldSize = worldSize;
    Arena arena = Arena.ofAuto(); // lives as long as the channel: MPI may write the inbox until the end
    inbox = arena.allocate(MpiNotice.MAX_BYTES, 8);
    request = arena.allocate(JAVA_LONG);
    flag = arena.allocate(JAVA_INT);
  }

  /**
   * A channel for the world communicator {@code world} (collective: duplicates it), its receive posted.
   *
   * @param world the world's {@code MPI_Comm}
   * @param worldRank this rank in it
   * @param worldSize its size
   * @return the channel
   */
  static MpiNoticeChannel open(long world, int worldRank, int worldSize) {
    MpiNoticeChannel channel = new MpiNoticeChannel(MpiRuntime.dup(world, "the family's control communicator"),
        worldRank, worldSize);
    channel.postReceive();
    return channel;
  }

  private void postReceive() {
    MpiRuntime.check("MPI_Irecv", MpiCollectives.MPI_Irecv(inbox.address(), MpiNotice.MAX_BYTES, Mpi.Handles.UINT8,
        Mpi.ANY_SOURCE, NOTICE_TAG, control, request.address()), "posting the receive for other ranks' notices");
  }

  /** {@return the next notice that arrived, or null} Re-posts the receive. */
  MpiNotice receive() {
    if (freed) {
      return null;
    }
    int rc = Mpi.MPI_Test(request.address(), flag.address(), Mpi.STATUSES_IGNORE);
    if (rc != Mpi.SUCCESS || flag.get(JAVA_INT, 0) == 0) {
      return null; // an error on the control channel is not the family's failure: the calls' own waits report
    }
    MpiNotice notice = MpiNotice.readFrom(inbox);
    postReceive();
    return notice;
  }

  /**
   * {@return whether a notice can be sent now}: not once the channel is freed, nor while the sends of an
   * earlier notice are still on their way (their buffers are in use).
   */
  boolean canSend() {
    return !freed && !(sends > 0 && flushPending());
  }

  /** Sends {@code notice} to every other rank of the world, without waiting; after {@link #canSend}. */
  void send(MpiNotice notice) {
    MemorySegment bytes = Arena.ofAuto().allocate(MpiNotice.MAX_BYTES, 8);
    int length = notice.writeTo(bytes);
    sentNotice = bytes;
    sentRequests = Arena.ofAuto().allocate(JAVA_LONG, Math.max(1, worldSize - 1));
    for (int r = 0, j = 0; r < worldSize; r++) {
      if (r != worldRank) {
        int rc = MpiCollectives.MPI_Isend(bytes.address(), length, Mpi.Handles.UINT8, r, NOTICE_TAG, control,
            sentRequests.address() + 8L * j);
        sends = rc == Mpi.SUCCESS ? j + 1 : sends; // requests [0, sends) are to be completed
        j += rc == Mpi.SUCCESS ? 1 : 0;
      }
    }
  }

  /** Whether sends of an earlier notice are still in flight. */
  private boolean flushPending() {
    int rc = Mpi.MPI_Testall(sends, sentRequests.address(), flag.address(), Mpi.STATUSES_IGNORE);
    if (rc != Mpi.SUCCESS || flag.get(JAVA_INT, 0) != 0) {
      sends = 0;
    }
    return sends > 0;
  }

  /**
   * Completes the sends of this rank's notice, for at most a second: a notice is a few hundred bytes, which
   * MPI sends at once, but the process may end right after its failure.
   */
  void flush() {
    long start = System.nanoTime();
    while (sends > 0 && !freed) {
      int rc = Mpi.MPI_Testall(sends, sentRequests.address(), flag.address(), Mpi.STATUSES_IGNORE);
      if (rc != Mpi.SUCCESS || flag.get(JAVA_INT, 0) != 0 || System.nanoTime() - start > 1_000_000_000L) {
        sends = 0;
      }
    }
  }

  /**
   * Starts a barrier of every rank of the world on the control communicator ({@code MPI_Ibarrier}).
   *
   * @param what what the barrier is for, for the error's message
   * @return the barrier's request, for {@link #barrierDone}
   */
  MemorySegment startBarrier(String what) {
    MemorySegment barrier = Arena.ofAuto().allocate(JAVA_LONG);
    MpiRuntime.check("MPI_Ibarrier", Mpi.MPI_Ibarrier(control, barrier.address()), "starting " + what);
    return barrier;
  }

  /**
   * {@return whether the barrier {@code barrier} has completed} ({@code MPI_Test})
   *
   * @param what what the barrier is for, for the error's message
   */
  boolean barrierDone(MemorySegment barrier, String what) {
    int rc = Mpi.MPI_Test(barrier.address(), flag.address(), Mpi.STATUSES_IGNORE);
    if (rc != Mpi.SUCCESS) {
      throw MpiRuntime.error("MPI_Test", rc, "waiting at " + what);
    }
    return flag.get(JAVA_INT, 0) != 0;
  }

  /**
   * Frees the control communicator, after a completed close barrier, once the posted receive is cancelled and
   * completed, so that a late notice is not written into an inbox the GC freed (where that fails, the channel
   * stays reachable until MPI is finalized).
   */
  void free() {
    if (Mpi.MPI_Cancel(request.address()) != Mpi.SUCCESS
        || Mpi.MPI_Waitall(1, request.address(), Mpi.STATUSES_IGNORE) != Mpi.SUCCESS) { // completes at once
      MpiRuntime.keepUntilFinalized(this); // MPI may still write the inbox
    }
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment handle = arena.allocate(JAVA_LONG);
      handle.set(JAVA_LONG, 0, control);
      Mpi.MPI_Comm_free(handle.address());
      freed = true;
    }
  }

  /** {@return whether the control communicator was freed} Nothing is received or sent after that. */
  boolean isFreed() {
    return freed;
  }
}
