package dev.commplan.runtime;

/**
 * Work run once on every rank by {@link Cluster#call}, returning a value per rank.
 *
 * @param <T> the type of each rank's result
 */
@FunctionalInterface
public interface RankFunction<T> {
  /**
   * Runs this rank's share of the work.
   *
   * @param communicator this rank's communicator, open for the duration of the call; owned by the cluster
   * @return this rank's result, placed at index {@code communicator.rank()} of {@link Cluster#call}'s list
   * @throws Exception any failure; {@link Cluster#call} rethrows the first one and aborts the other ranks
   */
  T apply(Communicator communicator) throws Exception;
}
