package dev.commplan.runtime;

import java.util.List;

/**
 * The ranks of a communicator did different things where they must do the same, and a cross-rank check
 * found it (docs/reliability.md, "Agreement check"): at the same place of their call sequences, ranks called
 * different collectives, with a different data type, count, op or root, or executed another plan (or
 * another instance of it, or another step); a rank's sends to another did not pair with that rank's
 * receives; the ranks built different meshes; or, as the subclass {@link PlanMismatchException}, different
 * plans. NCCL and MPI would have hung, failed with their own error, or, worst, completed with wrong data.
 *
 * <p>The one type to catch for "the ranks disagree": a program error that no retry on one rank mends, since
 * the same code may be right here and wrong on another rank. It is thrown on every rank that took part in
 * the comparison: by the synchronize that covers an agreement check (or, on a backend whose ranks meet in one
 * process, the call where they met), by a close that compares the last calls, by {@code
 * Mesh.Builder.build()}, and by {@code PlanBuilder.build()} (the subclass). For the same mistake its message
 * reads the same on every rank and every backend (it names the ranks by number); its accessors give this
 * rank's view.
 */
public class DisagreementException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** What this rank did at the first difference ({@link #thisRank()}). */
  private final String thisRank;
  /** What the first differing rank did there ({@link #otherRank()}). */
  private final String otherRank;
  /** The ranks that differ ({@link #differingRanks()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<Integer> differingRanks;
  /** The fields that differ ({@link #differingFields()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<String> differingFields;

  /**
   * Creates the exception; the cross-rank checks throw it.
   *
   * @param message names what differs on both sides, the ranks, and the fix
   * @param thisRank what this rank did at the first difference: {@code direct call: broadcast F32 root 1, count 8}
   * @param otherRank what the first differing rank did there
   * @param differingRanks the ranks that differ, ascending
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

  /**
   * {@return what this rank did at the first difference; where no rank reports it (the comparison made once
   * every rank of an in-process cluster has returned), what the rank the message names first did}
   */
  public String thisRank() {
    return thisRank;
  }

  /** {@return what the first differing rank did there} */
  public String otherRank() {
    return otherRank;
  }

  /**
   * {@return the ranks that differ, ascending: from this rank, or, where every rank reports one finding alike
   * (a plan's fingerprint) or no rank reports it, from the reference the message names}
   */
  public List<Integer> differingRanks() {
    return differingRanks;
  }

  /**
   * {@return what differs at the first difference: {@code root}, {@code count}, {@code data type}, {@code call
   * (another call at this place)}, {@code plan instance}, {@code mesh}, {@code operation}, ...}
   */
  public List<String> differingFields() {
    return differingFields;
  }
}
