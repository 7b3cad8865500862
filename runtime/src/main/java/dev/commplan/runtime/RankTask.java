package dev.commplan.runtime;

/** Work run once on every rank by {@link Cluster#run}. */
@FunctionalInterface
public interface RankTask {
  void run(Communicator communicator) throws Exception;
}
