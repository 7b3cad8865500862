package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.NonFiniteScan;
import java.util.List;

/**
 * A schedule resolved once to MPI's non-blocking collectives ({@link MpiCallTable}). Each enqueued step
 * first completes what is in flight (the step before it, whose results it may read), then starts all its
 * calls and returns; so {@code enqueue} of an n-step plan returns with the last step in flight. Allocates
 * nothing on the Java heap.
 */
final class MpiCompiledSchedule implements CompiledSchedule {
  private final MpiCommunicator comm;
  private final MpiCallTable table;

  MpiCompiledSchedule(MpiCommunicator comm, MpiCallTable table) {
    this.comm = comm;
    this.table = table;
  }

  @Override
  public void enqueueSteps(Stream stream, int fromIndex, int toIndex) {
    if (fromIndex < 0) {
      throw new IndexOutOfBoundsException(table.planName + ": step index " + fromIndex + " is negative");
    }
    MpiStream on = comm.streamOf(stream);
    table.checkMemory();
    int end = Math.min(toIndex, table.steps());
    for (int step = fromIndex; step < end; step++) {
      comm.run(table, step, on);
    }
  }

  /**
   * The finite check's search, on the host: it waits for the stream (the steps before it complete), then reads the
   * memory in place ({@link NonFiniteScan#onHost}).
   */
  @Override
  public NonFiniteScan nonFiniteScan(List<NonFiniteScan.Region> regions, U64Buffer findings) {
    return NonFiniteScan.onHost(regions, findings, memory -> memory instanceof MpiMemory m ? m.segment() : null);
  }

  @Override
  public String toString() {
    return "MpiCompiledSchedule[" + table.planName + ", " + table.steps() + " steps, " + comm + "]";
  }
}
