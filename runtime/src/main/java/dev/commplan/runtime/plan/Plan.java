package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.guard.CallGate;
import dev.commplan.runtime.guard.Failures;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.stream.IntStream;

/**
 * A built plan: its buffers, its {@link Schedule} and the schedule compiled for the communicator's
 * backend. Made by {@link PlanBuilder#build()}; generated plan classes wrap one.
 *
 * <p>{@link #execute} enqueues the whole schedule on a stream and returns without waiting. Closing frees
 * the plan-owned buffers (user-bound ones stay the user's).
 *
 * <p><b>Host-access guard</b> (on unless {@link PlanBuilder#hostAccessGuard(boolean)} or the system
 * property {@value PlanBuilder#HOST_ACCESS_GUARD_PROPERTY} turned it off): each execute marks the buffers
 * its steps write (receive sides, in-place buffers) and read (send sides) as in flight on the stream, with
 * plain field writes (nothing allocated); until a {@code synchronize()} of that stream, begun after the
 * execute, returns normally, a host read of a written buffer or a host write to any marked buffer throws
 * {@link BufferInFlightException}. Streams not built on the SPI's {@link
 * dev.commplan.runtime.spi.StreamBase} (which keeps the guard's tickets) are not guarded.
 *
 * <p><b>Capture</b> ({@link #capture}): the backend records the whole schedule once ({@link
 * CompiledSchedule#capture}; a CUDA graph on the NCCL backend), and each {@link CapturedPlan#launch()}
 * enqueues it again. What a replay of the graph would skip is done here, on the host, at every launch:
 * the checks of {@link #execute} (plan, communicator and bound buffers open) and the guard's marks; the
 * backend adds its flight record. The plan keeps its live captured plans and closes them before it frees
 * its memory, so that no graph outlives the addresses it holds.
 *
 * <p><b>Buckets</b> ({@link PlanBuilder#bucketBytes}): {@link #ready} marks a field written by a producer
 * stream's work and enqueues, on the plan's communication stream and in one order on every rank, each bucket
 * whose fields are all marked; {@link #finish} makes a consumer stream wait for the last one. {@code execute}
 * still issues the whole plan, but not while such a round is open. The rounds are a class of their own
 * ({@code BucketRound}); the plan checks that it can run, then hands them the call.
 *
 * <p><b>Inside someone else's capture.</b> When the stream is being captured into a CUDA graph by the
 * caller's own code ({@link CompiledSchedule#isCapturing}, asked once per execute), {@code execute}
 * records the calls into that graph and marks nothing: no work runs until the caller launches the
 * graph, and the guard cannot see that launch (the caller synchronizes the stream before reading, as
 * with any CUDA work of their own).
 */
public final class Plan implements AutoCloseable {
  private final String name;
  private final Communicator comm;
  private final Schedule schedule;
  private final CompiledSchedule compiled;
  private final Buffer[] buffers;
  private final List<String> fields;
  /** The handles of user-bound buffers: the only ones execute must check are still open. */
  private final int[] boundHandles;
  private final DeviceMemory ownedMemory;
  private final String description;
  private final boolean hostAccessGuard;
  /** Per step (schedule order): the guard's marks of what it writes and reads. */
  private final GuardMarks stepMarks;
  /** Where the plan's work last went, for the two-stream rule; shared with its rounds. */
  private final LastStream lastStream = new LastStream();
  /** A bucketed plan's ready/finish rounds; null for a plan that is not bucketed. Set once, by the builder. */
  private BucketRound round;
  /** The captured plans not yet closed: closed before the plan frees its memory. */
  private final Set<PlanCapture> captures = ConcurrentHashMap.newKeySet();
  private volatile boolean closed;
  /** Whether the ranks' units are compared right after each execute of this plan ({@link PlanBuilder#orderCheck}). */
  private final boolean orderCheck;
  /**
   * The communicator's agreement check, when it records this plan's units (the check is on, or the plan has
   * the order check), else null; and what names this plan there (its name and instance).
   */
  private final Agreement agreement;
  private final Agreement.PlanKey agreementKey;
  /** What the communicator's gate says this thread was doing, made once: {@code execute() of plan p.X}. */
  private final String executeLabel;
  private final String launchLabel;

