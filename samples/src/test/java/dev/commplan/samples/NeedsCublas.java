package dev.commplan.samples;

import org.junit.jupiter.api.extension.ConditionEvaluationResult;
import org.junit.jupiter.api.extension.ExecutionCondition;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * Disables a test class where cuBLAS or the CUDA runtime's events cannot be loaded (the overlap sample's GPU
 * compute and timeline), with the reason; next to {@link NeedsGpu}, which comes first.
 */
final class NeedsCublas implements ExecutionCondition {
  @Override
  public ConditionEvaluationResult evaluateExecutionCondition(ExtensionContext context) {
    String reason = Cublas.unavailableReason();
    if (reason == null) {
      reason = CudaTiming.unavailableReason();
    }
    return reason == null
        ? ConditionEvaluationResult.enabled("cuBLAS and the CUDA runtime are present")
        : ConditionEvaluationResult.disabled("GPU test skipped: " + reason);
  }
}
