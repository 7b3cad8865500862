package dev.commplan.runtime.plan;

import dev.commplan.runtime.Event;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.guard.CallGate;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
import dev.commplan.runtime.rules.CallRules;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;

/**
 * The rounds of a bucketed plan ({@link Plan#ready}, {@link Plan#finish}, and what {@link Plan#close} does to
 * an open round): which fields were marked ready since the last finish, with the producer's event of each, and
 * which bucket comes next. A bucket is enqueued on the communication stream, after waiting for its fields'
 * events, once all its fields are marked and every bucket before it was enqueued; so every rank enqueues the
 * buckets in one order, whatever order it marks the fields in. The plan checks that it can run (open, and
 * its communicator and bound buffers too), then hands the call here; a round changes only while its thread
 * holds the communicator's gate.
 */
final class BucketRound {
  /** What a stream of another runtime has instead of a gate: refuses nothing. */
  private static final CallGate NO_GATE = new CallGate((holder, holderDoing, caller, callerDoing) -> null);

  private final Plan plan;
  private final String planName;
  private final Stream stream;
  private final boolean ownsStream;
  private final CompiledSchedule compiled;
  private final List<Schedule.Bucket> buckets;
  private final List<String> fields;
  /** Per bucket, the handles it waits for; per handle, the buckets that wait for it (none: not sent). */
  private final int[][] handlesOf;
  private final int[][] bucketsOf;
  /** Per bucket, the guard's marks of what its calls write and read. */
  private final GuardMarks marks;
  /** What the communicator's gate says this thread was doing: {@code ready() of plan p.X}. */
  private final String readyLabel;
  private final String finishLabel;

  /** This round: each handle's producer event (null: not marked), each bucket's unmarked fields, the next bucket. */
  private final Event[] events;
  private final int[] missing;
  private int marked;
  private int next;
  private boolean enqueuedAny;

  /**
   * The rounds of {@code plan}, whose buckets are compiled as a schedule of their own, one step each.
   *
   * @param plan the plan; its guard setting, agreement check and last stream are the rounds' too
   * @param stream the communication stream the buckets are enqueued on
   * @param ownsStream whether the plan made the stream (then its close closes it)
   * @param compiled the buckets' schedule, compiled
   * @param buckets the buckets, in the order every rank enqueues them
   * @param fields per handle, the field's name
   * @param marks per bucket, the guard's marks
   */
  BucketRound(Plan plan, Stream stream, boolean ownsStream, CompiledSchedule compiled, List<Schedule.Bucket> buckets,
      List<String> fields, GuardMarks marks) {
    this.plan = plan;
    this.planName = plan.name();
    this.stream = stream;
    this.ownsStream = ownsStream;
    this.compiled = compiled;
    this.buckets = buckets;
    this.fields = fields;
    this.marks = marks;
    this.readyLabel = "ready() of plan " + planName;
    this.finishLabel = "finish() of plan " + planName;
    this.handlesOf = new int[buckets.size()][];
    List<List<Integer>> bucketsByHandle = new ArrayList<>();
    for (int h = 0; h < fields.size(); h++) {
      bucketsByHandle.add(new ArrayList<>());
    }
    for (Schedule.Bucket b : buckets) {
      handlesOf[b.index()] = b.fields().stream().mapToInt(fields::indexOf).toArray();
      for (int h : handlesOf[b.index()]) {
        bucketsByHandle.get(h).add(b.index());
      }
    }
    this.bucketsOf = bucketsByHandle.stream().map(l -> l.stream().mapToInt(Integer::intValue).toArray())
        .toArray(int[][]::new);
    this.events = new Event[fields.size()];
    this.missing = new int[buckets.size()];
    reset();
  }

  /** {@return the communication stream the buckets are enqueued on} */
  Stream stream() {
    return stream;
  }

  int buckets() {
    return buckets.size();
  }

  /** Whether a round is open: a field was marked ready since the last finish. */
  boolean isOpen() {
    return marked > 0;
  }

  /**
   * Refuses {@code what} (an execute, a step, a launch: the whole plan, or part of it) while a round is open.
   *
   * @throws IllegalStateException naming the fields marked so far, if a round is open
   */
  void refuseWhileOpen(String what) {
    if (isOpen()) {
      throw new IllegalStateException("plan " + planName + ": " + what + " while a ready()/finish() round is open"
          + " (fields marked ready: " + markedFields() + "); end the round with finish(consumer) first");
    }
  }

