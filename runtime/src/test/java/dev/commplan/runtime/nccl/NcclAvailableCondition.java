package dev.commplan.runtime.nccl;

import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Enables GPU tests only where {@link NcclBackend#unavailableReason} finds nothing missing; otherwise
 * disables them with that reason ("no CUDA device: cudaGetDeviceCount returned ...", "libnccl.so.2 not
 * found (tried ...)"), printed once to stderr so a CI log says why they did not run.
 */
public final class NcclAvailableCondition implements ExecutionCondition {
  private static final AtomicBoolean PRINTED = new AtomicBoolean();
  private static volatile String reason;
  private static volatile boolean evaluated;

  /** Why GPU tests cannot run here, or null when they can. */
  static String reason() {
    if (!evaluated) {
      synchronized (NcclAvailableCondition.class) {
        if (!evaluated) {
          String r;
          try {
            r = NcclBackend.unavailableReason(1);
          } catch (RuntimeException | LinkageError e) {
            r = "the NCCL backend could not be probed: " + e;
          }
          reason = r;
          evaluated = true;
        }
      }
    }
    return reason;
  }

  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    String r = reason();
    if (r == null) {
      return ConditionEvaluationResult.enabled("NCCL and a CUDA device are present");
    }
    if (PRINTED.compareAndSet(false, true)) {
      System.err.println("[commplan] GPU tests (tag \"gpu\") skipped: " + r);
    }
    return ConditionEvaluationResult.disabled("GPU test skipped: " + r);
  }
}
