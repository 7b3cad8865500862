package dev.commplan.runtime.rules;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.HostAccessGuard;
import dev.commplan.runtime.guard.InFlightWork;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.function.Predicate;

/**
 * The two-stream rule (docs/dsl.md, "Overlapping communication with computation"): CommPlan's work on a
 * buffer that CommPlan's earlier work may still be using on another stream of the rank starts after that
 * work. The later stream waits for an event recorded on the earlier one ({@code cudaStreamWaitEvent}, which
 * orders device work and does not block the host), so the user's program stays asynchronous and gets the
 * results it would get on one stream.
 *
 * <p>Applied by a plan to its own work (an execute, step or launch on another stream than its last, a bucket
 * of a round after work elsewhere) and by the direct calls to the plan work the host-access guard has marked on
 * their buffers. Nothing is waited for where the earlier work is known to be done (a synchronize covered it),
 * where the earlier stream is the same or was closed by its user (no event can be recorded there: close a stream
 * once its work is waited for), or where the later stream is being captured into a CUDA graph (a capture
 * may not wait for work outside it; the capturing code orders its own streams).
 */
public final class StreamOrder {
  private StreamOrder() {}

  /**
   * Makes {@code next} wait for {@code earlier}'s work up to guard ticket {@code ticket} where it may still run.
   *
   * @param earlier the stream of the earlier work, or null for none
   * @param ticket the earlier work's ticket on that stream ({@link StreamProgress#issue()})
   * @param next the stream about to receive the later work; not being captured
   */
  public static void after(Stream earlier, long ticket, Stream next) {
    if (earlier == null || earlier == next) {
      return;
    }
    StreamProgress progress = Guards.progressOf(earlier);
    if (progress != null && (!progress.isPending(ticket) || progress.isClosed())) {
      return; // done; or on a stream its user closed, where no event can be recorded (its work still runs)
    }
    next.waitFor(earlier.record());
  }

  /**
   * Makes {@code next} wait for the plan work that the host-access guard knows may still write or read {@code
   * buffer} on another stream: for a collective called directly on a buffer a plan has in flight. Asks {@code
   * capturing} only where there is such work (a direct call on a buffer no plan holds pays two loads).
   *
   * @param buffer a buffer the direct call sends or receives
   * @param next the direct call's stream
   * @param capturing whether a stream is being captured into a CUDA graph (then nothing is waited for)
   */
  public static void afterPlanWorkOn(Buffer buffer, Stream next, Predicate<Stream> capturing) {
    HostAccessGuard guard = Guards.of(buffer);
    after(guard.pendingWriter(), next, capturing);
    after(guard.pendingReader(), next, capturing);
  }

  private static void after(InFlightWork work, Stream next, Predicate<Stream> capturing) {
    if (work != null && work.stream() instanceof Stream earlier && earlier != next && !capturing.test(next)) {
      after(earlier, work.ticket(), next);
    }
  }
}
