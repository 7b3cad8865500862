package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.mpi.internal.Mpi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * One {@code MPI_Comm} of a family and the calls started over it that MPI has not completed: the rule that an
 * MPI communicator is freed only when no request over it is live, in one place. A plan over a mesh's axes runs
 * its calls over the axes' communicators but keeps them in flight on the world's stream, and a rank that timed
 * out leaves its calls in flight for good (MPI cannot cancel a collective); freeing the communicator under such
 * a call leaves Open MPI's progress engine ({@code MPI_Finalize} runs it) working on a freed object, a crash in
 * native code. So {@link #release} frees the handle at once only when no call over it is live, else when the
 * last one completes ({@link #ended}), or never, when it never does: MPI allows a communicator that was not
 * freed at {@code MPI_Finalize}.
 *
 * <p>Every method is called holding {@link MpiRuntime#LOCK}.
 */
final class MpiCommHandle {
  private final long comm;
  private final MpiFamily family;
  private int live;
  private boolean released;
  private boolean freed;

  MpiCommHandle(long comm, MpiFamily family) {
    this.comm = comm;
    this.family = family;
  }

  /** The {@code MPI_Comm}, for MPI calls. */
  long value() {
    return comm;
  }

  /** A call over this communicator was started: its request is live until {@link #ended}. */
  void started() {
    live++;
    family.callStarted();
  }

  /** A call over it completed (MPI freed its request); frees the communicator if it was released and idle. */
  void ended() {
    live--;
    family.callEnded();
    if (live == 0 && released && !freed && MpiRuntime.isInitialized()) {
      free(); // its owner is closed: nobody to tell of an error
    }
  }

  /** Whether calls over it are live (started, and not completed). */
  boolean busy() {
    return live > 0;
  }

  /**
   * Its owner is closed: frees the communicator now if no call over it is live, else when the last one ends.
   * Returns {@code MPI_Comm_free}'s code, or {@code MPI_SUCCESS} when the free is put off (or MPI is gone).
   */
  int release() {
    released = true;
    return live == 0 && !freed && MpiRuntime.isInitialized() ? free() : Mpi.SUCCESS;
  }

  private int free() {
    freed = true;
    try (Arena arena = Arena.ofConfined()) {
      MemorySegment out = arena.allocate(JAVA_LONG);
      out.set(JAVA_LONG, 0, comm);
      return Mpi.MPI_Comm_free(out.address());
    }
  }
}
