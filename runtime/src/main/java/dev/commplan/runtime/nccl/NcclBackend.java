package dev.commplan.runtime.nccl;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommOptions;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import dev.commplan.runtime.bootstrap.Rendezvous;
import dev.commplan.runtime.launch.LaunchEnvironment;
import dev.commplan.runtime.launch.ProcessInfo;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.CheckedNccl;
import dev.commplan.runtime.nccl.binding.NcclEnvironment;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import dev.commplan.runtime.nccl.sharing.GpuSharingRules;
import dev.commplan.runtime.spi.FlightJob;

/**
 * The NCCL backend's entry points. The backend binds {@code libnccl.so.2} and {@code libcudart.so.13}
 * through {@code java.lang.foreign}: found by soname through the dynamic loader, or where the system
 * properties {@value NcclEnvironment#NCCL_PROPERTY} and {@value NcclEnvironment#CUDART_PROPERTY} say (a path
 * or a library name). It needs native access: {@code --enable-native-access=ALL-UNNAMED} on the class
 * path. Whatever is missing, the {@link BackendUnavailableException} says what was tried and what to do.
 */
public final class NcclBackend {
  private NcclBackend() {}

  /**
   * The system property that lets several ranks share one GPU: {@value}{@code =true}. NCCL runs them from
   * {@link NcclVersion#MULTI_RANK_GPU} on when {@code NCCL_MULTI_RANK_GPU_ENABLE} is non-zero (NCCL calls it
   * experimental). With this property CommPlan sets {@code NCCL_MULTI_RANK_GPU_ENABLE=1} for the process
   * before NCCL reads it (NCCL reads it once, at the process's first communicator: set the property before
   * then, on the java command line); a value already in the environment is used as it is, never
   * overwritten. Where ranks share a GPU, each rank's collectives are limited to a few CTAs, so that all of
   * them fit the GPU at once (without a limit, 4 ranks on one GPU can hang): none for 1–2 ranks a GPU, 4
   * for 3–4, 2 for 5–8, 1 above, unless {@value #MAX_CTAS_PROPERTY} or {@code NCCL_MAX_CTAS} says
   * otherwise. A cluster's and a communicator's {@code toString()} say how many ranks share each GPU and
   * which limit applies.
   */
  public static final String MULTI_RANK_GPU_PROPERTY = GpuSharingRules.MULTI_RANK_GPU_PROPERTY;

  /**
   * The system property that sets the CTA limit of ranks sharing a GPU ({@link #MULTI_RANK_GPU_PROPERTY}):
   * {@value}{@code =N} for at most N CTAs a rank, {@code none} (or 0) for NCCL's own choice. It is passed
   * as {@code ncclConfig_t.maxCTAs}; an {@code NCCL_MAX_CTAS} in the environment overrides it, as NCCL
   * lets the environment override the config. {@link #initRank} cannot know how many ranks share its GPU,
   * so there this property is the only source of a limit.
   */
  public static final String MAX_CTAS_PROPERTY = GpuSharingRules.MAX_CTAS_PROPERTY;

  /**
   * A cluster of {@code ranks} driven from this process, one thread per rank, rank {@code r} on CUDA device
   * {@code r % deviceCount()}: one rank per GPU, or several where there are more ranks than GPUs and {@link
   * #MULTI_RANK_GPU_PROPERTY} (or {@code NCCL_MULTI_RANK_GPU_ENABLE}) allows it on NCCL {@link
   * NcclVersion#MULTI_RANK_GPU} or newer.
   *
   * @param ranks the number of ranks, at least 1
   * @return a new cluster, which the caller closes
   * @throws BackendUnavailableException if native access is off, a library is missing, there is no CUDA
   *     device, or there are more ranks than devices and the loaded NCCL or the opt-in does not allow ranks
   *     to share a GPU (the message says which, the NCCL version needed and the one loaded)
   */
  public static Cluster cluster(int ranks) {
    return NcclCluster.create(ranks);
  }

