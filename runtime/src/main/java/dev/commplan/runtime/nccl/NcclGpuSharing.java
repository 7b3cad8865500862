package dev.commplan.runtime.nccl;

import dev.commplan.runtime.nccl.binding.NcclEnvironment;
import java.util.Locale;
import java.util.Objects;

/**
 * How many ranks of a world share each GPU, and what {@link NcclMultiRank} chose for that: the CTA limit
 * passed to NCCL (its communicators' and their splits' {@code ncclConfig_t.maxCTAs}) and where the opt-in
 * came from. One per rank's family: a split inherits its world's.
 *
 * @param ranksPerGpu the most ranks any one GPU carries: 1 for one rank per GPU, 0 where unknown (a
 *     communicator made by {@link NcclBackend#initRank} with the opt-in on)
 * @param maxCtas the CTA limit passed to NCCL, or 0 for none (NCCL's own choice, or {@code NCCL_MAX_CTAS})
 * @param ctaText the limit that applies and why, in words
 * @param optInText where {@code NCCL_MULTI_RANK_GPU_ENABLE} came from, in words
 * @param oneContext whether the ranks that share a GPU are threads of this one process (an in-JVM cluster),
 *     and so share the GPU's CUDA context, where a device-wide wait of one rank also waits for its peers'
 *     kernels ({@link DeviceAllocator})
 * @param fences the host fences of the ranks that share a context, where splits are made and closed ({@link
 *     SharedContextFences}); null where {@code oneContext} is false or the fences are turned off
 * @param graphs whether captured plans are CUDA graphs: true but where ranks share a context ({@link
 *     NcclGraphs#SHARED_CONTEXT_PROPERTY})
 */
record NcclGpuSharing(int ranksPerGpu, int maxCtas, String ctaText, String optInText, boolean oneContext,
    SharedContextFences fences, boolean graphs) {
  /** One rank per GPU: nothing shared, no limit, nothing to say. */
  static final NcclGpuSharing ONE_RANK_PER_GPU = new NcclGpuSharing(1, 0, "", "", false, null, true);

  /** Sharing by ranks of separate processes, each its own CUDA context. */
  NcclGpuSharing(int ranksPerGpu, int maxCtas, String ctaText, String optInText) {
    this(ranksPerGpu, maxCtas, ctaText, optInText, false, null, true);
  }

  /**
   * The same sharing, by ranks that are threads of this process (a cluster's), with fences of their own;
   * one rank per GPU stays as it is.
   */
  NcclGpuSharing inOneContext() {
    return ranksPerGpu == 1 ? this : new NcclGpuSharing(ranksPerGpu, maxCtas, ctaText, optInText, true,
        SharedContextFences.forOneContext(System.getProperty(SharedContextFences.PROPERTY)),
        NcclGraphs.inSharedContext(System.getProperty(NcclGraphs.SHARED_CONTEXT_PROPERTY)));
  }

  /**
   * What a communicator's or cluster's description adds: nothing for one rank per GPU, else {@code ", 8 ranks
   * share each GPU, at most 2 CTAs a rank (ncclConfig_t.maxCTAs, the rule for 5-8 ranks a GPU);
   * NCCL_MULTI_RANK_GPU_ENABLE=1 set by -Dcommplan.nccl.multiRankGpu=true"}.
   */
  String describe() {
    if (ranksPerGpu == 1) {
      return "";
    }
    return ", " + (ranksPerGpu > 1 ? ranksPerGpu + " ranks share each GPU" : "ranks per GPU unknown")
        + (oneContext ? " in this process (" + variable(NcclMultiRank.QUEUES_VARIABLE) + ", "
            + variable(NcclMultiRank.CONNECT_VARIABLE) + (fences == null ? ", fences off" : "")
            + (graphs ? "" : ", captured plans replay their steps") + ")" : "")
        + ", " + ctaText + "; " + optInText;
  }

  /**
   * A switch of ranks that share a context, as its system property says: {@code auto} or unset ({@code
   * whenAuto}), {@code true} or {@code false}, any case.
   *
   * @param name the property's name, for the refusal
   * @param value its value, or null
   * @param whenAuto what {@code auto} chooses
   * @param autoMeans what {@code auto} does, in words, for the refusal
   * @throws IllegalArgumentException naming the property and its value where it is none of those
   */
  static boolean setting(String name, String value, boolean whenAuto, String autoMeans) {
    if (value == null || value.isBlank()) {
      return whenAuto;
    }
    return switch (value.strip().toLowerCase(Locale.ROOT)) {
      case "auto" -> whenAuto;
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException("the system property " + name + " is '" + value
          + "'; it is auto (" + autoMeans + "), true or false");
    };
  }

  private static String variable(String name) {
    return name + "=" + Objects.requireNonNullElse(NcclEnvironment.getenv(name), "(unset)");
  }
}