  /**
   * Made by {@link PlanAssembly}, once every stage of the build has passed.
   *
   * @param buffers per handle, the plan-owned view or the bound buffer
   * @param fields per handle, the field's name
   * @param bound per handle, whether the user bound the buffer
   * @param ownedMemory the plan-owned memory, or null
   * @param stepMarks per step, in the schedule's order, the guard's marks of what its calls write and read
   */
  Plan(String name, Communicator comm, Schedule schedule, CompiledSchedule compiled, Buffer[] buffers,
      List<String> fields, boolean[] bound, DeviceMemory ownedMemory, String description,
      boolean hostAccessGuard, boolean orderCheck, GuardMarks stepMarks) {
    this.hostAccessGuard = hostAccessGuard;
    this.stepMarks = stepMarks;
    this.name = name;
    this.executeLabel = "execute() of plan " + name;
    this.launchLabel = "launch() of plan " + name + " (captured)";
    this.comm = comm;
    this.schedule = schedule;
    this.compiled = compiled;
    this.buffers = buffers;
    this.fields = fields;
    this.boundHandles = IntStream.range(0, bound.length).filter(h -> bound[h]).toArray();
    this.ownedMemory = ownedMemory;
    this.description = description;
    this.orderCheck = orderCheck;
    Agreement check = Agreement.of(comm);
    // every build is counted, so that the k-th plan of a name is the same instance on every rank
    this.agreementKey = check == null ? null : check.registerPlan(name, fields);
    this.agreement = check != null && (check.recordsCalls() || orderCheck) ? check : null;
  }

  /** {@return where the plan's work last went (its rounds share it)} */
  LastStream lastStream() {
    return lastStream;
  }

  /** Set once by the builder, before the plan is handed out, when it is bucketed. */
  void round(BucketRound round) {
    this.round = round;
  }

  /** The communicator's agreement check where it records this plan's units, else null; and this plan's key there. */
  Agreement agreement() {
    return agreement;
  }

  Agreement.PlanKey agreementKey() {
    return agreementKey;
  }

  /** {@return per step, the guard's marks of what the plan's calls write and read} */
  GuardMarks stepMarks() {
    return stepMarks;
  }

  /**
   * {@return whether the plan checks the order of executes across the ranks ({@link PlanBuilder#orderCheck})}
   */
  public boolean orderCheck() {
    return orderCheck;
  }

  /**
   * The buffer of a handle {@link PlanBuilder#buffer} returned: a plan-owned view or the bound buffer.
   *
   * @param handle a handle {@link PlanBuilder#buffer} returned for this plan
   * @return the buffer; a plan-owned one is freed when the plan closes
   */
  public Buffer buffer(int handle) {
    if (handle < 0 || handle >= buffers.length) {
      throw new IndexOutOfBoundsException(
          "plan " + name + " has buffer handles 0.." + (buffers.length - 1) + ", not " + handle);
    }
    return buffers[handle];
  }

  /**
   * Enqueues every step, in ascending order, each inside one group, on {@code stream}, and returns
   * without waiting; read the results after {@code stream.synchronize()}. Allocates nothing.
   *
   * @param stream a stream of the plan's communicator; the plan's work runs in its order
   * @throws IllegalStateException if the plan, or a buffer bound to it, is closed
   * @throws IllegalArgumentException if {@code stream} belongs to another communicator
   */
  public void execute(Stream stream) {
    checkExecutable(stream);
    checkNoRound("execute()");
    enqueue(stream, 0, stepMarks.units(), -1, null);
  }

