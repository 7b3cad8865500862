package dev.commplan.runtime;

/** Work run once on every rank by {@link Cluster#call}, returning a value per rank. */
@FunctionalInterface
public interface RankFunction<T> {
  T apply(Communicator communicator) throws Exception;
}
