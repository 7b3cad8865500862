package dev.commplan.runtime.local;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.PointToPointSuite;

/** The send/receive suite on the local backend, on 1, 2, 3, 4, 5 and 8 ranks. */
class LocalPointToPointTest extends PointToPointSuite {
  @Override
  protected Cluster cluster(int ranks) {
    return new LocalCluster(ranks);
  }

  @Override
  protected int[] worldSizes() {
    return new int[] {1, 2, 3, 4, 5, 8};
  }
}