  /**
   * Like {@link #cluster(int)}, with {@code options}: the timeout after which a rank waiting for its peers
   * fails with {@code CommTimeoutException} and its communicator is aborted (see {@link CommOptions}).
   * The no-options overload uses {@link CommOptions#defaults()}: 5 minutes, or the system property
   * {@value CommOptions#TIMEOUT_PROPERTY}.
   *
   * @param ranks the number of ranks, at least 1
   * @param options the timeout and other options every rank gets
   * @return a new cluster, which the caller closes
   */
  public static Cluster cluster(int ranks, CommOptions options) {
    return NcclCluster.create(ranks, options);
  }

  /**
   * One rank of a communicator spread over processes ({@code ncclCommInitRank}): every rank calls this
   * with the same {@code size} and {@code uniqueId} (made once by {@link #uniqueId()} and passed to the
   * others by any means), and its own {@code rank} and CUDA {@code device}. Blocks until all ranks have
   * joined. The caller owns the communicator and closes it. Ranks that share a GPU need the opt-in ({@link
   * #MULTI_RANK_GPU_PROPERTY}, applied here); this method cannot know how many do, so only {@link
   * #MAX_CTAS_PROPERTY} (or {@code NCCL_MAX_CTAS}) limits their CTAs ({@link #processCommunicator} knows).
   *
   * @param rank this rank, in {@code [0, size)}
   * @param size the number of ranks in the communicator
   * @param uniqueId the 128-byte id from {@link #uniqueId()}, the same on every rank
   * @param device the CUDA device this rank runs on; the calling thread is bound to it
   *     ({@code cudaSetDevice}) as NCCL requires
   * @return this rank's communicator, owned by the caller
   */
  public static NcclCommunicator initRank(int rank, int size, byte[] uniqueId, int device) {
    return initRank(rank, size, uniqueId, device, CommOptions.defaults());
  }

  /**
   * Like {@link #initRank(int, int, byte[], int)}, with {@code options} (the timeout of the communicator's
   * {@code synchronize()}; see {@link CommOptions}). {@code synchronize()} times out by itself; unlike in
   * {@link #cluster}, no watchdog times the host calls (a blocking {@code ncclGroupEnd} that waits for a
   * dead peer to connect is not interrupted).
   *
   * @param rank this rank, in {@code [0, size)}
   * @param size the number of ranks in the communicator
   * @param uniqueId the 128-byte id from {@link #uniqueId()}, the same on every rank
   * @param device the CUDA device this rank runs on; the calling thread is bound to it
   *     ({@code cudaSetDevice}) as NCCL requires
   * @param options the timeout and other options
   * @return this rank's communicator, owned by the caller
   */
  public static NcclCommunicator initRank(int rank, int size, byte[] uniqueId, int device, CommOptions options) {
    return initRank(rank, size, uniqueId, device, options, null);
  }

  /**
   * {@link #initRank(int, int, byte[], int, CommOptions)} with the GPU sharing {@link GpuSharingRules#prepare}
   * decided for the job ({@link #processCommunicator} knows how many ranks share each GPU), or null where
   * that is unknown.
   */
  private static NcclCommunicator initRank(int rank, int size, byte[] uniqueId, int device, CommOptions options,
      GpuSharing known) {
    Objects.requireNonNull(uniqueId, "uniqueId");
    Objects.requireNonNull(options, "options");
    if (size < 1 || rank < 0 || rank >= size) {
      throw new IllegalArgumentException("rank " + rank + " is not in [0, " + size + ")");
    }
    if (uniqueId.length != CheckedNccl.UNIQUE_ID_BYTES) {
      throw new IllegalArgumentException("an NCCL unique id has " + CheckedNccl.UNIQUE_ID_BYTES + " bytes, not "
          + uniqueId.length + " (make it with NcclBackend.uniqueId())");
    }
    int devices = NcclEnvironment.deviceCount();
    if (device < 0 || device >= devices) {
      throw new IllegalArgumentException("device " + device + " is not one of the " + devices
          + " CUDA devices here (0.." + (devices - 1) + ")");
    }
    NcclVersion version = NcclEnvironment.requireNccl();
    GpuSharing sharing = known != null ? known : GpuSharingRules.prepare(0, jobText(size), ONE_PER_GPU, version);
    CheckedCuda.cudaSetDevice(device);
    GpuSharingRules.beforeInit();
    long comm;
    try {
      comm = CheckedNccl.ncclCommInitRank(size, uniqueId, rank, sharing.maxCtas());
    } catch (NcclException e) {
      throw GpuSharingRules.explainInitFailure(e, version);
    }
    try {
      // The flight records' job id: the launcher's, or "nccl", with a digest of the unique id every rank shares
      FlightJob job = new FlightJob(FlightJob.sharedId("nccl", System.getenv(), uniqueId), "nccl", size,
          options.flightRecordDir());
      return new NcclCommunicator(comm, version, options, sharing, job);
    } catch (RuntimeException e) {
      CheckedNccl.ncclCommAbortQuietly(comm);
      throw e;
    }
  }

