package dev.commplan.runtime;

/**
 * A plan with the finite check on ({@code @CommPlan(checkFinite = true)}, {@code PlanBuilder.checkFinite}, or
 * {@code -Dcommplan.checkFinite=true}) found a NaN or an infinity in the data a reduction was about to send: thrown
 * by the same call on every rank of the plan, before that reduction's step (or bucket) is enqueued on any of them,
 * so no rank's data is changed by it. The ranks agreed on the verdict first, so every rank names the same finding:
 * the lowest rank that holds one, the first of that step's checked fields (in the order the plan issues them)
 * where it does, the first index there and its value. Steps of the same execute before this one have been
 * enqueued, on every rank; the steps after it have not.
 *
 * <p>docs/dsl.md, "Finite checks", says what is checked and what it costs.
 */
public class NonFiniteException extends CommPlanException {
  private static final long serialVersionUID = 1L;

  /** The plan whose reduction was refused ({@link #planName()}). */
  private final String planName;
  /** The step number whose reduction was refused ({@link #step()}). */
  private final int step;
  /** The lowest rank whose send data holds a NaN or an infinity ({@link #rank()}). */
  private final int rank;
  /** The field of that rank that holds it ({@link #field()}). */
  private final String field;
  /** The index of the first such element ({@link #index()}). */
  private final long index;
  /** Its value, widened to a double ({@link #value()}). */
  private final double value;

  /**
   * Creates the exception; plans throw it, on every rank, with the same message.
   *
   * @param message the same text on every rank: the plan, the step, the rank, the field, the index and the value
   * @param planName the plan whose reduction was refused
   * @param step the step number (as in the annotations) whose reduction was refused
   * @param rank the lowest rank whose send data holds a NaN or an infinity
   * @param field the field of that rank where it does
   * @param index the first such element's index in the field
   * @param value that element's value, widened to a double (a NaN stays a NaN, an infinity keeps its sign)
   */
  public NonFiniteException(String message, String planName, int step, int rank, String field, long index,
      double value) {
    super(message);
    this.planName = planName;
    this.step = step;
    this.rank = rank;
    this.field = field;
    this.index = index;
    this.value = value;
  }

  /** {@return the plan whose reduction was refused} */
  public String planName() {
    return planName;
  }

  /** {@return the step number (as in the annotations) whose reduction was refused} */
  public int step() {
    return step;
  }

  /** {@return the lowest rank whose send data holds a NaN or an infinity (the same on every rank)} */
  public int rank() {
    return rank;
  }

  /** {@return the field of that rank that holds it} */
  public String field() {
    return field;
  }

  /** {@return the index of the first NaN or infinity in that field} */
  public long index() {
    return index;
  }

  /** {@return the value there, widened to a double: a NaN, or an infinity with its sign} */
  public double value() {
    return value;
  }
}
