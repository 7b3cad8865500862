package dev.commplan.runtime.local;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveCorrectnessSuite;

/** The correctness suite on the local backend, on 1, 2, 3, 4, 5 and 8 ranks (odd sizes catch slicing bugs). */
class LocalCollectiveCorrectnessTest extends CollectiveCorrectnessSuite {
  @Override
  protected Cluster cluster(int ranks) {
    return new LocalCluster(ranks);
  }

  @Override
  protected int[] worldSizes() {
    return new int[] {1, 2, 3, 4, 5, 8};
  }
}
