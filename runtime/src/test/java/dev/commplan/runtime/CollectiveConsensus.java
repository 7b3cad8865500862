package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.timing.SteadyState;

/**
 * {@link SteadyState.Consensus} for ranks that share nothing but their communicator (MPI processes, or the
 * threads of a cluster): an all-reduce of the figures on the communicator's own stream, outside the timed
 * units, so that every rank ends its warm-up after the same unit. One rank needs none.
 */
public final class CollectiveConsensus {
  private CollectiveConsensus() {}

  /**
   * The consensus of {@code comm}'s ranks; call it from the rank's own thread, as the timed units.
   *
   * @param comm the communicator the timed units run on
   * @return every rank's figures averaged, through one all-reduce per unit
   */
  public static SteadyState.Consensus of(Communicator comm) {
    if (comm.size() == 1) {
      return SteadyState.Consensus.ALONE;
    }
    return values -> {
      try (F64Buffer sum = F64Buffer.allocate(comm, values.length)) {
        sum.copyFrom(values);
        comm.allReduce(sum, sum, ReduceOp.SUM, comm.stream());
        comm.stream().synchronize();
        double[] average = new double[values.length];
        sum.copyTo(average);
        for (int i = 0; i < average.length; i++) {
          average[i] /= comm.size();
        }
        return average;
      }
    };
  }
}
