package dev.commplan.runtime.nccl.sharing;

import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.nccl.NcclVersion;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.NcclEnvironment;
import java.io.IOException;
import java.net.InetAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Several ranks of a communicator on one GPU, which NCCL allows from {@link NcclVersion#MULTI_RANK_GPU} on
 * when {@value #VARIABLE} is non-zero (NCCL calls it experimental). Each rule in one place:
 *
 * <ul>
 *   <li><b>Opt-in</b> ({@link #refusal}): the variable set in the environment already, or {@value
 *       #MULTI_RANK_GPU_PROPERTY}{@code =true}, with which CommPlan sets {@code
 *       NCCL_MULTI_RANK_GPU_ENABLE=1} for this process (libc {@code setenv}) before NCCL reads it. NCCL reads
 *       it once, when the process makes its first communicator, and keeps that value ({@code NCCL_PARAM}
 *       caches it), so the property works only before the process's first NCCL communicator; after that
 *       the refusal says so. A value the user set, 0 included, is never overwritten.
 *   <li><b>The CTA limit</b> ({@link #ctaRule}, overridden by {@value #MAX_CTAS_PROPERTY}):
 *       passed as {@code ncclConfig_t.maxCTAs} to {@code ncclCommInitRankConfig} and {@code ncclCommSplit}
 *       rather than set in the environment, so that it is the communicator's own; a user's {@value
 *       #MAX_CTAS_VARIABLE} still wins (NCCL lets the environment override the config), and {@link
 *       GpuSharing#describe()} says which one applies.
 *   <li><b>Which ranks share a GPU</b>: in a cluster, rank {@code r} is on device {@code r % devices}; in a
 *       job of one process per rank the processes compare {@link #gpuIdentity} (the host's boot id and the
 *       device's PCI address, right whatever {@code CUDA_VISIBLE_DEVICES} each process has) and every one
 *       decides on the most ranks any GPU of the job carries, so that all make the same choice.
 * </ul>
 *
 * <p>The state here is the process's (the environment, and what NCCL has read of it), so it is static.
 */
public final class GpuSharingRules {
  private GpuSharingRules() {}

  /**
   * The system property that lets several ranks share one GPU ({@code true}); {@code
   * NcclBackend.MULTI_RANK_GPU_PROPERTY} says it to users.
   */
  public static final String MULTI_RANK_GPU_PROPERTY = "commplan.nccl.multiRankGpu";
  /**
   * The system property that sets the CTA limit of ranks sharing a GPU ({@code N}, or {@code none});
   * {@code NcclBackend.MAX_CTAS_PROPERTY} says it to users.
   */
  public static final String MAX_CTAS_PROPERTY = "commplan.nccl.maxCtas";

  /** NCCL's opt-in: non-zero lets ranks of a communicator share a GPU. */
  public static final String VARIABLE = "NCCL_MULTI_RANK_GPU_ENABLE";
  /** CUDA's number of hardware queues per context ({@link #prepareSharedContext}). */
  public static final String QUEUES_VARIABLE = "CUDA_DEVICE_MAX_CONNECTIONS";
  /** The value {@link #prepareSharedContext} sets: CUDA's most. */
  public static final String QUEUES = "32";
  /** NCCL's choice between connecting peers at init (0) and at their first collective (1, its default). */
  public static final String CONNECT_VARIABLE = "NCCL_RUNTIME_CONNECT";
  /** NCCL's own CTA limit, which overrides {@code ncclConfig_t.maxCTAs}. */
  public static final String MAX_CTAS_VARIABLE = "NCCL_MAX_CTAS";

  /** Whether a communicator was made in this process yet, and the variable's value then (what NCCL keeps). */
  private static boolean initSeen;
  private static String variableAtFirstInit;
  /** Whether {@link #prepare} set the variable (for what descriptions say of it). */
  private static boolean setHere;

  /**
   * What decides whether ranks may share a GPU here.
   *
   * @param variable {@value #VARIABLE} in the environment now, or null
   * @param property {@value #MULTI_RANK_GPU_PROPERTY}, or null
   * @param ncclReadIt whether this process made an NCCL communicator already (NCCL has read the variable)
   * @param variableWhenRead the variable's value then, or null
   * @param setHere whether CommPlan set the variable (for our property) earlier in this process
   */
  public record OptIn(String variable, String property, boolean ncclReadIt, String variableWhenRead, boolean setHere) {
    /** An opt-in CommPlan has not set the variable for. */
    public OptIn(String variable, String property, boolean ncclReadIt, String variableWhenRead) {
      this(variable, property, ncclReadIt, variableWhenRead, false);
    }

    /** Whether {@code variable} (as NCCL reads it: a number, non-zero) is on. */
    public static boolean enabled(String variable) {
      if (variable == null) {
        return false;
      }
      try {
        return Long.decode(variable.strip()) != 0;
      } catch (NumberFormatException e) {
        return false; // NCCL's strtoll reads no number as 0
      }
    }

    /** Whether our property asks for it: {@code true}; null or {@code false} is no; anything else is refused. */
    public boolean propertyOn() {
      if (property == null || property.isBlank() || property.strip().equalsIgnoreCase("false")) {
        return false;
      }
      if (property.strip().equalsIgnoreCase("true")) {
        return true;
      }
      throw new IllegalArgumentException("the system property " + MULTI_RANK_GPU_PROPERTY + " is '"
          + property + "'; it is true or false");
    }
  }

  /** The opt-in as it stands now in this process. */
  public static synchronized OptIn optIn() {
    return new OptIn(NcclEnvironment.getenv(VARIABLE), System.getProperty(MULTI_RANK_GPU_PROPERTY),
        initSeen, variableAtFirstInit, setHere);
  }

  /**
   * Called just before every communicator is made: applies our property's opt-in at the process's first
   * communicator ({@link #setAtFirstInit}), then records what NCCL reads of the variable.
   */
  public static synchronized void beforeInit() {
    if (!initSeen) {
      if (setAtFirstInit(optIn())) {
        setVariableHere();
      }
      variableAtFirstInit = NcclEnvironment.getenv(VARIABLE);
      initSeen = true;
    }
  }

  /**
   * Whether the variable must be set before this process's first communicator, whatever its size: NCCL reads
   * it once, there, so a one-rank-per-GPU communicator made first would otherwise lock every later shared GPU
   * out for the life of the process. Setting it changes nothing for ranks on GPUs of their own.
   */
  public static boolean setAtFirstInit(OptIn optIn) {
    return !optIn.ncclReadIt() && optIn.variable() == null && optIn.propertyOn();
  }

  /**
   * What {@code NcclBackend.describeEnvironment()} says of several ranks a GPU on NCCL {@code loaded}:
   * {@code "several ranks a GPU: needs NCCL 2.30.3"}, {@code "... allowed (NCCL_MULTI_RANK_GPU_ENABLE=1 from
   * the environment)"}, {@code "... not opted in"}.
   */
  public static String status(NcclVersion loaded) {
    if (!loaded.atLeast(NcclVersion.MULTI_RANK_GPU)) {
      return "several ranks a GPU: needs NCCL " + NcclVersion.MULTI_RANK_GPU;
    }
    try {
      OptIn o = optIn();
      if (refusal(2, "", "", loaded, o) == null) {
        return "several ranks a GPU: allowed (" + (o.variable() != null ? VARIABLE + "=" + o.variable()
            : "-D" + MULTI_RANK_GPU_PROPERTY + "=true") + ")";
      }
      return "several ranks a GPU: not allowed (" + (o.variable() != null && !OptIn.enabled(o.variable())
          ? VARIABLE + "=" + o.variable() : o.variable() == null && !o.propertyOn() ? "no opt-in: -D"
          + MULTI_RANK_GPU_PROPERTY + "=true or " + VARIABLE + "=1"
          : "NCCL read " + VARIABLE + " unset at this process's first communicator") + ")";
    } catch (IllegalArgumentException e) {
      return "several ranks a GPU: " + e.getMessage();
    }
  }

  /**
   * The most CTAs (channels) each rank's collectives may use when {@code ranksPerGpu} ranks share a GPU, or
   * 0 for no limit (NCCL's own choice): none for 1–2 ranks, 4 for 3–4, 2 for 5–8, 1 above. NCCL's docs
   * for {@value #VARIABLE} say that ranks sharing a GPU without enough SMs for all their channels hang, and
   * advise {@value #MAX_CTAS_VARIABLE}; docs/gpu.md gives the H200 measurements this rule follows.
   *
   * @param ranksPerGpu the most ranks any one GPU carries
   */
  public static int ctaRule(int ranksPerGpu) {
    if (ranksPerGpu <= 2) {
      return 0;
    }
    if (ranksPerGpu <= 4) {
      return 4;
    }
    return ranksPerGpu <= 8 ? 2 : 1;
  }

  /**
   * The limit to use: {@value #MAX_CTAS_PROPERTY} when set (a positive number, or {@code none}
   * or 0 for no limit), else {@link #ctaRule}.
   *
   * @param property the property's value, or null
   * @throws IllegalArgumentException if the property is set to something else
   */
  public static int ctaLimit(int ranksPerGpu, String property) {
    if (property == null || property.isBlank()) {
      return ctaRule(ranksPerGpu);
    }
    String p = property.strip();
    if (p.equalsIgnoreCase("none")) {
      return 0;
    }
    try {
      int limit = Integer.parseInt(p);
      if (limit >= 0) {
        return limit;
      }
    } catch (NumberFormatException e) {
      // refused below
    }
    throw new IllegalArgumentException("the system property " + MAX_CTAS_PROPERTY + " is '" + property
        + "'; it is a positive number of CTAs a rank, or none (0) for NCCL's own choice");
  }

  /**
   * Why {@code ranksPerGpu} ranks cannot share a GPU in this process, or null when they can (or do not share).
   *
   * @param where what asks, for the message: {@code "an NCCL cluster of 8 ranks on 1 CUDA device"}
   * @param fewer what else the user can do: {@code "ask for at most 1 rank here"}
   * @param loaded the NCCL this process loaded
   */
  public static String refusal(int ranksPerGpu, String where, String fewer, NcclVersion loaded, OptIn optIn) {
    if (ranksPerGpu <= 1) {
      return null;
    }
    String head = where + " puts " + ranksPerGpu + " ranks on one GPU";
    String optInHow = "-D" + MULTI_RANK_GPU_PROPERTY + "=true (CommPlan then sets " + VARIABLE
        + "=1 for this process before NCCL reads it, and limits each rank's CTAs) or export " + VARIABLE + "=1";
    if (!loaded.atLeast(NcclVersion.MULTI_RANK_GPU)) {
      return head + ". NCCL runs several ranks on one GPU from " + NcclVersion.MULTI_RANK_GPU + " on, with " + VARIABLE
          + "=1 (experimental); this process loaded NCCL " + loaded + ", which refuses it (\"Duplicate GPU"
          + " detected\"). Load NCCL " + NcclVersion.MULTI_RANK_GPU + " or newer (-D" + NcclEnvironment.NCCL_PROPERTY
          + "=/path/to/libnccl.so.2) and opt in with " + optInHow + "; or " + fewer + ".";
    }
    boolean variableSet = optIn.variable() != null;
    if (variableSet && !OptIn.enabled(optIn.variable())) {
      return head + ", and " + VARIABLE + "=" + optIn.variable() + " in this process's environment forbids it (NCCL "
          + loaded + " reads it as 0); CommPlan never overwrites a value you set, so unset it or set it to 1; or "
          + fewer + ".";
    }
    if (!variableSet && !optIn.propertyOn()) {
      return head + ", which NCCL " + loaded + " runs only when " + VARIABLE + " is set (experimental: NCCL's docs warn"
          + " that ranks sharing a GPU may hang or exhaust it), and it is not set. Opt in with " + optInHow + "; or "
          + fewer + ".";
    }
    if (optIn.ncclReadIt() && !OptIn.enabled(optIn.variableWhenRead())) {
      return head + ": " + VARIABLE + (variableSet ? " is set now, but" : " is not set, and") + " NCCL read it when"
          + " this process made its first communicator, when it was " + (optIn.variableWhenRead() == null ? "unset"
          : "'" + optIn.variableWhenRead() + "'") + ", and keeps that first value. Set -D"
          + MULTI_RANK_GPU_PROPERTY + "=true on the java command line, or export " + VARIABLE
          + "=1, so that it is on before the process's first NCCL communicator; or " + fewer + ".";
    }
    return null;
  }

  /**
   * Decides for a communicator whose GPUs carry up to {@code ranksPerGpu} ranks each ({@link #decide}) and
   * does what that says: sets {@value #VARIABLE} where our property asks and it is unset.
   *
   * @throws BackendUnavailableException with {@link #refusal}'s reason
   */
  public static synchronized GpuSharing prepare(int ranksPerGpu, String where, String fewer, NcclVersion loaded) {
    if (ranksPerGpu == 1) {
      return GpuSharing.ONE_RANK_PER_GPU; // nothing to read or set
    }
    Decision d = decide(ranksPerGpu, where, fewer, loaded, optIn(),
        System.getProperty(MAX_CTAS_PROPERTY), NcclEnvironment.getenv(MAX_CTAS_VARIABLE));
    if (d.setVariable()) {
      setVariableHere();
    }
    return d.sharing();
  }

  /**
   * For ranks of this process that share a GPU (a cluster's), sets two variables unless the user set them:
   * <ul>
   *   <li>{@value #QUEUES_VARIABLE}{@code =}{@value #QUEUES}: CUDA feeds a context's streams to the GPU through
   *       that many hardware queues (8 by default). Streams beyond that share one, and work in a shared queue
   *       waits for the work ahead of it, which can be a peer's NCCL kernel spinning until this rank launches.
   *       CUDA reads it when it makes the context: it works only before the process's first CUDA context.
   *   <li>{@value #CONNECT_VARIABLE}{@code =0}: NCCL connects a communicator's peers when it is made (where
   *       {@link SharedContextFences} fence it), not inside the first collective that needs them (its default
   *       since 2.22). Connecting allocates device memory, which waits for the whole context, where a peer's
   *       kernel may spin until this very rank joins it. NCCL reads it once, at the process's first communicator.
   * </ul>
   * {@link GpuSharing#describe()} says the values in force.
   */
  public static synchronized void prepareSharedContext() {
    for (String[] v : new String[][] {{QUEUES_VARIABLE, QUEUES}, {CONNECT_VARIABLE, "0"}}) {
      if (NcclEnvironment.getenv(v[0]) == null) {
        NcclEnvironment.setenv(v[0], v[1]);
      }
    }
  }

  /** Sets {@value #VARIABLE}{@code =1} for this process, for our property (what descriptions then say). */
  private static void setVariableHere() {
    NcclEnvironment.setenv(VARIABLE, "1");
    setHere = true;
  }

  /**
   * What {@link #prepare} does.
   *
   * @param sharing the communicator's sharing and CTA limit
   * @param setVariable whether {@value #VARIABLE}{@code =1} must be set for the process first
   */
  public record Decision(GpuSharing sharing, boolean setVariable) {}

  /**
   * The decision for up to {@code ranksPerGpu} ranks a GPU: one rank per GPU is {@link
   * GpuSharing#ONE_RANK_PER_GPU}; more is refused ({@link #refusal}) or allowed, with the opt-in's
   * source and the CTA limit ({@link #ctaLimit}). {@code ranksPerGpu} 0 is unknown ({@code
   * NcclBackend.initRank}): the opt-in is applied if asked for, nothing is refused (NCCL refuses a shared
   * GPU itself), and only the property sets a CTA limit.
   *
   * @param ctaProperty {@value #MAX_CTAS_PROPERTY}, or null
   * @param maxCtasVariable {@value #MAX_CTAS_VARIABLE} in the environment, or null
   * @throws BackendUnavailableException with {@link #refusal}'s reason
   */
  public static Decision decide(int ranksPerGpu, String where, String fewer, NcclVersion loaded, OptIn optIn,
      String ctaProperty, String maxCtasVariable) {
    if (ranksPerGpu == 1) {
      return new Decision(GpuSharing.ONE_RANK_PER_GPU, false);
    }
    String refused = refusal(ranksPerGpu, where, fewer, loaded, optIn);
    if (refused != null) {
      throw new BackendUnavailableException(refused);
    }
    String optInText;
    boolean set = false;
    String setByProperty = VARIABLE + "=1 set by -D" + MULTI_RANK_GPU_PROPERTY + "=true";
    if (OptIn.enabled(optIn.variable())) {
      optInText = optIn.setHere() ? setByProperty : VARIABLE + "=" + optIn.variable() + " from the environment";
    } else if (optIn.ncclReadIt() && OptIn.enabled(optIn.variableWhenRead())) {
      optInText = VARIABLE + "=" + optIn.variableWhenRead() + " when NCCL read it (this process's first communicator)";
    } else if (setAtFirstInit(optIn)) {
      set = true;
      optInText = setByProperty;
    } else if (ranksPerGpu == 0) {
      return new Decision(GpuSharing.ONE_RANK_PER_GPU, false); // initRank without the opt-in
    } else {
      throw new AssertionError("refusal() let " + optIn + " through");
    }
    int maxCtas = ctaLimit(ranksPerGpu, ctaProperty);
    String source = ctaProperty != null && !ctaProperty.isBlank()
        ? "-D" + MAX_CTAS_PROPERTY + "=" + ctaProperty.strip()
        : ranksPerGpu == 0 ? "ranks per GPU unknown, so no rule applies" : "the rule for " + ruleRange(ranksPerGpu);
    return new Decision(new GpuSharing(ranksPerGpu, maxCtas, ctaText(maxCtas, source, maxCtasVariable),
        optInText), set);
  }

  /** "at most 2 CTAs a rank (ncclConfig_t.maxCTAs, the rule for 5-8 ranks a GPU)", or NCCL_MAX_CTAS's over it. */
  public static String ctaText(int maxCtas, String source, String environment) {
    String ours = maxCtas > 0 ? "at most " + maxCtas + " CTAs a rank (ncclConfig_t.maxCTAs, " + source + ")"
        : "no CTA limit (" + source + ")";
    if (environment != null && !environment.isBlank()) {
      return "at most " + environment.strip() + " CTAs a rank (" + MAX_CTAS_VARIABLE + "=" + environment.strip()
          + " from the environment, which NCCL puts over CommPlan's " + ours + ")";
    }
    return ours;
  }

  private static String ruleRange(int ranksPerGpu) {
    return ranksPerGpu <= 2 ? "1-2 ranks a GPU" : ranksPerGpu <= 4 ? "3-4 ranks a GPU"
        : ranksPerGpu <= 8 ? "5-8 ranks a GPU" : "more than 8 ranks a GPU";
  }

  /**
   * Adds to a failed init what NCCL's own refusal of a shared GPU means here ({@code "Duplicate GPU"} before
   * 2.30, {@code "Multiple Ranks are using the same GPU"} after), when its text says so.
   */
  public static <E extends RuntimeException> E explainInitFailure(E e, NcclVersion loaded) {
    String text = String.valueOf(e.getMessage());
    if (text.contains("Duplicate GPU") || text.contains("same GPU") || text.contains(VARIABLE)) {
      e.addSuppressed(new BackendUnavailableException("NCCL " + loaded + " refused ranks that share a GPU: "
          + (loaded.atLeast(NcclVersion.MULTI_RANK_GPU) ? "opt in with -D" + MULTI_RANK_GPU_PROPERTY
              + "=true or " + VARIABLE + "=1, set before the process's first NCCL communicator"
              : "that needs NCCL " + NcclVersion.MULTI_RANK_GPU + " or newer with " + VARIABLE + "=1")));
    }
    return e;
  }

  /**
   * Which physical GPU {@code device} is, the same string in every process that uses it: this host's boot id
   * (hostname where there is none) and the device's PCI address.
   */
  public static String gpuIdentity(int device) {
    return host() + "/" + CheckedCuda.cudaPciBusId(device).toLowerCase(Locale.ROOT);
  }

  private static String host() {
    try {
      return Files.readString(Path.of("/proc/sys/kernel/random/boot_id")).strip();
    } catch (IOException | RuntimeException e) {
      try {
        return InetAddress.getLocalHost().getHostName();
      } catch (IOException | RuntimeException again) {
        return "this host";
      }
    }
  }

  /** How many ranks a cluster of {@code ranks} puts on its busiest device: {@code ceil(ranks / devices)}. */
  public static int ranksPerGpu(int ranks, int devices) {
    return (ranks + devices - 1) / devices;
  }

  /** What a cluster of {@code ranks} on {@code devices} devices is, for messages. */
  public static String clusterText(int ranks, int devices) {
    return "an NCCL cluster of " + ranks + (ranks == 1 ? " rank" : " ranks") + " on " + devices + " CUDA device"
        + (devices == 1 ? "" : "s");
  }

  /** What else a cluster's user can do than share GPUs, for messages. */
  public static String fewerRanks(int devices) {
    return "ask for at most " + devices + (devices == 1 ? " rank" : " ranks") + " here (one per GPU)";
  }

  /** The most ranks any one GPU carries, from every rank's {@link #gpuIdentity}. */
  public static int ranksPerGpu(List<String> gpuOfEachRank) {
    Map<String, Integer> counts = new HashMap<>();
    int most = 0;
    for (String gpu : gpuOfEachRank) {
      most = Math.max(most, counts.merge(gpu, 1, Integer::sum));
    }
    return most;
  }
}
