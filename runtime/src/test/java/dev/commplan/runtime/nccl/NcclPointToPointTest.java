package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.PointToPointSuite;

/** The send/receive suite on the NCCL backend, one rank per GPU of this machine; skips without a GPU. */
@NcclGpuTest
class NcclPointToPointTest extends PointToPointSuite {
  @Override
  protected Cluster cluster(int ranks) {
    return NcclBackend.cluster(ranks);
  }

  @Override
  protected int[] worldSizes() {
    return new int[] {NcclBackend.deviceCount()};
  }

  /** The fp8 types need NCCL 2.24 ({@link NcclVersion#FP8}); on an older NCCL they are left out. */
  @Override
  protected boolean supports(DataType type) {
    return !type.isFloat8() || NcclBackend.version().atLeast(NcclVersion.FP8);
  }
}