  /**
   * {@link #processCommunicator(ProcessInfo, Rendezvous.Options, CommOptions)} for the job the launcher's
   * variables describe ({@link LaunchEnvironment#fromEnvironment()}), with the default options.
   *
   * @return this process's communicator, owned by the caller
   */
  public static NcclCommunicator fromEnvironment() {
    return processCommunicator(LaunchEnvironment.fromEnvironment(), Rendezvous.Options.defaults(), CommOptions.defaults());
  }

  /**
   * This rank's communicator in a job of one rank per process: rank 0 makes the unique id ({@code
   * ncclGetUniqueId}), the TCP {@link Rendezvous} on {@code info}'s address broadcasts it, the ranks
   * compare which physical GPU each uses (a host and a PCI address, whatever devices each process sees),
   * and every rank calls {@code ncclCommInitRank} on CUDA device {@code localRank % deviceCount}. Where
   * several ranks share a GPU, {@link #MULTI_RANK_GPU_PROPERTY} says what that needs and the CTA limit is
   * chosen for the most ranks any GPU of the job carries. The rendezvous is closed before returning (NCCL
   * has its own connections from then on). If rank 0 cannot make the id (no NCCL there), or a rank cannot
   * start, it tells the others, which fail with its reason.
   *
   * <pre>{@code
   * ProcessInfo me = LaunchEnvironment.fromEnvironment();       // torchrun, Slurm or Open MPI variables
   * try (NcclCommunicator comm = NcclBackend.processCommunicator(me, Rendezvous.Options.defaults(),
   *     CommOptions.defaults())) {
   *   ... build plans on comm, execute them ...
   * }
   * }</pre>
   *
   * @param info where this process sits in its job: rank, size, local rank, rendezvous address
   * @param rendezvousOptions the rendezvous's timeout and shared secret
   * @param options the communicator's timeout and other options
   * @return this rank's communicator, owned by the caller
   * @throws dev.commplan.runtime.bootstrap.RendezvousException if the ranks do not all meet in time
   *     (naming the missing ones)
   * @throws BackendUnavailableException if NCCL or a GPU is missing here
   */
  public static NcclCommunicator processCommunicator(ProcessInfo info, Rendezvous.Options rendezvousOptions,
      CommOptions options) {
    Objects.requireNonNull(options, "options");
    try (Rendezvous rendezvous = Rendezvous.join(info, rendezvousOptions)) {
      byte[] id = null;
      if (info.rank() == 0) {
        try {
          id = uniqueId();
        } catch (RuntimeException e) {
          rendezvous.abort("rank 0 could not make the NCCL unique id: " + e.getMessage());
          throw e;
        }
      }
      id = rendezvous.broadcast(id);
      int device;
      GpuSharing sharing;
      try {
        device = info.device(deviceCount());
        // How many ranks share each GPU, the same answer on every rank: decides the opt-in and the CTA limit,
        // refused alike on every rank before any of them waits in NCCL's init.
        List<String> gpus = new ArrayList<>();
        for (byte[] gpu : rendezvous.allGather(GpuSharingRules.gpuIdentity(device).getBytes(StandardCharsets.UTF_8))) {
          gpus.add(new String(gpu, StandardCharsets.UTF_8));
        }
        sharing = GpuSharingRules.prepare(GpuSharingRules.ranksPerGpu(gpus), jobText(info.size()), ONE_PER_GPU,
            NcclEnvironment.requireNccl());
      } catch (RuntimeException e) {
        rendezvous.abort("rank " + info.rank() + " cannot start NCCL: " + e.getMessage());
        throw e;
      }
      return initRank(info.rank(), info.size(), id, device, options, sharing);
    }
  }

