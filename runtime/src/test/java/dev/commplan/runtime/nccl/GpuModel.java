package dev.commplan.runtime.nccl;

import dev.commplan.runtime.nccl.binding.raw.NativeLibrary;
import org.junit.jupiter.api.Assumptions;

/**
 * Whether the GPU tests run against {@code gpu-model/}, the CPU model of the CUDA runtime and NCCL
 * ({@code -Dcommplan.nccl.library} and {@code -Dcommplan.cudart.library} naming {@code
 * libcommplan_gpumodel.so}), which says so by exporting {@code commplanGpuModel}. The model keeps CUDA's
 * and NCCL's ordering rules but runs at the host's speed, so a test that needs a GPU's speed skips there.
 */
public final class GpuModel {
  private GpuModel() {}

  /** Whether the loaded NCCL is the CPU model. */
  public static boolean loaded() {
    NativeLibrary nccl = NativeLibrary.nccl();
    return nccl.isLoaded() && nccl.has("commplanGpuModel");
  }

  /**
   * Skips the current test on the model, saying which property of real hardware it needs.
   *
   * @param what that property, e.g. "a GPU's copy bandwidth: 1,000 queued 1 GiB copies outlast 100 ms"
   */
  public static void assumeRealGpu(String what) {
    Assumptions.assumeFalse(loaded(), () -> "needs a real GPU: " + what
        + " (the CPU model in gpu-model/ keeps CUDA's and NCCL's rules, not their speed)");
  }
}
