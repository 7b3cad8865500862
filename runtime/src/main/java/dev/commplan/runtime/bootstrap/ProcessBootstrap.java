package dev.commplan.runtime.bootstrap;

import dev.commplan.runtime.launch.LaunchEnvironment;
import dev.commplan.runtime.launch.ProcessInfo;
import dev.commplan.runtime.nccl.NcclBackend;
import dev.commplan.runtime.nccl.NcclCommunicator;

/**
 * Builds this process's communicator in a job with one rank per process: reads the launcher's variables
 * ({@link LaunchEnvironment}), meets the other ranks at the TCP {@link Rendezvous} on {@code
 * MASTER_ADDR:MASTER_PORT}, and passes rank 0's NCCL unique id to all of them.
 *
 * <pre>{@code
 * ProcessInfo me = LaunchEnvironment.fromEnvironment();       // torchrun, Slurm or Open MPI variables
 * try (NcclCommunicator comm = ProcessBootstrap.nccl(me, Rendezvous.Options.defaults())) {
 *   ... build plans on comm, execute them ...
 * }
 * }</pre>
 */
public final class ProcessBootstrap {
  private ProcessBootstrap() {}

  /** {@link #nccl(ProcessInfo, Rendezvous.Options)} from the environment with the default options. */
  public static NcclCommunicator ncclFromEnvironment() {
    return nccl(LaunchEnvironment.fromEnvironment(), Rendezvous.Options.defaults());
  }

  /**
   * This rank's NCCL communicator: rank 0 makes the unique id ({@code ncclGetUniqueId}), the rendezvous
   * broadcasts it, and every rank calls {@code ncclCommInitRank} on CUDA device {@code localRank %
   * deviceCount}. The rendezvous is closed before returning (NCCL has its own connections from then on).
   * If rank 0 cannot make the id (no NCCL there), it tells the others, which fail with its reason.
   *
   * @throws RendezvousException if the ranks do not all meet in time (naming the missing ones)
   * @throws dev.commplan.runtime.BackendUnavailableException if NCCL or a GPU is missing here
   */
  public static NcclCommunicator nccl(ProcessInfo info, Rendezvous.Options options) {
    try (Rendezvous rendezvous = Rendezvous.join(info, options)) {
      byte[] id = null;
      if (info.rank() == 0) {
        try {
          id = NcclBackend.uniqueId();
        } catch (RuntimeException e) {
          rendezvous.abort("rank 0 could not make the NCCL unique id: " + e.getMessage());
          throw e;
        }
      }
      id = rendezvous.broadcast(id);
      int device = info.device(NcclBackend.deviceCount());
      return NcclBackend.initRank(info.rank(), info.size(), id, device);
    }
  }
}
