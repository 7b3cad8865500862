package dev.commplan.runtime.spi;

import java.util.List;
import java.util.Objects;

/**
 * What one enqueued operation is, for timeout messages and the {@link FlightRecorder}: the plan, step,
 * collective and fields, with its text made once. Backends make one per call when they compile a
 * schedule, so that recording an operation at execute time stores a reference and builds no string.
 *
 * @param planName the plan's name, or null for a collective called directly on a communicator
 * @param step the step's number (the annotations' {@code step}), or -1 outside a plan
 * @param bucket the bucket of a bucketed plan's round ({@code Step.bucket()}), or -1
 * @param collective the collective with its arguments: {@code all-reduce F32 SUM, count 16}
 * @param fields the plan fields the call covers; empty outside a plan
 */
public record OperationLabel(String planName, int step, int bucket, String collective, List<String> fields) {
  private static final String AGREEMENT_CHECK = "agreement check: ";

  /**
   * Checks the label and copies {@code fields}.
   *
   * @param planName the plan's name, or null for a collective called directly on a communicator
   * @param step the step's number, or -1 outside a plan
   * @param bucket the bucket of a bucketed plan's round, or -1
   * @param collective the collective with its arguments; not null
   * @param fields the plan fields the call covers; empty outside a plan
   */
  public OperationLabel {
    Objects.requireNonNull(collective, "collective");
    fields = List.copyOf(fields);
  }

  /**
   * A label outside any bucket.
   *
   * @param planName the plan's name, or null for a collective called directly on a communicator
   * @param step the step's number, or -1 outside a plan
   * @param collective the collective with its arguments; not null
   * @param fields the plan fields the call covers; empty outside a plan
   */
  public OperationLabel(String planName, int step, String collective, List<String> fields) {
    this(planName, step, -1, collective, fields);
  }

  /**
   * A collective called directly on a communicator, not through a plan.
   *
   * @param collective the collective with its arguments: {@code all-reduce F32 SUM, count 16}
   * @return the label, outside any plan
   */
  public static OperationLabel direct(String collective) {
    return new OperationLabel(null, -1, collective, List.of());
  }

  /**
   * One of the agreement check's own calls (docs/reliability.md, "Agreement check"), made through the
   * communicator's direct-call path.
   *
   * @param collective the collective with its arguments: {@code all-gather U64, count 4}
   * @return the label: {@code agreement check: all-gather U64, count 4}
   */
  public static OperationLabel agreementCheck(String collective) {
    return new OperationLabel(null, -1, AGREEMENT_CHECK + collective, List.of());
  }

  /** {@return whether the operation is one of the agreement check's own calls ({@link #agreementCheck})} */
  public boolean isAgreementCheck() {
    return planName == null && collective.startsWith(AGREEMENT_CHECK);
  }

  /** {@return whether the operation belongs to a plan} */
  public boolean inPlan() {
    return planName != null;
  }

  /**
   * {@code plan p.Grads, step 0, all-reduce F32 SUM, count 16, fields [w, b]} ({@code plan p.Grads, step 0,
   * bucket 2, ...} in a bucket), or {@code all-reduce F32
   * SUM, count 16 (called directly)} outside a plan, {@code agreement check: all-gather U64, count 4} for the
   * agreement check's calls.
   */
  @Override
  public String toString() {
    return planName == null
        ? isAgreementCheck() ? collective : collective + " (called directly)"
        : "plan " + planName + ", step " + step + (bucket >= 0 ? ", bucket " + bucket : "") + ", " + collective
            + ", fields " + fields;
  }
}
