package dev.commplan.spicheck;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.CommPlanException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.RankFunction;
import dev.commplan.runtime.spi.RankSupervisor;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.function.IntPredicate;

/**
 * {@code ranks} ranks as threads of this JVM. The threads and the failure rules are the SPI's {@link
 * RankSupervisor}'s (the first failure aborts the run, the others are woken, the call throws naming the
 * rank); this backend says only what aborting means here: the {@link Family} of the ranks' groups (the
 * world's and every split's) breaks, so that every rank waiting in a collective, a receive or a split wakes,
 * and the cluster refuses further runs.
 */
final class SpiCheckCluster implements Cluster {
  private final Family family = new Family();
  private final SpiCheckCommunicator[] communicators;
  private final RankSupervisor supervisor;

  SpiCheckCluster(int ranks, CommOptions options) {
    Objects.requireNonNull(options, "options");
    this.supervisor = new RankSupervisor(SpiCheckBackend.NAME, ranks, options.timeout()); // checks ranks >= 1
    int[] worldRanks = new int[ranks];
    Arrays.setAll(worldRanks, rank -> rank);
    Meeting world = new Meeting(family, worldRanks, "world", options.timeout());
    this.communicators = new SpiCheckCommunicator[ranks];
    for (int rank = 0; rank < ranks; rank++) {
      communicators[rank] = new SpiCheckCommunicator(world, rank, options);
    }
    supervisor.control(new RankSupervisor.RankControl() {
      @Override
      public Communicator communicator(int rank) {
        return communicators[rank];
      }

      @Override
      public void abortRanks(int failedRank, Throwable cause, IntPredicate stillRunning) {
        family.abort(failedRank, cause);
      }

      /** Never: a broken family stays broken. */
      @Override
      public boolean usableAfterFailure() {
        return false;
      }
    });
  }

  @Override
  public int size() {
    return communicators.length;
  }

  @Override
  public String backendName() {
    return SpiCheckBackend.NAME;
  }

  @Override
  public <T> List<T> call(RankFunction<T> function) {
    return supervisor.call(function);
  }

  /**
   * Wakes any rank still in a call, closes every communicator (its splits first, freeing their memory) and the
   * threads.
   */
  @Override
  public void close() {
    family.abort(-1, new CommPlanException("the spi-check cluster was closed"));
    for (SpiCheckCommunicator comm : communicators) {
      comm.close();
    }
    supervisor.close();
  }
}
