package dev.commplan.runtime.nccl;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;

/**
 * What the NCCL backend needs from this JVM and machine, checked in order, each with a message that
 * says what to do: native access enabled, the CUDA runtime loadable, a CUDA device, NCCL loadable; and
 * for more ranks than devices, what {@link NcclMultiRank} needs.
 */
final class NcclEnvironment {
  private NcclEnvironment() {}

  private static volatile NcclVersion version;

  /** Native access must be enabled for the runtime's module before any library is opened. */
  static void requireNativeAccess() {
    Module module = NcclEnvironment.class.getModule();
    if (!module.isNativeAccessEnabled()) {
      throw new BackendUnavailableException(NativeAccessMessage.forModule(module));
    }
  }

  /** Native access, then the CUDA runtime. */
  static void requireCudart() {
    requireNativeAccess();
    NativeLibrary cudart = NativeLibrary.cudart();
    if (!cudart.isLoaded()) {
      throw new BackendUnavailableException(cudart.problem());
    }
  }

  /** Native access, then NCCL; reads NCCL's version once. */
  static NcclVersion requireNccl() {
    requireNativeAccess();
    NativeLibrary nccl = NativeLibrary.nccl();
    if (!nccl.isLoaded()) {
      throw new BackendUnavailableException(nccl.problem());
    }
    NcclVersion v = version;
    if (v == null) {
      v = NcclVersion.decode(Checked.ncclGetVersion());
      if (v.major() < 2) {
        throw new BackendUnavailableException(nccl.loadedAs() + " is NCCL " + v + "; CommPlan needs NCCL 2");
      }
      version = v;
    }
    return v;
  }

  /** The number of CUDA devices; throws, saying why, when there is none. */
  static int deviceCount() {
    requireCudart();
    long raw = Checked.cudaGetDeviceCountRaw();
    int rc = (int) (raw >>> 32);
    if (rc != 0) {
      throw new BackendUnavailableException(noDeviceMessage(rc));
    }
    int count = (int) raw;
    if (count == 0) {
      throw new BackendUnavailableException("no CUDA device: cudaGetDeviceCount found 0 devices");
    }
    return count;
  }

  /** How many ranks a cluster of {@code ranks} puts on its busiest device: {@code ceil(ranks / devices)}. */
  static int ranksPerGpu(int ranks, int devices) {
    return (ranks + devices - 1) / devices;
  }

  /** What a cluster of {@code ranks} on {@code devices} devices is, for messages. */
  static String clusterText(int ranks, int devices) {
    return "an NCCL cluster of " + ranks + (ranks == 1 ? " rank" : " ranks") + " on " + devices + " CUDA device"
        + (devices == 1 ? "" : "s");
  }

  /** What else a cluster's user can do than share GPUs, for messages. */
  static String fewerRanks(int devices) {
    return "ask for at most " + devices + (devices == 1 ? " rank" : " ranks") + " here (one per GPU)";
  }

  /** "no CUDA device: cudaGetDeviceCount returned cudaErrorNoDevice (100): no CUDA-capable device..." */
  static String noDeviceMessage(int rc) {
    CudaException e = Checked.cudaError("cudaGetDeviceCount", rc); // names the code and clears the last error
    String returned = "cudaGetDeviceCount returned " + e.cudaName() + " (" + rc + "): " + e.errorString();
    if (rc == Cuda.ERROR_NO_DEVICE) {
      return "no CUDA device: " + returned;
    }
    int driver = driverVersionOrZero();
    if (driver == 0) {
      return "no CUDA device: no NVIDIA driver is installed (cudaDriverGetVersion reports none); "
          + returned;
    }
    return "no usable CUDA device: " + returned + " (driver supports CUDA "
        + Checked.cudaVersionString(driver) + ")";
  }

  private static int driverVersionOrZero() {
    try {
      return Checked.cudaDriverGetVersion();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  /**
   * Why the NCCL backend cannot run {@code ranks} ranks here, or null when it can: the same checks and
   * messages as {@link NcclBackend#cluster}, without throwing or changing anything (more ranks than devices
   * are fine where {@link NcclMultiRank#refusal} finds nothing).
   */
  static String unavailableReason(int ranks) {
    try {
      int devices = deviceCount();
      NcclVersion v = requireNccl();
      return NcclMultiRank.refusal(ranksPerGpu(ranks, devices), clusterText(ranks, devices), fewerRanks(devices), v,
          NcclMultiRank.optIn());
    } catch (BackendUnavailableException | IllegalArgumentException e) {
      return e.getMessage();
    }
  }
}
