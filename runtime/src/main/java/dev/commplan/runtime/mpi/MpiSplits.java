package dev.commplan.runtime.mpi;

import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.RankAbortedException;
import dev.commplan.runtime.mpi.internal.Mpi;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * {@link MpiCommunicator}'s split ({@code MPI_Comm_split}), in two steps so that nothing waits forever:
 *
 * <ol>
 *   <li>every rank's color, key and world rank, all-gathered over the parent with the backend's own
 *       all-gather: a wait with the timeout and the family's notices, like any other, so a rank that never
 *       splits is reported (and a failed family refuses at once) instead of leaving the others inside {@code
 *       MPI_Comm_split}, which has no timeout;
 *   <li>then {@code MPI_Comm_split}, which every rank has now reached: it returns promptly. The new
 *       communicator gets {@code MPI_ERRORS_RETURN}, its own stream, and joins the parent's family; its rank
 *       and size are checked against what the all-gather says MPI must give.
 * </ol>
 *
 * <p>Another rank's failure ends the all-gather only where it cannot complete ({@link
 * MpiInFlight#completingDespiteNotices}): a rank whose all-gather completed before the notice reached it is
 * inside {@code MPI_Comm_split} (and the new communicator's {@code MPI_Comm_dup}), so every rank whose
 * all-gather completes makes those calls, then closes what it made and gives up.
 * A rank that already knows of a failure refuses before it sends anything, so that none completes.
 */
final class MpiSplits {
  private MpiSplits() {}

  static MpiCommunicator split(MpiCommunicator parent, int color, int key, String label) {
    int n = parent.size();
    int[] table;
    // named in timeouts and in the notices other ranks get: a rank that never splits (split() refuses a
    // negative color on that rank alone, before anything is sent) leaves the others waiting here
    String exchange = "split(color " + color + ", key " + key + ") of " + parent.groupLabel() + " into " + label
        + " (every rank of " + parent.groupLabel() + " must call it; a color < 0 is refused on that rank alone)";
    MpiNotice putOff;
    try (I32Buffer mine = I32Buffer.allocate(parent, 3); I32Buffer all = I32Buffer.allocate(parent, 3L * n)) {
      mine.copyFrom(new int[] {color, key, parent.worldRank(parent.rank())});
      refuseIfNoticed(parent, exchange);
      putOff = parent.streamOf(parent.stream()).inFlight.completingDespiteNotices(
          MpiFamily.answerGrace(parent.timeout()), () -> parent.directCalls().labelled(exchange, () -> {
            parent.allGather(mine, all, parent.stream());
            parent.stream().synchronize();
          }));
      table = all.toArray();
    }
    List<Integer> members = new ArrayList<>(); // parent ranks of this color, by key, then parent rank
    for (int r = 0; r < n; r++) {
      if (table[3 * r] == color) {
        members.add(r);
      }
    }
    members.sort(Comparator.<Integer>comparingInt(r -> table[3 * r + 1]).thenComparingInt(r -> r));
    int expectedRank = members.indexOf(parent.rank());
    int[] worldRanks = members.stream().mapToInt(r -> table[3 * r + 2]).toArray();
    MpiRuntime.LOCK.lock();
    try (Arena arena = Arena.ofConfined()) {
      parent.requireMpiAlive();
      MemorySegment out = arena.allocate(JAVA_LONG);
      MemorySegment value = arena.allocate(JAVA_INT);
      String doing = "splitting " + parent.rankText() + " (color " + color + ", key " + key + ") into " + label;
      MpiRuntime.check("MPI_Comm_split", Mpi.MPI_Comm_split(parent.handle(), color, key, out.address()), doing);
      long child = out.get(JAVA_LONG, 0);
      MpiRuntime.check("MPI_Comm_set_errhandler", Mpi.MPI_Comm_set_errhandler(child, Mpi.Handles.ERRORS_RETURN),
          "setting MPI_ERRORS_RETURN on " + label);
      MpiRuntime.check("MPI_Comm_rank", Mpi.MPI_Comm_rank(child, value.address()), doing);
      int rank = value.get(JAVA_INT, 0);
      MpiRuntime.check("MPI_Comm_size", Mpi.MPI_Comm_size(child, value.address()), doing);
      int size = value.get(JAVA_INT, 0);
      if (rank != expectedRank || size != worldRanks.length) {
        throw new IllegalStateException(doing + ": MPI made rank " + rank + " of " + size + ", but the ranks' colors"
            + " and keys say rank " + expectedRank + " of " + worldRanks.length);
      }
      MpiCommunicator made = parent.child(child, rank, size, label, worldRanks); // collective too: MPI_Comm_dup
      if (putOff != null) { // made because the peers whose exchange completed are making it; closed again
        RankAbortedException gaveUp = parent.family().gaveUp(parent, exchange, putOff);
        made.close(); // the family has failed: no comparison of last calls, only the frees
        throw gaveUp;
      }
      return made;
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }

  /**
   * Gives up before sending anything if another rank's notice is here: the peers then never complete the
   * exchange, and none enters {@code MPI_Comm_split}.
   */
  private static void refuseIfNoticed(MpiCommunicator parent, String exchange) {
    MpiRuntime.LOCK.lock();
    try {
      parent.requireMpiAlive();
      MpiNotice notice = parent.family().poll();
      if (notice != null) {
        throw parent.family().gaveUp(parent, exchange, notice);
      }
    } finally {
      MpiRuntime.LOCK.unlock();
    }
  }
}
