package dev.commplan.runtime;

import java.util.List;

/**
 * The ranks of a communicator made different calls, and the agreement check found it (docs/reliability.md,
 * "Agreement check"): at the same place of their call sequences, ranks called different collectives, with a
 * different data type, count, op or root, or executed another plan; or a rank's sends to another did not pair
 * with that rank's receives. NCCL and MPI would have hung, failed with their own error, or, worst, completed
 * with wrong data. Thrown by the synchronize that covers the check, on every rank that compared it.
 */
public class DisagreementException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** What this rank did at the first difference ({@link #thisRank()}). */
  private final String thisRank;
  /** What the first differing rank did there ({@link #otherRank()}). */
  private final String otherRank;
  /** The ranks that differ from this one ({@link #differingRanks()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<Integer> differingRanks;
  /** The fields that differ ({@link #differingFields()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<String> differingFields;

  /**
   * Creates the exception; the agreement check throws it.
   *
   * @param message names the calls on both sides, the ranks and the differing fields
   * @param thisRank what this rank did at the first difference: {@code direct call: broadcast F32 root 1, count 8}
   * @param otherRank what the first differing rank did there
   * @param differingRanks the ranks that differ from this one, ascending
   * @param differingFields the fields that differ: {@code root}, {@code count}, {@code data type}, ...
   */
  public DisagreementException(String message, String thisRank, String otherRank, List<Integer> differingRanks,
      List<String> differingFields) {
    super(message);
    this.thisRank = thisRank;
    this.otherRank = otherRank;
    this.differingRanks = List.copyOf(differingRanks);
    this.differingFields = List.copyOf(differingFields);
  }

  /** {@return what this rank did at the first difference} */
  public String thisRank() {
    return thisRank;
  }

  /** {@return what the first differing rank did there} */
  public String otherRank() {
    return otherRank;
  }

  /** {@return the ranks whose calls differ from this rank's, ascending} */
  public List<Integer> differingRanks() {
    return differingRanks;
  }

  /** {@return the fields that differ at the first difference: {@code root}, {@code count}, {@code data type}, ...} */
  public List<String> differingFields() {
    return differingFields;
  }
}