  private static final String ONE_PER_GPU = "start at most one process per GPU";

  private static String jobText(int processes) {
    return "this job of " + processes + " processes";
  }

  /**
   * A new NCCL unique id ({@code ncclGetUniqueId}), 128 bytes, for {@link #initRank}.
   *
   * @return the id, a new array; secret-ish: whoever has it can join the communicator
   */
  public static byte[] uniqueId() {
    NcclEnvironment.requireNccl();
    return CheckedNccl.ncclGetUniqueId();
  }

  /**
   * The loaded NCCL's version ({@code ncclGetVersion}).
   *
   * @return the version of the library loaded
   * @throws BackendUnavailableException if NCCL cannot be loaded (the message says why)
   */
  public static NcclVersion version() {
    return NcclEnvironment.requireNccl();
  }

  /**
   * The number of CUDA devices; throws {@link BackendUnavailableException} saying why when there is none.
   *
   * @return the number of devices this process sees ({@code cudaGetDeviceCount}), at least 1
   */
  public static int deviceCount() {
    return NcclEnvironment.deviceCount();
  }

  /**
   * Why {@link #cluster} of {@code ranks} cannot run here ("no CUDA device: cudaGetDeviceCount returned
   * cudaErrorNoDevice (100): ..."; "libnccl.so.2 not found (tried ...)"; for more ranks than devices, what
   * sharing a GPU needs: {@link #MULTI_RANK_GPU_PROPERTY}), or null when it can. Checks without creating a
   * communicator or changing the environment.
   *
   * @param ranks the number of ranks a cluster would have
   * @return the reason, for a user to read, or null
   */
  public static String unavailableReason(int ranks) {
    return NcclCluster.unavailableReason(ranks);
  }

  /**
   * A line about this machine for logs: NCCL and CUDA versions and where the libraries came from, and
   * whether several ranks may share a GPU ({@link #MULTI_RANK_GPU_PROPERTY}); names what is missing instead
   * where something is.
   *
   * @return the line, never null
   */
  public static String describeEnvironment() {
    StringBuilder sb = new StringBuilder();
    try {
      NcclEnvironment.requireCudart();
      int driver = CheckedCuda.cudaDriverGetVersion();
      sb.append("CUDA runtime ").append(CheckedCuda.cudaVersionString(CheckedCuda.cudaRuntimeGetVersion()))
          .append(" (").append(NcclEnvironment.cudartLoadedAs()).append("), ")
          .append(driver == 0 ? "no NVIDIA driver" : "driver supports CUDA " + CheckedCuda.cudaVersionString(driver));
      long raw = CheckedCuda.cudaGetDeviceCountRaw();
      int rc = (int) (raw >>> 32);
      sb.append(", ").append(rc == 0 ? (int) raw + " CUDA device(s)" : NcclEnvironment.noDeviceMessage(rc));
    } catch (BackendUnavailableException e) {
      sb.append(e.getMessage());
    }
    sb.append("; ");
    try {
      NcclVersion v = NcclEnvironment.requireNccl();
      sb.append("NCCL ").append(v).append(" (").append(NcclEnvironment.ncclLoadedAs()).append("); ")
          .append(GpuSharingRules.status(v));
    } catch (BackendUnavailableException e) {
      sb.append(e.getMessage());
    }
    return sb.toString();
  }
}