  /**
   * {@link Plan#ready}, once the plan is known to run: checks the field and the producer before anything
   * changes, then, holding the communicator's gate, marks the field and enqueues every bucket now complete.
   */
  void ready(int handle, Stream producer) {
    checkReady(handle, producer);
    CallGate gate = gateOf(stream);
    gate.enter(readyLabel);
    try {
      mark(handle, producer);
    } finally {
      gate.exit();
    }
  }

  /**
   * {@link Plan#finish}, once the plan is known to run: holding the communicator's gate, ends the round ({@link
   * #end}) and counts the plan's buffers as in flight on {@code consumer} for the host-access guard; then throws
   * if fields were never marked in the round.
   */
  void finish(Stream consumer) {
    CallGate gate = gateOf(stream);
    gate.enter(finishLabel);
    List<String> unmarked;
    try {
      unmarked = end(consumer);
      StreamProgress progress = Guards.progressOf(consumer);
      if (progress != null && plan.hostAccessGuard()) {
        GuardMarks all = plan.stepMarks();
        all.mark(consumer, progress, progress.issue(), 0, all.units());
      }
    } finally {
      gate.exit();
    }
    if (!unmarked.isEmpty()) {
      throw new IllegalStateException("plan " + planName + ": finish() with fields never marked ready in this round: "
          + unmarked + "; their buckets were still enqueued (reducing what those fields held) and the round ended."
          + " Call ready(field, producer) for every field the plan sends before finish(consumer)");
    }
  }

  /** The gate of {@code stream}'s communicator (a stream of this runtime: checked), held while a round changes. */
  private static CallGate gateOf(Stream stream) {
    StreamProgress progress = Guards.progressOf(stream);
    return progress != null ? progress.gate() : NO_GATE;
  }

  /**
   * Checks what {@link #ready} is given before anything changes: a field a call sends, not yet marked in
   * this round, and a producer stream of this runtime whose events the communication stream may wait for.
   */
  private void checkReady(int handle, Stream producer) {
    if (handle < 0 || handle >= fields.size()) {
      throw new IndexOutOfBoundsException(
          "plan " + planName + " has buffer handles 0.." + (fields.size() - 1) + ", not " + handle);
    }
    if (bucketsOf[handle].length == 0) {
      throw new IllegalArgumentException("plan " + planName + ": field '" + fields.get(handle) + "' is sent by no call"
          + " of the plan, so no bucket waits for it; mark the fields the plan's calls send: " + sentFields());
    }
    Objects.requireNonNull(producer, "producer");
    if (Guards.progressOf(producer) == null) {
      throw new IllegalArgumentException("plan " + planName + ": ready('" + fields.get(handle) + "', " + producer
          + "): the producer is not a stream of this runtime (Communicator.stream() or newStream())");
    }
    CallRules.checkSameDevice(stream, producer);
    if (events[handle] != null) {
      throw new IllegalStateException("plan " + planName + ": field '" + fields.get(handle) + "' was marked ready"
          + " twice in this round; mark each field once between two finish() calls (marked so far: "
          + markedFields() + ")");
    }
  }

  /**
   * Marks {@code handle}'s field ready with an event of {@code producer} (checked by {@link #checkReady}), then
   * enqueues every bucket, in order, whose fields are all marked and whose predecessors are enqueued.
   */
  private void mark(int handle, Stream producer) {
    Event event = producer.record(); // throws before anything here changed
    events[handle] = event;
    marked++;
    for (int b : bucketsOf[handle]) {
      missing[b]--;
    }
    while (next < buckets.size() && missing[next] == 0) {
      enqueue(next++);
    }
  }

  /**
   * Ends the round: every bucket not yet enqueued is enqueued (those with unmarked fields too, so that no peer
   * is left waiting in a collective: the unmarked fields are reduced with what they hold), {@code consumer}
   * waits for the last one, and the round is reset.
   *
   * @return the fields that were not marked in the round, in declaration order (empty normally)
   */
  private List<String> end(Stream consumer) {
    List<String> unmarked = unmarkedFields();
    flush();
    consumer.waitFor(stream.record());
    reset();
    return unmarked;
  }

