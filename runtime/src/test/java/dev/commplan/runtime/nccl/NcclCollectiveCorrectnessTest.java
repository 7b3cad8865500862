package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CollectiveCorrectnessSuite;
import dev.commplan.runtime.CollectiveReference;
import dev.commplan.runtime.DataType;

/**
 * The correctness suite on the NCCL backend, at the one world size this machine has GPUs for (one rank
 * per GPU: NCCL refuses two ranks on one GPU). Skips, saying why, where there is no GPU.
 */
@NcclGpuTest
class NcclCollectiveCorrectnessTest extends CollectiveCorrectnessSuite {
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

  /** NCCL passes partial sums between GPUs in the buffer's own type, so F16/BF16 sums round per hop. */
  @Override
  protected double accumulationRoundoff(DataType type) {
    return CollectiveReference.typeAccumulation(type);
  }
}
