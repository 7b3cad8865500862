package dev.commplan.runtime.guard;

import java.util.Objects;

/**
 * The last enqueue of one step of one plan, for the host-access guard: on which stream, with which
 * ticket ({@link StreamProgress}). A plan keeps one per step, made at build, and updates it (plain
 * field writes) each time it enqueues the step; the buffers the step touches point at it ({@link
 * HostAccessGuard#markWritten}, {@link HostAccessGuard#markRead}). Used by the communicator's one thread.
 */
public final class InFlightWork {
  private final String planName;
  private final int step;
  private Object stream;
  private StreamProgress progress;
  private long ticket;
  /** Every buffer the step touches points at this marker: set by the plan after marking them, cleared by a guard that points one elsewhere. */
  private boolean marksInPlace;

  /** For step {@code step} (the annotations' step number) of plan {@code planName}. */
  public InFlightWork(String planName, int step) {
    this.planName = Objects.requireNonNull(planName, "planName");
    this.step = step;
  }

  /**
   * Records that the step was enqueued on {@code stream} (a {@code Stream}, kept for messages) as {@code
   * ticket} of its {@code progress}.
   */
  public void enqueued(Object stream, StreamProgress progress, long ticket) {
    this.stream = stream;
    this.progress = progress;
    this.ticket = ticket;
  }

  /**
   * Whether every buffer of the step still points at this marker (it marked them, and no other work has
   * marked one since), so that an enqueue need only update the ticket.
   */
  public boolean marksInPlace() {
    return marksInPlace;
  }

  /** Records that the plan has just marked every buffer of the step with this marker. */
  public void marksPlaced() {
    marksInPlace = true;
  }

  /** Records that a guard now points at other work: the step must mark its buffers again. */
  void markOverwritten() {
    marksInPlace = false;
  }

  /** Whether the step's last enqueue may still be running (and the calling thread is not the stream's own). */
  public boolean isPending() {
    StreamProgress p = progress;
    return p != null && p.isPending(ticket) && !p.isInStreamOrder();
  }

  /** The plan's name. */
  public String planName() {
    return planName;
  }

  /** The step number. */
  public int step() {
    return step;
  }

  /** The stream of the last enqueue, or null before the first. */
  public Object stream() {
    return stream;
  }

  /** The ticket of the last enqueue (0 before the first). */
  public long ticket() {
    return ticket;
  }

  /** The progress of the last enqueue's stream, or null before the first. */
  public StreamProgress progress() {
    return progress;
  }
}
