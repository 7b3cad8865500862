package dev.commplan.runtime.spi;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.plan.PlanBuilder;

/**
 * A buffer's host-access guard: which plan work in flight writes it and which reads it, so that host
 * access that would race with that work throws {@link BufferInFlightException} instead of reading stale
 * data (the classic bug of reading NCCL results before synchronizing) or changing what is being sent.
 *
 * <ul>
 *   <li>A host <em>read</em> ({@code get}, {@code copyTo}, {@code toArray}, ...) is refused while work
 *       that writes the buffer (a receive side, or an in-place buffer) may still run.
 *   <li>A host <em>write</em> ({@code set}, {@code copyFrom}, {@code fill}, ...) is refused while work
 *       that reads or writes it (a send side too) may still run.
 * </ul>
 *
 * <p>Work counts as finished once a {@code synchronize()} of its stream that began after it was enqueued
 * has returned normally ({@link StreamProgress}). Each buffer owns one guard ({@link Buffer#hostAccessGuard()});
 * plans mark it when they enqueue ({@code PlanBuilder.hostAccessGuard}, on by default). The check costs
 * a few field loads and a volatile read per host access.
 *
 * <p>Marking is paid once, not per execute: a guard points at the step's {@link InFlightWork}, whose
 * ticket each enqueue updates, so re-marking the same buffers with the same marker changes nothing. A
 * step therefore marks its buffers only while {@link InFlightWork#marksInPlace()} is false: when it
 * first runs, and after another plan or step marked one of them (which {@code markWritten} and {@code
 * markRead} tell the marker they replace). On an H200 host, marking 400 buffers every execute cost
 * about 2 µs, as much as NCCL's own launch (docs/gpu.md). Buffers are used by one thread at a time
 * (their communicator's), like the communicator.
 */
public final class HostAccessGuard {
  private InFlightWork writer;
  private String writerField;
  private InFlightWork reader;
  private String readerField;

  /** Records that {@code work} (now enqueued) writes the buffer, which is its field {@code field}. */
  public void markWritten(InFlightWork work, String field) {
    InFlightWork previous = writer;
    if (previous != work) {
      if (previous != null) {
        previous.markOverwritten(); // its next enqueue must mark its buffers again
      }
      writer = work;
    }
    writerField = field;
  }

  /** Records that {@code work} (now enqueued) reads the buffer, which is its field {@code field}. */
  public void markRead(InFlightWork work, String field) {
    InFlightWork previous = reader;
    if (previous != work) {
      if (previous != null) {
        previous.markOverwritten();
      }
      reader = work;
    }
    readerField = field;
  }

  /** Whether work that writes or reads the buffer may still be running. */
  public boolean isInFlight() {
    InFlightWork w = writer;
    InFlightWork r = reader;
    return (w != null && w.isPending()) || (r != null && r.isPending());
  }

  /**
   * Throws if work that writes {@code buffer} may still be running.
   *
   * @throws BufferInFlightException naming the buffer, its field, the plan, the step and the stream
   */
  public void checkHostRead(Buffer buffer) {
    InFlightWork w = writer;
    if (w != null && w.isPending()) {
      throw inFlight(buffer, w, writerField, false, true);
    }
  }

  /**
   * Throws if work that writes or reads {@code buffer} may still be running.
   *
   * @throws BufferInFlightException naming the buffer, its field, the plan, the step and the stream
   */
  public void checkHostWrite(Buffer buffer) {
    InFlightWork w = writer;
    if (w != null && w.isPending()) {
      throw inFlight(buffer, w, writerField, true, true);
    }
    InFlightWork r = reader;
    if (r != null && r.isPending()) {
      throw inFlight(buffer, r, readerField, true, false);
    }
  }

  private static BufferInFlightException inFlight(
      Buffer buffer, InFlightWork work, String field, boolean hostWrite, boolean workWrites) {
    StreamProgress progress = work.progress();
    String message = (hostWrite ? "host write to " : "host read of ") + buffer + " (field '" + field
        + "' of plan " + work.planName() + ") while step " + work.step() + " of that plan, which "
        + (workWrites ? "writes" : "reads") + " it, may still be running on " + work.stream()
        + " (enqueued as ticket " + work.ticket() + "; the stream is synchronized up to ticket "
        + progress.synchronizedUpTo() + ")"
        + (hostWrite && !workWrites ? ": the collective could send the new values or the old ones" : "")
        + (!hostWrite ? ": the values read could be the old ones" : "")
        + "; call stream.synchronize() first. (This check is on by default; turn it off with"
        + " PlanBuilder.hostAccessGuard(false) or -D" + PlanBuilder.HOST_ACCESS_GUARD_PROPERTY + "=false.)";
    return new BufferInFlightException(message, work.planName(), field, work.step(), hostWrite);
  }
}