  /**
   * Records the whole plan once for {@code stream}, for launching again and again: on the NCCL backend
   * every step (each an NCCL group) is captured into one CUDA graph, and {@link CapturedPlan#launch()} is
   * one {@code cudaGraphLaunch}; on backends without CUDA graphs, {@code launch()} executes the plan.
   * Capturing runs nothing. A collective call: every rank captures at the same point of its sequence of
   * collectives, and launches where the others do. See {@link CapturedPlan} for what launch checks and
   * for the lifetime rule (closing this plan closes its captured plans).
   *
   * @param stream a stream of the plan's communicator that every launch enqueues on
   * @return the captured plan, which the caller (or closing this plan) closes
   * @throws IllegalStateException if the plan, its communicator or a buffer bound to it is closed, or
   *     (NCCL) the stream is already being captured: inside a capture of your own, call {@link #execute}
   * @throws IllegalArgumentException if {@code stream} belongs to another communicator, or (NCCL) is the
   *     legacy default stream, which CUDA cannot capture
   */
  public CapturedPlan capture(Stream stream) {
    checkExecutable(stream);
    checkNoRound("capture()");
    CompiledSchedule.Capture recording = compiled.capture(stream);
    PlanCapture captured = new PlanCapture(this, stream, recording);
    captures.add(captured);
    if (closed) { // closed by another thread meanwhile: do not leave a graph behind
      captured.closeBecause("its plan was closed");
      checkExecutable(stream);
    }
    return captured;
  }

  /** One launch of a captured plan: {@link #execute}'s checks and marks, then the backend's launch. */
  void launch(Stream stream, CompiledSchedule.Capture recording) {
    checkExecutable(stream);
    checkNoRound("launch()");
    enqueue(stream, 0, stepMarks.units(), -1, Objects.requireNonNull(recording, "recording"));
  }

  /** A captured plan was closed. */
  void forget(PlanCapture captured) {
    captures.remove(captured);
  }

  /** The plan's name, for messages. */
  String name() {
    return name;
  }

  /**
   * Enqueues only the step numbered {@code step} (the annotations' {@code step} value), inside one
   * group, and returns without waiting. For plans whose steps need host work in between: ZeRO updates
   * its shard between the ReduceScatter step and the AllGather step. The caller keeps the steps' order
   * and makes every rank issue the same steps.
   *
   * @param step the step number, as in the annotations
   * @param stream a stream of the plan's communicator
   * @throws IllegalArgumentException if the plan has no such step (the message lists its steps)
   */
  public void executeStep(int step, Stream stream) {
    checkExecutable(stream);
    checkNoRound("executeStep()");
    List<Step> steps = schedule.steps();
    for (int i = 0; i < steps.size(); i++) {
      if (steps.get(i).number() == step) {
        enqueue(stream, i, i + 1, step, null);
        return;
      }
    }
    throw new IllegalArgumentException("plan " + name + " has no step " + step + "; its steps are "
        + steps.stream().map(s -> Integer.toString(s.number())).toList());
  }

  /**
   * The one path of {@link #execute}, {@link #executeStep} and a captured plan's launch, after {@link
   * #checkExecutable}: holding the communicator's gate (one thread at a time: another thread in this
   * communicator is refused), it asks the backend once whether the stream is being captured, does the
   * host-side bookkeeping ({@link #track}) unless it is, has the backend enqueue the steps at positions
   * {@code [from, to)} (or launch {@code recording}, which holds them all), and tells the agreement check.
   * Allocates nothing.
   *
   * @param step the step number for the agreement check, or -1 for the whole plan
   * @param recording the captured plan to launch, or null to enqueue the steps
   */
  private void enqueue(Stream stream, int from, int to, int step, CompiledSchedule.Capture recording) {
    StreamProgress progress = Guards.progressOf(stream);
    if (progress == null) { // a stream not built on StreamBase keeps no guard and no gate
      issue(stream, from, to, recording, compiled.isCapturing(stream));
      return;
    }
    CallGate gate = progress.gate();
    gate.enter(recording == null ? executeLabel : launchLabel);
    try {
      boolean capturing = compiled.isCapturing(stream);
      long ticket = 0;
      if (!capturing) { // inside a capture nothing runs now: nothing to order, guard or check after a synchronize
        lastStream.orderBefore(stream);
        ticket = progress.issue();
        track(stream, progress, ticket, from, to);
      }
      issue(stream, from, to, recording, capturing);
      if (!capturing) {
        lastStream.enqueued(stream, ticket);
      }
      enqueued(stream, capturing, step, recording != null);
    } finally {
      gate.exit();
    }
  }

