package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_INT;

import dev.commplan.model.Collective;
import dev.commplan.runtime.mpi.internal.Mpi;
import dev.commplan.runtime.spi.MetCalls;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

/**
 * What failed when {@code MPI_Testall} of a step of an {@link MpiCallTable} returned an error, in words: with
 * {@code MPI_ERR_IN_STATUS}, each failed call's own error, read from its status. A receive or collective whose
 * message was longer than its count says "truncated", with both counts where MPI tells the sender's ({@code
 * MPI_Get_count}); what that says about the ranks (their counts differ) is the agreement check's to word ({@link
 * MetCalls#truncationReading}), since MPI found it before any check compared the calls. Open MPI's engine for
 * non-blocking collectives may report its own error instead of the round's, which is named as such.
 */
final class MpiCallFailures {
  /** Open MPI's internal {@code OMPI_ERROR}, which libnbc gives a non-blocking collective whose round failed. */
  private static final int OMPI_ERROR = -1;
  /**
   * What that means: libnbc found an error in a round (it prints {@code MPI Error in NBC subrequest ...: N}
   * first) and reports its own error instead of the round's; 15, the usual one, is a truncation.
   */
  private static String libnbcAborted(MpiCommunicator comm, Collective collective) {
    return "Open MPI's engine for non-blocking collectives (libnbc) aborted it (error -1); it prints the MPI error just"
        + " before ('MPI Error in NBC subrequest ...: 15' is MPI_ERR_TRUNCATE: a message longer than this rank's"
        + " count, " + MetCalls.truncationReading(comm, collective) + ")";
  }

  private MpiCallFailures() {}

  /**
   * What failed when {@code MPI_Testall} of step {@code step} of {@code table} returned {@code rc} on {@code who}
   * (the caller holds the MPI lock).
   *
   * @param comm the communicator of the table's calls, which names the group in the agreement check's reading
   */
  static MpiException of(MpiCallTable table, MpiCommunicator comm, int step, int rc, String who) {
    StringBuilder what = new StringBuilder();
    int code = rc;
    if (rc == Mpi.ERR_IN_STATUS) {
      try (Arena arena = Arena.ofConfined()) {
        MemorySegment sent = arena.allocate(JAVA_INT);
        for (int i = table.stepStart(step), end = table.stepStart(step + 1); i < end; i++) {
          MemorySegment status = table.status(i);
          int error = status.get(JAVA_INT, Mpi.STATUS_ERROR);
          if (error == Mpi.SUCCESS || error == Mpi.ERR_PENDING) {
            continue;
          }
          code = code == rc ? error : code;
          what.append(what.isEmpty() ? "" : "; ").append(table.describe(i)).append(": ");
          Collective kind = table.kind(i);
          if (error == OMPI_ERROR && !kind.pointToPoint()) {
            what.append(libnbcAborted(comm, kind));
          } else if (error != Mpi.ERR_TRUNCATE) {
            what.append(MpiRuntime.errorString(error)).append(" (MPI error ").append(error).append(')');
          } else if (kind == Collective.RECV) {
            int source = status.get(JAVA_INT, Mpi.STATUS_SOURCE);
            boolean known = Mpi.MPI_Get_count(status.address(), table.type(i), sent.address()) == Mpi.SUCCESS
                && sent.get(JAVA_INT, 0) != Mpi.UNDEFINED;
            what.append("truncated: rank ").append(source).append(" sent ")
                .append(known ? sent.get(JAVA_INT, 0) + " elements" : "more elements")
                .append(" into this receive of ").append(table.count(i)).append("; ")
                .append(MetCalls.truncationReading(comm, kind));
          } else {
            what.append("truncated: a message inside the ").append(kind.label()).append(" was longer than this"
                + " rank's count of ").append(table.count(i)).append(" allows, ")
                .append(MetCalls.truncationReading(comm, kind));
          }
        }
      }
    }
    if (what.isEmpty() && rc == OMPI_ERROR) {
      what.append(table.describeStep(step)).append(": ").append(libnbcAborted(comm,
          table.kind(table.stepStart(step))));
    } else if (what.isEmpty()) {
      what.append(table.describeStep(step)).append(": ").append(MpiRuntime.errorString(rc)).append(" (MPI error ")
          .append(rc).append(')');
    }
    return new MpiException("MPI_Testall", code, who + ": MPI_Testall failed while completing " + what);
  }
}
