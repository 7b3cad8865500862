package dev.commplan.runtime.spi;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.AgreementChecked;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CommOptions;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.ConcurrentUseException;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.Lateness;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.agreement.Agreement;
import dev.commplan.runtime.guard.CallGate;
import dev.commplan.runtime.plan.CompiledSchedule;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.rules.CallRules;
import dev.commplan.runtime.rules.StreamOrder;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;

/**
 * What every backend's communicator is built on, so that none can skip what a direct call owes its
 * users (as {@link StreamBase} does for streams; Netty's {@code AbstractChannel} is the model): the
 * direct collectives, groups, splits and {@link #compile} are final here. Each direct call, group and
 * split does all of the following; {@code compile} (which a plan's build calls) does the second to the
 * fourth:
 *
 * <ol>
 *   <li>holds the communicator's "one thread at a time" gate (another thread's overlapping call, execute
 *       or open group is refused with {@link ConcurrentUseException} naming both threads; an open group
 *       holds it until its {@code groupEnd()}; the communicator's streams carry the same gate, so plans
 *       executing on them hold it too);
 *   <li>asks the backend whether the communicator can be used ({@link #ensureUsable});
 *   <li>checks its arguments with the runtime's rules (the rules plans are checked by, with the same
 *       ids; a schedule: memory, regions, roots and peers), so that the backend sees only checked calls;
 *   <li>hands the checked call to the backend: {@link #enqueueDirect} (its one dispatch), {@link
 *       #splitGroup}, {@link #openGroup}/{@link #closeGroup}, {@link #compileChecked};
 *   <li>tells the communicator's agreement check about a collective, which every few calls enqueues its
 *       own comparison through the same dispatch.
 * </ol>
 *
 * <p>A backend's communicator extends this class and implements those methods and the rest of {@link BackendCommunicator}
 * (rank, size, stream, allocate, close); its streams extend {@link StreamBase}, made with this as their owner.
 *
 * <p>The agreement check reaches the backend only through this class and its {@link AgreementExchange} (the
 * check's calls, handed to {@link #enqueueDirect}), also where the check is off: a plan's fingerprint and a mesh
 * are compared through the same exchange.
 */
public abstract class AbstractCommunicator implements BackendCommunicator, AgreementChecked {
  private static final String[] DIRECT = new String[Collective.values().length];

  static {
    for (Collective c : Collective.values()) {
      DIRECT[c.ordinal()] = c.methodName() + "()";
    }
  }

  /** Whether this communicator checks that its ranks agree ({@link CommOptions#agreementCheck()}). */
  private final boolean agreementCheck;
  /** Made on first use, when the rank and size are known; made where the check is off too (see the class comment). */
  private volatile Agreement agreement;
  /** The agreement check's calls, through this communicator's dispatch. */
  private final AgreementExchange exchange = new AgreementExchange(this);
  /** How deep the calling thread's groups are nested ({@link #groupStart()}); touched holding the gate. */
  private int groupDepth;
  private final MadeStreams madeStreams = new MadeStreams(); // those newStream() made, not yet closed
  /** {@link #isCapturing}, made once: the direct calls ask it only where the two-stream rule may wait. */
  private final Predicate<Stream> capturing = this::isCapturing;
  private final CallGate gate = new CallGate((holder, holderDoing, caller, callerDoing) ->
      ConcurrentUseException.of(this, holder, holderDoing, caller, callerDoing));
  /** The record {@link #dumpFlightRecord} writes for a backend that keeps none ({@link #flightGroup()}); made on first use. */
  private volatile FlightGroup standalone;

  /**
   * For subclasses: a communicator with its gate open and no call in progress, and the agreement check's
   * default ({@link CommOptions#defaultAgreementCheck()}).
   */
  public AbstractCommunicator() {
    this(CommOptions.defaultAgreementCheck());
  }