  /** The backend's part of {@link #enqueue}: launch {@code recording}, or enqueue steps {@code [from, to)}. */
  private void issue(Stream stream, int from, int to, CompiledSchedule.Capture recording, boolean capturing) {
    if (recording != null) {
      recording.launch(capturing);
    } else {
      compiled.enqueueSteps(stream, from, to, capturing);
    }
  }

  /**
   * Tells the agreement check that the plan (or a step, or its graph) was enqueued; not while capturing.
   * With the order check, the check compares the ranks' units right after this one.
   */
  private void enqueued(Stream stream, boolean capturing, int step, boolean launch) {
    if (agreement != null && !capturing) {
      agreement.plan(agreementKey, step, launch, stream, orderCheck);
    }
  }

  /**
   * The host-side bookkeeping of an enqueue of steps {@code [from, to)}, under the enqueue's new ticket of the
   * stream: the guard's marks. Nothing at all when the guard is off.
   */
  private void track(Stream stream, StreamProgress progress, long ticket, int from, int to) {
    if (hostAccessGuard) {
      stepMarks.mark(stream, progress, ticket, from, to);
    }
  }

  private void checkExecutable(Stream stream) {
    Objects.requireNonNull(stream, "stream");
    if (closed) {
      throw new IllegalStateException("plan " + name + " is closed");
    }
    if (comm.isClosed()) {
      throw unusable(name, comm);
    }
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException("plan " + name + " was built for " + comm + "; use a stream of that"
          + " communicator (its stream() or one its newStream() made), not " + stream + " of " + stream.communicator());
    }
    for (int handle : boundHandles) {
      if (buffers[handle].isClosed()) {
        throw new IllegalStateException(
            "plan " + name + ": the buffer bound to field '" + fields.get(handle) + "' has been closed");
      }
    }
  }

  /**
   * What building or running plan {@code planName} on a closed or aborted {@code comm} throws: the backend says
   * which, and why.
   */
  static IllegalStateException unusable(String planName, Communicator comm) {
    String why = comm instanceof CompiledSchedule.Compiler backend ? backend.unusableReason() : null;
    return new IllegalStateException("plan " + planName + ": its communicator (" + comm.backendName() + " rank "
        + comm.rank() + ") " + (why != null ? "cannot run it: " + why : "is closed"));
  }

  /**
   * Marks the field of {@code handle} ready in this round of a bucketed plan ({@link PlanBuilder#bucketBytes}):
   * the work enqueued on {@code producer} so far writes it. Records an event on {@code producer}; once every
   * field of the next bucket (in the order every rank uses, {@link Schedule#buckets()}) is marked, enqueues that
   * bucket on the plan's communication stream after the events of its fields, and so on while the next one is
   * complete. Returns without waiting (MPI: the enqueue of a bucket may first complete the one before it).
   *
   * @param handle the handle of a field a call of the plan sends
   * @param producer the stream whose work so far writes the field; of this rank and device
   * @throws IllegalStateException if the plan is not bucketed or is closed, or the field was already marked in
   *     this round (nothing changes)
   * @throws IllegalArgumentException if no call sends the field, or {@code producer} is of another rank,
   *     device or backend
   */
  public void ready(int handle, Stream producer) {
    BucketRound r = bucketed("ready()");
    checkExecutable(r.stream());
    r.ready(handle, producer);
  }

  /**
   * Ends this round of a bucketed plan: work enqueued on {@code consumer} afterwards starts after every
   * bucket's calls have completed; the host does not wait. The plan's buffers count as in flight on {@code
   * consumer} for the host-access guard until it is synchronized. Fields not marked since the last finish: every
   * remaining bucket is still enqueued (so that no peer is left waiting; those fields are reduced with what they
   * hold), the consumer still waits for them, the round ends, and then the call throws.
   *
   * @param consumer a stream of the plan's communicator
   * @throws IllegalStateException if the plan is not bucketed or is closed, or naming every field that was not
   *     marked ready in the round (after ending it as above)
   * @throws IllegalArgumentException if {@code consumer} belongs to another communicator
   */
  public void finish(Stream consumer) {
    BucketRound r = bucketed("finish()");
    checkExecutable(consumer);
    r.finish(consumer);
  }

  /** {@return the number of buckets, 0 for a plan built without {@link PlanBuilder#bucketBytes}} */
  public int buckets() {
    return round == null ? 0 : round.buckets();
  }

  private BucketRound bucketed(String what) {
    if (round == null) {
      throw new IllegalStateException("plan " + name + " is not bucketed, so it has no " + what + ": build it with"
          + " bucketBytes > 0 (@CommPlan(bucketBytes)), or run it whole with execute(stream)");
    }
    return round;
  }

  /** Refuses to issue the whole plan while a ready/finish round is open. */
  private void checkNoRound(String what) {
    if (round != null) {
      round.refuseWhileOpen(what);
    }
  }

  /** {@return what the plan issues: steps, calls, counts and fields} */
  public Schedule schedule() {
    return schedule;
  }

  /**
   * A readable multi-line account of the plan: its name, ranks, backend, and per step every NCCL call
   * (collective, data type, op or root, count, bytes, fields, in place or not).
   *
   * @return the account, one line per call after the header; for logs and tests
   */
  public String describe() {
    return description;
  }

  /** {@return the communicator the plan was built for} */
  public Communicator communicator() {
    return comm;
  }

  /** {@return whether the host-access guard is on for this plan (see the class comment)} */
  public boolean hostAccessGuard() {
    return hostAccessGuard;
  }

  /** {@return whether {@link #close()} has been called} */
  public boolean isClosed() {
    return closed;
  }

  /**
   * Closes the plan's captured plans (destroying their graphs), then frees the plan-owned buffers;
   * idempotent. Bound buffers stay open (the user owns them). Not a collective: closing issues no call, so no
   * buffer changes at close. A bucketed plan first waits for the buckets it enqueued (so that none runs on
   * memory being freed); a ready()/finish() round left open is the caller's error: its remaining buckets are
   * not enqueued, the agreement check records the open round (a peer that finished the round learns of it at
   * its next check, or times out in the bucket this rank never enqueued), and close throws once the plan is
   * closed.
   *
   * @throws IllegalStateException naming the fields never marked ready, where a round was left open
   */
  @Override
  public void close() {
    if (closed) {
      return;
    }
    closed = true;
    RuntimeException failure = null;
    IllegalStateException roundLeftOpen = null;
    if (round != null) {
      try {
        roundLeftOpen = round.close(!comm.isClosed()); // before the memory goes: no bucket may still run on it
      } catch (RuntimeException e) {
        failure = e;
      }
    }
    for (PlanCapture captured : List.copyOf(captures)) {
      try {
        captured.closeBecause("its plan was closed");
      } catch (RuntimeException e) { // a graph that could not be destroyed can no longer be launched either
        failure = Failures.add(failure, e);
      }
    }
    if (ownedMemory != null) {
      ownedMemory.close();
    }
    if (roundLeftOpen != null) {
      if (failure != null) {
        roundLeftOpen.addSuppressed(failure);
      }
      throw roundLeftOpen;
    }
    if (failure != null) {
      throw failure;
    }
  }

  @Override
  public String toString() {
    return "Plan[" + name + ", rank " + comm.rank() + " of " + comm.size() + (closed ? ", closed" : "") + "]";
  }
}
