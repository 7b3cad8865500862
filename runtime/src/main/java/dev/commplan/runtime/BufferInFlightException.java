package dev.commplan.runtime;

import dev.commplan.runtime.guard.HostAccessGuard;
import dev.commplan.runtime.guard.InFlightWork;

/**
 * Host access to a buffer raced with plan work still in flight on a stream: a read of a buffer that
 * enqueued work writes (the values could be the old ones), or a write to a buffer that enqueued work
 * reads or writes. Call {@code stream.synchronize()} first. The message names the buffer, its field, the
 * plan, the step and the stream.
 *
 * <p>The check is on by default; {@code PlanBuilder.hostAccessGuard(false)} turns it off for one plan,
 * the system property {@code commplan.hostAccessGuard=false} ({@code
 * PlanBuilder.HOST_ACCESS_GUARD_PROPERTY}) for every plan built afterwards.
 */
public class BufferInFlightException extends IllegalStateException {
  private static final long serialVersionUID = 1L;

  /** The plan whose work is in flight ({@link #planName()}). */
  private final String planName;
  /** The buffer's field in that plan ({@link #field()}). */
  private final String field;
  /** The step that touches the buffer ({@link #step()}). */
  private final int step;
  /** Whether the refused access was a write ({@link #isHostWrite()}). */
  private final boolean hostWrite;

  /**
   * Creates the exception; the runtime throws it, from the thread that accessed the buffer.
   *
   * @param message names the buffer, its field, the plan, the step and the stream
   * @param planName the plan whose work is in flight
   * @param field the buffer's field in that plan
   * @param step the step of that plan that touches the buffer
   * @param hostWrite true if the refused access was a write, false for a read
   */
  public BufferInFlightException(String message, String planName, String field, int step, boolean hostWrite) {
    super(message);
    this.planName = planName;
    this.field = field;
    this.step = step;
    this.hostWrite = hostWrite;
  }

  /**
   * The refusal of a host access to {@code buffer} (a write if {@code hostWrite}, else a read) while
   * {@code work}, which knows the buffer as {@code field} and writes it if {@code workWrites}, may still run.
   */
  static BufferInFlightException of(
      Buffer buffer, InFlightWork work, String field, boolean hostWrite, boolean workWrites) {
    String message = (hostWrite ? "host write to " : "host read of ") + buffer + " (field '" + field
        + "' of plan " + work.planName() + ") while step " + work.step() + " of that plan, which "
        + (workWrites ? "writes" : "reads") + " it, may still be running on " + work.stream()
        + " (enqueued as ticket " + work.ticket() + "; the stream is synchronized up to ticket "
        + work.progress().synchronizedUpTo() + ")"
        + (hostWrite && !workWrites ? ": the collective could send the new values or the old ones" : "")
        + (!hostWrite ? ": the values read could be the old ones" : "")
        + "; call stream.synchronize() first. (This check is on by default; turn it off with"
        + " PlanBuilder.hostAccessGuard(false) or -D" + HostAccessGuard.PROPERTY + "=false.)";
    return new BufferInFlightException(message, work.planName(), field, work.step(), hostWrite);
  }

  /** {@return the plan whose work is in flight} */
  public String planName() {
    return planName;
  }

  /** {@return the buffer's field in that plan} */
  public String field() {
    return field;
  }

  /** {@return the step of that plan that touches the buffer} */
  public int step() {
    return step;
  }

  /** {@return whether the refused access was a write (else a read)} */
  public boolean isHostWrite() {
    return hostWrite;
  }
}
