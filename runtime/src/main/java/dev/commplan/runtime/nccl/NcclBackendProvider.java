package dev.commplan.runtime.nccl;

import dev.commplan.runtime.Backend;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.bootstrap.Rendezvous;
import dev.commplan.runtime.launch.ProcessInfo;

/** The NCCL backend as {@link Backend} {@code "nccl"} (see {@link NcclBackend} for its entry points). */
public final class NcclBackendProvider implements Backend {
  /** For {@link java.util.ServiceLoader}; use {@code Backends} to get one. */
  public NcclBackendProvider() {}

  @Override
  public String name() {
    return "nccl";
  }

  /** Why NCCL cannot run one rank here (native access, the libraries, a CUDA device), or null. */
  @Override
  public String unavailableReason() {
    return NcclBackend.unavailableReason(1);
  }

  @Override
  public Cluster cluster(int ranks, CommOptions options) {
    return NcclBackend.cluster(ranks, options);
  }

  /** Through the TCP rendezvous with its default options ({@link NcclBackend#processCommunicator}). */
  @Override
  public Communicator processCommunicator(ProcessInfo info, CommOptions options) {
    return NcclBackend.processCommunicator(info, Rendezvous.Options.defaults(), options);
  }
}