  /**
   * For subclasses: a communicator with its gate open and no call in progress.
   *
   * @param agreementCheck whether it checks that its ranks make the same calls ({@link
   *     CommOptions#agreementCheck()}); every rank must pass the same
   */
  @SuppressWarnings("this-escape") // the gate's refusal names this communicator (it runs only when a call is refused),
                                   // and the agreement check's exchange calls it (only once a check is made)
  protected AbstractCommunicator(boolean agreementCheck) {
    this.agreementCheck = agreementCheck;
  }

  /** The gate, one per communicator: its streams carry it ({@link StreamBase}), so that plans hold it when they execute. */
  final CallGate gate() {
    return gate;
  }

  /**
   * What {@link Communicator#stream()} throws once the communicator was closed by its user (its streams closed
   * with it), as {@link #newStream()} refuses: a backend's {@code stream()} throws it rather than hand out a
   * closed stream.
   *
   * @return the exception, naming this communicator
   */
  protected final IllegalStateException closedStreamRefusal() {
    return new IllegalStateException(this + " is closed, and its stream with it: stream() and newStream() work on an"
        + " open communicator only");
  }

  /** {@inheritDoc} Here: holding the gate, the backend's {@link #openStream()}, closed with this at the latest. */
  @Override
  public final Stream newStream() {
    gate.enter("newStream()");
    try {
      ensureUsable();
      return madeStreams.add(openStream());
    } finally {
      gate.exit();
    }
  }

  /** {@return the streams {@link #newStream()} made that are still open (a snapshot), each of {@link #openStream()}} */
  protected final List<StreamBase> madeStreams() {
    return madeStreams.open();
  }

  /**
   * {@return {@code failure} (or the first failure here) with what failed here added} Closes those streams
   * (a backend's close and abort call it).
   * @param failure what already failed while closing, or null
   */
  protected final RuntimeException closeMadeStreams(RuntimeException failure) {
    return madeStreams.closeAll(failure);
  }

  @Override
  public final void allReduce(Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    direct(Collective.ALL_REDUCE, send, recv, op, -1, stream);
  }

  @Override
  public final void broadcast(Buffer send, Buffer recv, int root, Stream stream) {
    direct(Collective.BROADCAST, send, recv, null, root, stream);
  }

  @Override
  public final void allGather(Buffer send, Buffer recv, Stream stream) {
    direct(Collective.ALL_GATHER, send, recv, null, -1, stream);
  }

  @Override
  public final void reduceScatter(Buffer send, Buffer recv, ReduceOp op, Stream stream) {
    direct(Collective.REDUCE_SCATTER, send, recv, op, -1, stream);
  }

  @Override
  public final void reduce(Buffer send, Buffer recv, ReduceOp op, int root, Stream stream) {
    direct(Collective.REDUCE, send, recv, op, root, stream);
  }

  @Override
  public final void gather(Buffer send, Buffer recv, int root, Stream stream) {
    direct(Collective.GATHER, send, recv, null, root, stream);
  }

  @Override
  public final void scatter(Buffer send, Buffer recv, int root, Stream stream) {
    direct(Collective.SCATTER, send, recv, null, root, stream);
  }

  @Override
  public final void allToAll(Buffer send, Buffer recv, Stream stream) {
    direct(Collective.ALL_TO_ALL, send, recv, null, -1, stream);
  }

  @Override
  public final void send(Buffer buffer, int peer, Stream stream) {
    pointToPoint(Collective.SEND, buffer, peer, stream);
  }

  @Override
  public final void recv(Buffer buffer, int peer, Stream stream) {
    pointToPoint(Collective.RECV, buffer, peer, stream);
  }

