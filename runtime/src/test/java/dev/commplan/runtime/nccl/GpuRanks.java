package dev.commplan.runtime.nccl;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * The world sizes the NCCL GPU tests run at: {@code -D}{@value #PROPERTY}{@code =1,2,4,8}, by default one
 * rank per GPU (the device count). A size this machine cannot run (more ranks than GPUs without NCCL 2.30
 * and the opt-in, {@link NcclBackend#unavailableReason}) is left out, saying why once on stderr; a test
 * class whose sizes are all left out is skipped with the reasons ({@link Condition}), and a test
 * parametrized by size skips that size ({@link #assumeRunnable}).
 */
public final class GpuRanks {
  private GpuRanks() {}

  /** The system property listing the world sizes: {@value}. */
  public static final String PROPERTY = "commplan.gpu.ranks";

  private static final Set<Integer> PRINTED = ConcurrentHashMap.newKeySet();

  /** The sizes asked for, in order: the property's, or the device count. */
  public static List<Integer> requested() {
    String text = System.getProperty(PROPERTY);
    if (text == null || text.isBlank()) {
      return List.of(NcclBackend.deviceCount());
    }
    List<Integer> sizes = new ArrayList<>();
    for (String part : text.split(",")) {
      try {
        int n = Integer.parseInt(part.strip());
        if (n < 1) {
          throw new NumberFormatException();
        }
        sizes.add(n);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException("-D" + PROPERTY + "=" + text + ": '" + part + "' is not a positive rank count"
            + " (write, say, -D" + PROPERTY + "=1,2,4,8)");
      }
    }
    return List.copyOf(sizes);
  }

  /** Why this machine cannot run {@code ranks} ranks of one NCCL cluster, or null when it can. */
  public static String whyNot(int ranks) {
    return NcclBackend.unavailableReason(ranks);
  }

  /** The requested sizes this machine can run; the others are said once on stderr with why. */
  public static int[] runnable() {
    List<Integer> sizes = new ArrayList<>();
    for (int n : requested()) {
      String why = whyNot(n);
      if (why == null) {
        sizes.add(n);
      } else if (PRINTED.add(n)) {
        System.err.println("[commplan] GPU tests at " + n + " ranks skipped: " + why);
      }
    }
    return sizes.stream().mapToInt(Integer::intValue).toArray();
  }

  /** The requested sizes this machine can run that are at least {@code min} (2: every test of real peers). */
  public static int[] runnableAtLeast(int min) {
    return java.util.Arrays.stream(runnable()).filter(n -> n >= min).toArray();
  }

  /** Skips (JUnit assumption) the current test at {@code ranks} where this machine cannot run it, saying why. */
  public static void assumeRunnable(int ranks) {
    String why = whyNot(ranks);
    Assumptions.assumeTrue(why == null, () -> ranks + " ranks skipped: " + why);
  }

  /** The reasons every requested size is left out, or null when at least one runs. */
  static String noneRunnable() {
    Map<Integer, String> why = new LinkedHashMap<>();
    for (int n : requested()) {
      String w = whyNot(n);
      if (w == null) {
        return null;
      }
      why.put(n, w);
    }
    return why.entrySet().stream().map(e -> e.getKey() + " ranks: " + e.getValue()).collect(Collectors.joining("; "));
  }

  /**
   * Disables a test class none of whose requested sizes runs here, with the reasons (after {@link
   * NcclGpuTest}'s own condition, which says when there is no GPU at all).
   */
  public static final class Condition implements ExecutionCondition {
    @Override
    public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
      if (NcclAvailableCondition.reason() != null) {
        return ConditionEvaluationResult.enabled("NcclGpuTest's condition says why not");
      }
      String why;
      try {
        why = noneRunnable();
      } catch (RuntimeException e) {
        why = "the rank counts could not be read: " + e.getMessage();
      }
      return why == null ? ConditionEvaluationResult.enabled("a requested rank count runs here")
          : ConditionEvaluationResult.disabled("GPU test skipped at every requested rank count: " + why);
    }
  }
}
