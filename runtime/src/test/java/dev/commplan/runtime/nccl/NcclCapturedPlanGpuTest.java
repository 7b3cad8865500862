package dev.commplan.runtime.nccl;

import dev.commplan.conformance.CapturedPlanSuite;
import dev.commplan.runtime.Cluster;
import dev.commplan.conformance.CollectiveReference;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.sharing.GpuSharing;

/**
 * The shared {@link CapturedPlanSuite} on the NCCL backend, where a captured plan is a CUDA graph: every
 * collective × data type × op or root × in and out of place captured once and launched on fresh inputs,
 * each launch checked against the reference; a multi-step plan launched 200 times with host writes in
 * between, interleaved with execute and executeStep; the misuse cases. At the world sizes of {@link
 * GpuRanks} (one rank per GPU by default; several on one GPU with NCCL 2.30 and the opt-in, where a plan
 * replays its steps unless graphs are asked for). Skips, saying why, where there is no GPU or no size runs.
 */
@NcclRanksGpuTest
class NcclCapturedPlanGpuTest extends CapturedPlanSuite {
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

  /**
   * CUDA graphs, but where ranks of this process share a GPU (more ranks than devices): there the plan
   * replays its steps, unless {@value GpuSharing#SHARED_CONTEXT_GRAPHS_PROPERTY} is true.
   */
  @Override
  protected boolean expectsGraph(int ranks) {
    return ranks <= NcclBackend.deviceCount()
        || "true".equalsIgnoreCase(System.getProperty(GpuSharing.SHARED_CONTEXT_GRAPHS_PROPERTY, "").strip());
  }

  /** NCCL passes partial sums between GPUs in the buffer's own type (see NcclCollectiveCorrectnessTest). */
  @Override
  protected double accumulationRoundoff(DataType type) {
    return CollectiveReference.typeAccumulation(type);
  }
}
