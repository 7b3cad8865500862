package dev.commplan.runtime.nccl.sharing;

import dev.commplan.runtime.nccl.binding.NcclEnvironment;
import java.util.Locale;
import java.util.Objects;

/**
 * How many ranks of a world share each GPU, and what {@link GpuSharingRules} chose for that: the CTA limit
 * passed to NCCL (its communicators' and their splits' {@code ncclConfig_t.maxCTAs}) and where the opt-in
 * came from. One per rank's family: a split inherits its world's.
 *
 * @param ranksPerGpu the most ranks any one GPU carries: 1 for one rank per GPU, 0 where unknown (a
 *     communicator made by {@code NcclBackend.initRank} with the opt-in on)
 * @param maxCtas the CTA limit passed to NCCL, or 0 for none (NCCL's own choice, or {@code NCCL_MAX_CTAS})
 * @param ctaText the limit that applies and why, in words
 * @param optInText where {@code NCCL_MULTI_RANK_GPU_ENABLE} came from, in words
 * @param oneContext whether the ranks that share a GPU are threads of this one process (an in-JVM cluster),
 *     and so share the GPU's CUDA context, where a device-wide wait of one rank also waits for its peers'
 *     kernels ({@code memory.DeviceAllocator})
 * @param fences the host fences of the ranks that share a context, where splits are made and closed ({@link
 *     SharedContextFences}); null where {@code oneContext} is false or the fences are turned off
 * @param graphs whether captured plans are CUDA graphs: true but where ranks share a context ({@link
 *     #SHARED_CONTEXT_GRAPHS_PROPERTY})
 */
public record GpuSharing(int ranksPerGpu, int maxCtas, String ctaText, String optInText, boolean oneContext,
    SharedContextFences fences, boolean graphs) {
  /**
   * Whether captured plans are CUDA graphs where ranks of this process share a GPU ({@link #oneContext()}):
   * {@code auto} (the default) or {@code false}, no: a captured plan there executes its steps again at each
   * launch; {@code true}, yes. There, graphs of NCCL calls hung in runs 11 and 12 (8 ranks on one
   * communicator, and 4 ranks in a graph over two communicators; docs/gpu.md). One rank per GPU, or one
   * process per rank, always captures graphs.
   */
  public static final String SHARED_CONTEXT_GRAPHS_PROPERTY = "commplan.nccl.sharedContextGraphs";

  /** One rank per GPU: nothing shared, no limit, nothing to say. */
  public static final GpuSharing ONE_RANK_PER_GPU = new GpuSharing(1, 0, "", "", false, null, true);

  /** Sharing by ranks of separate processes, each its own CUDA context. */
  public GpuSharing(int ranksPerGpu, int maxCtas, String ctaText, String optInText) {
    this(ranksPerGpu, maxCtas, ctaText, optInText, false, null, true);
  }

  /**
   * The same sharing, by ranks that are threads of this process (a cluster's), with fences of their own;
   * one rank per GPU stays as it is.
   */
  public GpuSharing inOneContext() {
    return ranksPerGpu == 1 ? this : new GpuSharing(ranksPerGpu, maxCtas, ctaText, optInText, true,
        SharedContextFences.forOneContext(System.getProperty(SharedContextFences.PROPERTY)),
        graphsInSharedContext(System.getProperty(SHARED_CONTEXT_GRAPHS_PROPERTY)));
  }

  /**
   * {@return whether captured plans are CUDA graphs where ranks of this process share a GPU, as {@code
   * property} says}
   */
  public static boolean graphsInSharedContext(String property) {
    return setting(SHARED_CONTEXT_GRAPHS_PROPERTY, property, false,
        "captured plans replay their steps where ranks of this process share a GPU");
  }

  /**
   * What a communicator's or cluster's description adds: nothing for one rank per GPU, else {@code ", 8 ranks
   * share each GPU, at most 2 CTAs a rank (ncclConfig_t.maxCTAs, the rule for 5-8 ranks a GPU);
   * NCCL_MULTI_RANK_GPU_ENABLE=1 set by -Dcommplan.nccl.multiRankGpu=true"}.
   */
  public String describe() {
    if (ranksPerGpu == 1) {
      return "";
    }
    return ", " + (ranksPerGpu > 1 ? ranksPerGpu + " ranks share each GPU" : "ranks per GPU unknown")
        + (oneContext ? " in this process (" + variable(GpuSharingRules.QUEUES_VARIABLE) + ", "
            + variable(GpuSharingRules.CONNECT_VARIABLE) + (fences == null ? ", fences off" : "")
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
  public static boolean setting(String name, String value, boolean whenAuto, String autoMeans) {
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
