package dev.commplan.bench.jmh;

/**
 * {@link LaunchBench} on the NCCL backend (one rank, one GPU): {@code launch} is a CUDA graph launch.
 * {@code commplan-bench jmh} leaves it out, saying why, where NCCL cannot run.
 */
public class NcclLaunchBench extends LaunchBench {
  @Override
  protected String backend() {
    return "nccl";
  }
}
