package dev.commplan.runtime.nccl.binding;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.CudaException;
import dev.commplan.runtime.nccl.NcclVersion;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;
import dev.commplan.runtime.nccl.binding.raw.ProcessEnvironment;

/**
 * What the NCCL backend needs from this JVM and machine, checked in order, each with a message that
 * says what to do: native access enabled, the CUDA runtime loadable, a CUDA device, NCCL loadable; and
 * what the process's environment holds for NCCL to read ({@link #getenv}, {@link #setenv}). Whether several
 * ranks may share a GPU is {@code sharing.GpuSharingRules}' to say.
 */
public final class NcclEnvironment {
  private NcclEnvironment() {}

  /** The system property naming the NCCL library to load: a path or a name. */
  public static final String NCCL_PROPERTY = NativeLibrary.NCCL_PROPERTY;
  /** The system property naming the CUDA runtime library to load: a path or a name. */
  public static final String CUDART_PROPERTY = NativeLibrary.CUDART_PROPERTY;

  private static volatile NcclVersion version;

  /** Native access must be enabled for the runtime's module before any library is opened. */
  public static void requireNativeAccess() {
    Module module = NcclEnvironment.class.getModule();
    if (!module.isNativeAccessEnabled()) {
      throw new BackendUnavailableException(NativeAccessMessage.forModule(module));
    }
  }

  /** Native access, then the CUDA runtime. */
  public static void requireCudart() {
    requireNativeAccess();
    NativeLibrary cudart = NativeLibrary.cudart();
    if (!cudart.isLoaded()) {
      throw new BackendUnavailableException(cudart.problem());
    }
  }

  /** Native access, then NCCL; reads NCCL's version once. */
  public static NcclVersion requireNccl() {
    requireNativeAccess();
    NativeLibrary nccl = NativeLibrary.nccl();
    if (!nccl.isLoaded()) {
      throw new BackendUnavailableException(nccl.problem());
    }
    NcclVersion v = version;
    if (v == null) {
      v = NcclVersion.decode(CheckedNccl.ncclGetVersion());
      if (v.major() < 2) {
        throw new BackendUnavailableException(nccl.loadedAs() + " is NCCL " + v + "; CommPlan needs NCCL 2");
      }
      version = v;
    }
    return v;
  }

  /** The number of CUDA devices; throws, saying why, when there is none. */
  public static int deviceCount() {
    requireCudart();
    long raw = CheckedCuda.cudaGetDeviceCountRaw();
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

  /** "no CUDA device: cudaGetDeviceCount returned cudaErrorNoDevice (100): no CUDA-capable device..." */
  public static String noDeviceMessage(int rc) {
    CudaException e = CheckedCuda.cudaError("cudaGetDeviceCount", rc); // names the code and clears the last error
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
        + CheckedCuda.cudaVersionString(driver) + ")";
  }

  private static int driverVersionOrZero() {
    try {
      return CheckedCuda.cudaDriverGetVersion();
    } catch (RuntimeException e) {
      return 0;
    }
  }

  /** {@return how the CUDA runtime was found ({@code "libcudart.so.13 (by the dynamic loader)"}), or null} */
  public static String cudartLoadedAs() {
    return NativeLibrary.cudart().loadedAs();
  }

  /** {@return how NCCL was found ({@code "libnccl.so.2 (by the dynamic loader)"}), or null} */
  public static String ncclLoadedAs() {
    return NativeLibrary.nccl().loadedAs();
  }

  /**
   * {@code getenv(name)}: the variable's value now in this process's environment, as NCCL and CUDA read it
   * (not {@link System#getenv}'s copy), or null where it is unset.
   */
  public static String getenv(String name) {
    return ProcessEnvironment.get(name);
  }

  /**
   * {@code setenv(name, value, 1)}, for NCCL and CUDA to read: only before the library that reads it starts
   * work ({@link ProcessEnvironment} says why).
   *
   * @throws IllegalStateException if libc refuses
   */
  public static void setenv(String name, String value) {
    ProcessEnvironment.set(name, value);
  }
}
