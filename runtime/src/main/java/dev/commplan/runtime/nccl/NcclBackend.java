package dev.commplan.runtime.nccl;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Cluster;

/** The NCCL backend's entry point. */
public final class NcclBackend {
  private NcclBackend() {}

  /** A cluster of {@code ranks} GPUs driven from this process ({@code ncclCommInitAll}). */
  public static Cluster cluster(int ranks) {
    throw new BackendUnavailableException("the NCCL backend is being written (issue 3)");
  }
}