  /** A send or receive: the same path, with the one buffer as both sides and the peer where a root goes. */
  private void pointToPoint(Collective collective, Buffer buffer, int peer, Stream stream) {
    gate.enter(DIRECT[collective.ordinal()]);
    try {
      ensureUsable();
      long count = CallRules.checkPointToPoint(collective, this, buffer, peer, stream);
      if (peer == rank() && groupDepth == 0) {
        throw new IllegalArgumentException(RuleId.BAD_PEER.tag() + " " + groupLabel() + ", rank " + rank() + ": "
            + collective.methodName() + "() to or from this rank itself outside a group; it needs its "
            + collective.counterpart().methodName() + "() in the same group (NCCL would wait for it forever). Fix:"
            + " call groupStart(), the send and the receive, then groupEnd(); or copy the buffer instead");
      }
      orderAfterPlanWork(buffer, buffer, stream);
      enqueueDirect(collective, buffer, buffer, count, null, peer, stream);
      if (agreementCheck) {
        agreement().pointToPoint(collective == Collective.SEND, peer, buffer.dataType(), count, stream);
      }
    } finally {
      gate.exit();
    }
  }

  private void direct(Collective collective, Buffer send, Buffer recv, ReduceOp op, int root, Stream stream) {
    gate.enter(DIRECT[collective.ordinal()]);
    try {
      ensureUsable();
      long count = CallRules.checkCollective(collective, this, send, recv, op, root, stream);
      orderAfterPlanWork(send, recv, stream);
      enqueueDirect(collective, send, recv, count, op, root, stream);
      if (agreementCheck) {
        agreement().collective(collective, send.dataType(), op, root, count, stream);
      }
    } finally {
      gate.exit();
    }
  }

  /** The two-stream rule ({@link StreamOrder}) for a direct call: after plan work on its buffers elsewhere. */
  private void orderAfterPlanWork(Buffer send, Buffer recv, Stream stream) {
    StreamOrder.afterPlanWorkOn(send, stream, capturing);
    if (recv != send) {
      StreamOrder.afterPlanWorkOn(recv, stream, capturing);
    }
  }

  /**
   * {@inheritDoc} Here: throws if the communicator cannot be used ({@link #ensureUsable}) or {@code
   * schedule} does not fit it (built for another size, memory this communicator cannot use or that was
   * freed, a region outside its block, an op, root or peer missing or out of range: an {@link
   * IllegalArgumentException} naming the step and fields), then has the backend compile it ({@link
   * #compileChecked}).
   */
  @Override
  public final CompiledSchedule compile(Schedule schedule) {
    ensureUsable();
    ScheduleCheck.check(this, schedule);
    return compileChecked(schedule);
  }

  @Override
  public final Communicator split(int color, int key) {
    return split(color, key, null);
  }

  @Override
  public final Communicator split(int color, int key, String label) {
    if (color < 0) {
      IllegalArgumentException refused = new IllegalArgumentException(groupLabel() + ", rank " + rank() + ": split(color "
          + color + ", key " + key + "): the color must be >= 0 (ranks that pass the same color form one group)");
      splitRefused(refused);
      throw refused;
    }
    String name = label != null ? label : "split(color " + color + ") of " + groupLabel();
    gate.enter("split()");
    try {
      ensureUsable();
      return splitGroup(color, key, name);
    } finally {
      gate.exit();
    }
  }

  /**
   * This rank refused a {@link #split} ({@code refusal}, which the split throws next) before anything was sent,
   * while the other ranks may already wait in the split for it. The default does nothing (an in-process
   * cluster aborts its other ranks when this rank's task fails); a backend whose ranks would otherwise wait out
   * their timeout tells them here (MPI fails the family, naming this rank and the refusal).
   *
   * @param refusal what the split throws
   */
  protected void splitRefused(IllegalArgumentException refusal) {}

  /**
   * {@inheritDoc} Here, once the communicator is closed (or aborted): the message of what {@link
   * #ensureUsable()} throws, so that each backend says why in one place, for its calls and its plans alike.
   */
  @Override
  public String unusableReason() {
    if (!isClosed()) {
      return null;
    }
    try {
      ensureUsable();
    } catch (RuntimeException e) {
      return e.getMessage();
    }
    return null;
  }

  /** {@inheritDoc} The default: {@code world}; split communicators return their label. */
  @Override
  public String groupLabel() {
    return "world";
  }

