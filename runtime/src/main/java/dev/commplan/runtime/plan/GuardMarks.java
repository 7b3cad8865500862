package dev.commplan.runtime.plan;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.HostAccessGuard;
import dev.commplan.runtime.guard.InFlightWork;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.List;

/**
 * The host-access guard's marks of a plan's units (its steps, or a bucketed plan's buckets): per unit, its
 * in-flight marker and the buffers, with their fields, it writes and those it only reads, resolved once at
 * build so that marking is field writes ({@link HostAccessGuard}).
 */
final class GuardMarks {
  private final InFlightWork[] work;
  private final HostAccessGuard[][] written;
  private final String[][] writtenFields;
  private final HostAccessGuard[][] read;
  private final String[][] readFields;

  /**
   * @param steps each unit's step number, for messages
   * @param written per unit, the handles it writes (receive sides and in-place buffers), each once
   * @param read per unit, the handles it only reads, each once
   */
  GuardMarks(String planName, int[] steps, Buffer[] buffers, List<String> fields, int[][] written, int[][] read) {
    int units = steps.length;
    this.work = new InFlightWork[units];
    this.written = new HostAccessGuard[units][];
    this.writtenFields = new String[units][];
    this.read = new HostAccessGuard[units][];
    this.readFields = new String[units][];
    for (int i = 0; i < units; i++) {
      work[i] = new InFlightWork(planName, steps[i]);
      this.written[i] = select(buffers, written[i]);
      writtenFields[i] = select(fields, written[i]);
      this.read[i] = select(buffers, read[i]);
      readFields[i] = select(fields, read[i]);
    }
  }

  /** {@return the number of units} */
  int units() {
    return work.length;
  }

  /**
   * Marks the buffers of units {@code [from, to)} as in flight on {@code stream} under {@code ticket}; field
   * writes only, and per buffer only when another plan or unit marked one of the unit's buffers since this
   * unit last did (see {@link HostAccessGuard}). Marked before enqueueing: if the enqueue fails part way, the
   * buffers stay guarded until the stream's next successful synchronize, which is conservative.
   */
  void mark(Stream stream, StreamProgress progress, long ticket, int from, int to) {
    for (int s = from; s < to; s++) {
      InFlightWork unit = work[s];
      unit.enqueued(stream, progress, ticket);
      if (unit.marksInPlace()) {
        continue; // the buffers point at the unit, whose ticket is now this one: nothing else to mark
      }
      HostAccessGuard[] w = written[s];
      String[] wf = writtenFields[s];
      for (int i = 0; i < w.length; i++) {
        w[i].markWritten(unit, wf[i]);
      }
      HostAccessGuard[] r = read[s];
      String[] rf = readFields[s];
      for (int i = 0; i < r.length; i++) {
        r[i].markRead(unit, rf[i]);
      }
      unit.marksPlaced();
    }
  }

  private static HostAccessGuard[] select(Buffer[] buffers, int[] handles) {
    HostAccessGuard[] out = new HostAccessGuard[handles.length];
    for (int i = 0; i < handles.length; i++) {
      out[i] = Guards.of(buffers[handles[i]]);
    }
    return out;
  }

  private static String[] select(List<String> fields, int[] handles) {
    String[] out = new String[handles.length];
    for (int i = 0; i < handles.length; i++) {
      out[i] = fields.get(handles[i]);
    }
    return out;
  }
}
