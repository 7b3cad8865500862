package dev.commplan.runtime.mpi;

import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.CompiledSchedule;

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

  @Override
  public String toString() {
    return "MpiCompiledSchedule[" + table.planName + ", " + table.steps() + " steps, " + comm + "]";
  }
}
