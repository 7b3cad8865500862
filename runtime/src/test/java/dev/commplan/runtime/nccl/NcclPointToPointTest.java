package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.DataType;
import dev.commplan.conformance.PointToPointSuite;

/**
 * The send/receive suite on the NCCL backend at the world sizes of {@link GpuRanks} (one rank per GPU by
 * default; several on one GPU with NCCL 2.30 and the opt-in): pipelines, wrapped rings, both directions,
 * several steps with collectives, two sends to one peer, and the direct calls in a group and without one.
 * Skips, saying why, without a GPU or where no size runs.
 */
@NcclRanksGpuTest
class NcclPointToPointTest extends PointToPointSuite {
  @Override
  protected String backend() {
    return "nccl";
  }

  @Override
  protected Cluster cluster(int ranks) {
    return NcclBackend.cluster(ranks);
  }

  @Override
  protected int[] worldSizes() {
    return GpuRanks.runnable();
  }

  /** The fp8 types need NCCL 2.24 ({@link NcclVersion#FP8}); on an older NCCL they are left out. */
  @Override
  protected boolean supports(DataType type) {
    return !type.isFloat8() || NcclBackend.version().atLeast(NcclVersion.FP8);
  }
}
