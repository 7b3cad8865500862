package dev.commplan.runtime;

import java.util.List;

/**
 * The ranks executed their plans in different orders: at the same position of the collective sequence,
 * one rank ran a step of one plan and another rank a step of another (or another step). With identical
 * shapes NCCL would silently mix their data; CommPlan fails every rank instead, naming both plans and the
 * ranks. Where and when this is checked depends on the backend and the order check's mode
 * (docs/reliability.md, "Execute order").
 */
public class PlanOrderException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** What the reference rank executed ({@link #expected()}). */
  private final String expected;
  /** What the first differing rank executed ({@link #found()}). */
  private final String found;
  /** The ranks that executed something else ({@link #differingRanks()}). */
  @SuppressWarnings("serial") // always an immutable List.copyOf, which serializes
  private final List<Integer> differingRanks;

  /**
   * Creates the exception; the runtime throws it on every rank whose order it checked.
   *
   * @param message names both plans and the ranks
   * @param expected what rank 0 (or the reference rank) executed there: {@code plan p.A, step 0}
   * @param found what the first differing rank executed there
   * @param differingRanks the ranks that executed something else there, ascending
   */
  public PlanOrderException(String message, String expected, String found, List<Integer> differingRanks) {
    super(message);
    this.expected = expected;
    this.found = found;
    this.differingRanks = List.copyOf(differingRanks);
  }

  /** {@return what the reference rank executed at the position where the ranks differ} */
  public String expected() {
    return expected;
  }

  /** {@return what the first differing rank executed there} */
  public String found() {
    return found;
  }

  /** {@return the ranks that executed something else there, ascending} */
  public List<Integer> differingRanks() {
    return differingRanks;
  }
}
