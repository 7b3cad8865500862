package dev.commplan.runtime.mpi;

import dev.commplan.runtime.mpi.internal.Mpi;

/**
 * The two {@code MPI_Comm}s of one {@link MpiCommunicator}: the one its calls and its plans' calls run over,
 * and a duplicate of it that carries only the agreement check's calls (its window all-gathers, its messages
 * per pair, the exchanges of plan fingerprints and meshes; {@link MpiDirectCalls} routes them). MPI matches
 * collectives by their order on one communicator, so on a shared one a check that is not where the others'
 * calls are (a rank that threw inside try-with-resources closes its mesh, and the close compares its last
 * calls) would meet a user's call: a mismatched collective, which MPI reports as a truncation at best. On its
 * own communicator a check meets only the other ranks' checks; a rank whose peers are not coming waits there
 * until its timeout or their notice ({@link MpiFamily}), as in any call.
 *
 * <p>The duplicate is made with the communicator, where every rank of it is present ({@code MPI_Comm_dup} is
 * collective), and freed with it, each under {@link MpiCommHandle}'s rule. Every method is called holding
 * {@link MpiRuntime#LOCK}.
 */
final class MpiCommPair {
  private final MpiCommHandle calls;
  private final MpiCommHandle check;

  private MpiCommPair(MpiCommHandle calls, MpiCommHandle check) {
    this.calls = calls;
    this.check = check;
  }

  /**
   * {@code comm} (already a communicator of its own, with {@code MPI_ERRORS_RETURN}) and the check's duplicate
   * of it, made now: collective over {@code comm}, so every rank calls it as it makes its communicator, {@code
   * label} (for errors).
   */
  static MpiCommPair of(long comm, MpiFamily family, String label) {
    long check = MpiRuntime.dup(comm, "the agreement check's communicator of " + label);
    return new MpiCommPair(new MpiCommHandle(comm, family), new MpiCommHandle(check, family));
  }

  /** The communicator of the user's calls and plans. */
  MpiCommHandle calls() {
    return calls;
  }

  /** The communicator of the agreement check's calls, and of nothing else. */
  MpiCommHandle check() {
    return check;
  }

  /** Whether a call over either is live (started, not completed). */
  boolean busy() {
    return calls.busy() || check.busy();
  }

  /**
   * The communicator closed: frees both, each now or when the last call over it completes ({@link
   * MpiCommHandle#release}). Returns the first error code of {@code MPI_Comm_free}, or {@code MPI_SUCCESS}.
   */
  int release() {
    int rc = calls.release();
    int checkRc = check.release();
    return rc != Mpi.SUCCESS ? rc : checkRc;
  }
}