  /** Opens a group; the calling thread holds the gate until the matching {@link #groupEnd()}. */
  @Override
  public final void groupStart() {
    gate.enter("an open group (groupStart() .. groupEnd())");
    boolean opened = false;
    try {
      ensureUsable();
      openGroup();
      groupDepth++;
      opened = true;
    } finally {
      if (!opened) {
        gate.exit();
      }
    }
  }

  /** Closes the innermost group and lets go of the gate its {@link #groupStart()} took. */
  @Override
  public final void groupEnd() {
    gate.enter("groupEnd()");
    try {
      ensureUsable();
      closeGroup(); // throws, holding nothing more, when no group is open
      groupDepth--;
      gate.exit(); // the hold of the matching groupStart
    } finally {
      gate.exit();
    }
  }

  /**
   * {@inheritDoc} Here: this communicator's, made on first use, through which its plans record their executes
   * and compare their fingerprints.
   */
  @Override
  public final Object agreementCheck() {
    return agreement();
  }

  /**
   * {@inheritDoc} Here: the record of this rank's {@link #flightGroup()} ({@link FlightLog#write}); a backend
   * that keeps none writes this communicator's group without operations.
   */
  @Override
  public final void dumpFlightRecord(Path file) {
    FlightGroup group = flightGroup();
    if (group == null) {
      group = standalone();
    }
    group.log().write(file, "on demand");
  }

  private FlightGroup standalone() {
    FlightGroup g = standalone;
    if (g == null) {
      synchronized (this) {
        if (standalone == null) {
          int[] members = "world".equals(groupLabel()) ? java.util.stream.IntStream.range(0, size()).toArray() : null;
          FlightLog log = new FlightJob(FlightJob.newId(backendName()), backendName(), size(), null).log(rank());
          standalone = log.group(groupLabel(), rank(), size(), members, groupLabel());
        }
        g = standalone;
      }
    }
    return g;
  }

  /**
   * {@inheritDoc} Here: from this communicator's agreement check ({@link Agreement#lateness()}), whose window
   * checks carry each rank's waits as its flight recorders timed them ({@link FlightGroup#addWaits}).
   */
  @Override
  public final List<Lateness> lateness() {
    return agreement().lateness();
  }

  /**
   * This communicator's part of its rank's flight record ({@link FlightLog#group}), whose recorders its streams
   * record into, or null for a backend that keeps none. {@link #dumpFlightRecord} writes its log, and the
   * agreement check reads the waits its recorders timed ({@link Communicator#lateness()}).
   *
   * @return the group, or null
   */
  protected FlightGroup flightGroup() {
    return null;
  }

  /** {@inheritDoc} Here: through this communicator's agreement check ({@link Agreement#compareMeshes}). */
  @Override
  public final void compareMeshes(String description) {
    agreement().compareMeshes(description);
  }

  /**
   * The agreement check of this communicator; where the check is off it records nothing but order-checked
   * plans, and serves the comparisons made once. Made on first use: by then the backend knows the rank and size.
   */
  final Agreement agreement() {
    Agreement a = agreement;
    if (a == null) {
      synchronized (this) {
        if (agreement == null) {
          agreement = new Agreement(exchange, rank(), size(), groupLabel(), agreementCheck);
        }
        a = agreement;
      }
    }
    return a;
  }

  /**
   * Compares the calls that no agreement check has compared yet, with one last check on every rank, and
   * waits for it ({@link Agreement#compareAtClose}): for a backend whose ranks live in separate processes,
   * where nobody compares them on the host (in-process clusters do, once every rank's task returns). Call
   * it first thing in a close that is not on the failure path, and on no other: it is a collective, which
   * every rank of the communicator reaches after its last call there. Call it only where the check's calls
   * ({@link #issuingAgreementCheck}) have a channel the user's calls never use (MPI: a duplicate of each
   * communicator): a rank that throws inside try-with-resources closes normally too, while its peers may still
   * wait in a call it skipped, which the comparison must not meet (a mismatched collective). Does nothing where
   * the check is off, the communicator cannot be used (closed, aborted, its family failed), or a group is
   * open. A difference throws {@link DisagreementException}, naming the first differing call.
   */
  protected final void compareLastCalls() {
    if (!agreementCheck) {
      return;
    }
    gate.enter("close()");
    try {
      if (groupDepth > 0) {
        return; // the group's calls were never issued: nothing to compare them with
      }
      try {
        ensureUsable();
      } catch (RuntimeException failed) {
        return; // the failure path: the others are not coming
      }
      agreement().compareAtClose(stream());
    } finally {
      gate.exit();
    }
  }

