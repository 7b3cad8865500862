package dev.commplan.runtime;

/** Work run once on every rank by {@link Cluster#run}. */
@FunctionalInterface
public interface RankTask {
  /**
   * Runs this rank's share of the work.
   *
   * @param communicator this rank's communicator, open for the duration of the call; owned by the cluster
   * @throws Exception any failure; {@link Cluster#run} rethrows the first one and aborts the other ranks
   */
  void run(Communicator communicator) throws Exception;
}
