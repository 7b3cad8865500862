package dev.commplan.samples;

import dev.commplan.runtime.nccl.NcclBackend;
import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Disables a test class where NCCL cannot run one rank, with the reason ("no CUDA device: ..."), as the
 * runtime's GPU tests do. A condition, not an assumption in {@code @BeforeEach}: Surefire writes a
 * condition's reason into the report's {@code skipped message}, where bin/test's summary reads it; an
 * assumption's reason only lands inside a stack trace there.
 */
final class NeedsGpu implements ExecutionCondition {
  private static volatile String reason;
  private static volatile boolean evaluated;

  static String reason() {
    if (!evaluated) {
      synchronized (NeedsGpu.class) {
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
    return r == null
        ? ConditionEvaluationResult.enabled("NCCL and a CUDA device are present")
        : ConditionEvaluationResult.disabled("GPU test skipped: " + r);
  }
}
