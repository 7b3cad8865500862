package dev.commplan.bench.jmh;

/**
 * {@link ExecuteBench} on the NCCL backend (one rank, one GPU). {@code commplan-bench jmh} leaves it out,
 * saying why, where NCCL cannot run; run directly without a GPU, its setup fails with the backend's
 * message.
 */
public class NcclExecuteBench extends ExecuteBench {
  @Override
  protected String backend() {
    return "nccl";
  }
}