  /**
   * For the plan's close, which issues no collective: records an open round with the agreement check (so that
   * peers that enqueued a bucket this rank never will find the open round named), waits for the buckets already
   * enqueued (at most the timeout) so that none still runs on memory about to be freed, ends the round without
   * enqueueing the rest, and closes the stream if the plan made it. Every bound buffer keeps what the buckets
   * enqueued before the close left in it.
   *
   * @param usable whether the communicator can still be waited on (not closed or aborted)
   * @return where a round was left open, what the plan's close throws once the plan is closed (naming the
   *     fields never marked, and the bucket from which this rank enqueued nothing); else null
   */
  IllegalStateException close(boolean usable) {
    List<String> unmarked = isOpen() ? unmarkedFields() : List.of();
    int enqueued = next;
    try {
      Agreement agreement = plan.agreement();
      if (isOpen() && next < buckets.size() && agreement != null) { // buckets that peers may enqueue, this rank never
        agreement.roundClosed(plan.agreementKey(), next, unmarkedMask());
      }
      if (usable && enqueuedAny) {
        stream.synchronize();
      }
    } finally {
      reset();
      if (ownsStream) {
        stream.close();
      }
    }
    if (unmarked.isEmpty()) {
      return null;
    }
    return new IllegalStateException("plan " + planName + " was closed during a ready()/finish() round, with fields"
        + " never marked ready: " + unmarked + ". Closing issues no collective: bucket " + enqueued + " and those after"
        + " it were not enqueued on this rank, so a peer that finished the round waits there for rank "
        + plan.communicator().rank() + " (until its timeout, or its agreement check names this round). End each"
        + " round with finish(consumer) before close()");
  }

  /**
   * The handles (below 63) not marked in this round as bits, with bit 63 set when a handle of 63 or more is
   * unmarked too: what the agreement check's record of an open round carries.
   */
  private long unmarkedMask() {
    long mask = 0;
    for (int h = 0; h < events.length; h++) {
      if (events[h] == null && bucketsOf[h].length > 0) {
        mask |= h < 63 ? 1L << h : 1L << 63;
      }
    }
    return mask;
  }

  /** The fields marked ready in this round, in declaration order. */
  List<String> markedFields() {
    List<String> out = new ArrayList<>();
    for (int h = 0; h < events.length; h++) {
      if (events[h] != null) {
        out.add(fields.get(h));
      }
    }
    return out;
  }

  private List<String> unmarkedFields() {
    List<String> out = new ArrayList<>();
    for (int h = 0; h < events.length; h++) {
      if (events[h] == null && bucketsOf[h].length > 0) {
        out.add(fields.get(h));
      }
    }
    return out;
  }

  private List<String> sentFields() {
    List<String> out = new ArrayList<>();
    for (int h = 0; h < bucketsOf.length; h++) {
      if (bucketsOf[h].length > 0) {
        out.add(fields.get(h));
      }
    }
    return out;
  }

  /** Enqueues every bucket not yet enqueued, waiting only for the fields that were marked. */
  private void flush() {
    while (next < buckets.size()) {
      enqueue(next++);
    }
  }

  /**
   * Bucket {@code b}: the communication stream waits for its fields' events and for the plan's work on another
   * stream that may still run, then its calls are enqueued as one group, with the guard's marks (on the
   * communication stream) and one unit of the agreement check.
   */
  private void enqueue(int b) {
    for (int h : handlesOf[b]) {
      if (events[h] != null) {
        stream.waitFor(events[h]);
      }
    }
    boolean capturing = compiled.isCapturing(stream);
    StreamProgress progress = Guards.progressOf(stream);
    boolean tracked = !capturing && progress != null;
    long ticket = 0;
    LastStream lastStream = plan.lastStream(); // a bucket is ordered after the plan's work on another stream
    if (tracked) {
      lastStream.orderBefore(stream);
      ticket = progress.issue();
      if (plan.hostAccessGuard()) {
        marks.mark(stream, progress, ticket, b, b + 1);
      }
    }
    compiled.enqueueSteps(stream, b, b + 1, capturing);
    if (tracked) {
      lastStream.enqueued(stream, ticket);
    }
    enqueuedAny = true;
    Agreement agreement = plan.agreement();
    if (agreement != null && !capturing) {
      agreement.bucket(plan.agreementKey(), b, buckets.get(b).step(), stream, plan.orderCheck());
    }
  }

  private void reset() {
    Arrays.fill(events, null);
    for (Schedule.Bucket b : buckets) {
      missing[b.index()] = handlesOf[b.index()].length;
    }
    marked = 0;
    next = 0;
  }
}
