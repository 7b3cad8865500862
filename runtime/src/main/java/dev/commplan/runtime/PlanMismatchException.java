package dev.commplan.runtime;

import java.util.List;

/**
 * The ranks built different plans: their fingerprints (plan name, ranks, and every operation's step,
 * collective, fields, data types, counts, op, root and in-place-ness, then the schedule's NCCL calls)
 * differ. Thrown at build on every rank of the communicator, with the same message on each, so that the
 * ranks fail together instead of issuing different collectives (a hang or wrong data).
 *
 * <p>A {@link DisagreementException}, the type every cross-rank finding has, and no longer a {@link
 * PlanBuildException}: the plan may be right on this rank and wrong on another, so nothing this rank alone
 * changes mends it. Every rank reports the same finding: {@link #differingRanks()} are the ranks whose plan
 * differs from the one most ranks built, {@link #thisRank()} and {@link #otherRank()} the two sides of the
 * first difference the message shows (the majority's, then the first differing rank's).
 */
public class PlanMismatchException extends DisagreementException {
  private static final long serialVersionUID = 1L;

  /** The plan's name as the reporting rank built it ({@link #planName()}). */
  private final String planName;

  /**
   * Creates the exception; plans throw it at build, on every rank.
   *
   * @param message the same text on every rank: what differs, and on which ranks
   * @param planName the plan's name as this rank built it
   * @param reference the majority's side of the first difference shown: {@code step 0 @AllReduce(op = SUM) grads F32[4096]}
   * @param other the first differing rank's side there
   * @param differingRanks the ranks whose plan differs from the majority's, ascending
   * @param differingFields what differs there: {@code operation}, {@code NCCL call}, {@code build}, {@code plan}
   */
  public PlanMismatchException(String message, String planName, String reference, String other,
      List<Integer> differingRanks, List<String> differingFields) {
    super(message, reference, other, differingRanks, differingFields);
    this.planName = planName;
  }

  /** {@return the plan's name as the reporting rank built it} */
  public String planName() {
    return planName;
  }
}
