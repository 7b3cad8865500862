package dev.commplan.runtime;

import java.util.List;

/**
 * The ranks built different plans: their fingerprints (plan name, ranks, and every operation's step,
 * collective, fields, data types, counts, op, root and in-place-ness, then the schedule's NCCL calls)
 * differ. Thrown at build on every rank of the communicator, with the same message on each, so that the
 * ranks fail together instead of issuing different collectives (a hang or wrong data).
 */
public class PlanMismatchException extends PlanBuildException {
  private static final long serialVersionUID = 1L;

  /** The plan's name as the reporting rank built it ({@link #planName()}). */
  private final String planName;
  /** The ranks whose plan differs ({@link #differingRanks()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<Integer> differingRanks;

  /**
   * Creates the exception; plans throw it at build, on every rank.
   *
   * @param message the same text on every rank: what differs, and on which ranks
   * @param planName the plan's name as this rank built it
   * @param differingRanks the ranks whose plan differs from the majority's, ascending
   */
  public PlanMismatchException(String message, String planName, List<Integer> differingRanks) {
    super(message);
    this.planName = planName;
    this.differingRanks = List.copyOf(differingRanks);
  }

  /** {@return the plan's name as the reporting rank built it} */
  public String planName() {
    return planName;
  }

  /**
   * {@return the ranks whose plan differs from the one most ranks built (ties: the lowest rank's), ascending}
   */
  public List<Integer> differingRanks() {
    return differingRanks;
  }
}