  /**
   * {@return whether the call {@link #enqueueDirect} is enqueuing is one of the agreement check's own} The
   * backend labels it so ({@link OperationLabel#agreementCheck}) in timeouts and its flight recorder, and may
   * run it over a channel of the check's own ({@link #compareLastCalls} says when it must).
   */
  protected final boolean issuingAgreementCheck() {
    return exchange.issuing();
  }

  /** {@return whether the calling thread has a group open ({@link #groupStart()}); asked holding the gate} */
  final boolean inGroup() {
    return groupDepth > 0;
  }

  /**
   * Whether {@code stream} is being captured (its work recorded for replay, the package's <em>capture</em>:
   * a CUDA graph on NCCL); asked only when an agreement check is due. The default: never (a backend that
   * records nothing).
   *
   * @param stream a stream of this communicator
   * @return whether work enqueued on it now is recorded instead of run
   */
  protected boolean isCapturing(Stream stream) {
    return false;
  }

  /**
   * Throws if the communicator cannot be used: closed, aborted, or asked to give up because another rank
   * failed (which it does here, on the calling thread).
   */
  protected abstract void ensureUsable();

  /**
   * Enqueues one checked direct collective: {@code count} is the call's count (the package's <em>count</em>,
   * per rank as the collective is defined), {@code op} null for a
   * collective without one, {@code root} the root of a rooted collective, the peer (a rank of the
   * communicator) of a send or receive, and -1 otherwise. A send or receive passes its one buffer as both
   * {@code send} and {@code recv}. Called holding the gate.
   *
   * @param collective the collective; a send or receive included
   * @param send the send buffer (a send's or receive's one buffer)
   * @param recv the receive buffer (the same buffer for a send or receive)
   * @param count the call's count, per rank as its collective is defined
   * @param op the reduction, or null
   * @param root the root, the peer of a send or receive, or -1
   * @param stream the stream to enqueue on, this communicator's
   */
  protected abstract void enqueueDirect(Collective collective, Buffer send, Buffer recv, long count, ReduceOp op,
      int root, Stream stream);

  /**
   * The backend's split ({@link Communicator#split(int, int, String)}), after the color was checked;
   * called holding the gate, by every rank of this communicator. The new communicator belongs to this
   * one's family: it is closed with it at the latest, and a failure anywhere in the family ends it.
   *
   * @param color the group this rank joins, {@code >= 0}
   * @param key this rank's order in its group (ties: the rank here)
   * @param label what messages call the new group
   * @return this rank's communicator of its group
   */
  protected abstract BackendCommunicator splitGroup(int color, int key, String label);

  /**
   * The backend's {@link #compile}, handed a schedule that was checked against this communicator: every
   * call's memory is usable here and its regions lie inside their blocks, every root and peer is a rank of
   * the call's group ({@link Schedule#communicatorOf}), ops are set where the collective has one.
   *
   * @param schedule the checked schedule
   * @return the compiled schedule, which holds the schedule's memory by address and does not own it
   */
  protected abstract CompiledSchedule compileChecked(Schedule schedule);

  /** {@return another stream of this communicator, for {@link #newStream()} (holding the gate, on a usable one)} */
  protected abstract StreamBase openStream();

  /** Opens a group (groups nest); called holding the gate. */
  protected abstract void openGroup();

  /**
   * Closes the innermost group, launching its calls when it was the outermost.
   *
   * @throws IllegalStateException when no group is open
   */
  protected abstract void closeGroup();
}
