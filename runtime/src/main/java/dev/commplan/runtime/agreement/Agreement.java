package dev.commplan.runtime.agreement;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.AgreementChecked;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.Lateness;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The agreement check of one communicator (docs/reliability.md, "Agreement check"): whether its ranks
 * make the same calls. On by default, on every backend, through the backend's own collectives ({@link
 * Exchange}). This package is the one place where ranks' data is compared and where a disagreement is decided
 * and worded ({@link Disagreements}): besides the calls, a plan's fingerprint at build ({@link PlanFingerprint})
 * and a mesh at build ({@link MeshCheck}), and the finite check's verdict before a checked step ({@link
 * FiniteVerdict}), through the same exchange; and what the layers above find where ranks
 * meet outside these checks ({@link MeetingChecks}). Every finding is a {@link DisagreementException}, whose
 * message reads the same on every rank and every backend.
 *
 * <p>This class is the communicator's side of the check, what the SPI's communicator base class and plans call;
 * the work is done by:
 *
 * <ul>
 *   <li>{@link CallWindow}: the units (each direct collective and each plan execute, step, launch or bucket),
 *       each a {@link CallRecord}, compared across the ranks after units 1, 3, 7, ..., 1023 and then every
 *       {@value #MAX_INTERVAL} ({@link WindowCheck}), and after each unit of a plan built with the order check
 *       ({@code PlanBuilder.orderCheck}); a plan is named by its name and instance ({@link PlanNames});
 *   <li>{@link PairDigests}: sends and receives, compared per pair with one extra message ({@link PairCheck});
 *   <li>{@link HostComparison}: what the ranks of an in-process group did, compared on the host: at the end of a
 *       run (the calls no check compared) and where a backend's ranks meet;
 *   <li>{@link CheckBuffers}: the check's memory, and when it may be written again.
 * </ul>
 *
 * <p><b>The last calls.</b> What no check compared is compared on the host when every rank of an in-process
 * cluster returns ({@link #compareUnchecked}), and with one last window check where a rank of a backend with
 * one rank per process closes its communicator normally ({@link #compareAtClose}).
 *
 * <p>Used by the thread that holds the communicator's gate; the comparisons run on the synchronizing thread,
 * so the pool of check buffers is locked ({@link CheckBuffers}), and a backend's rendezvous reads the published
 * records ({@link CallWindow}).
 */
public final class Agreement {
  /** The most units (or messages to one peer) between two checks, and so the most records one check compares. */
  public static final int MAX_INTERVAL = 1024;

  /** Marks a header or message as the check's: a check that met a user's call reads something else there. */
  static final long MAGIC = 0x436f6d6d506c616eL;

  /**
   * What the check needs of its communicator: memory, its collectives and point-to-point calls without
   * the public calls' checks (they are the check's own), and whether a group is open.
   */
  public interface Exchange {
    /**
     * {@return a new buffer of {@code longs} U64 elements on this communicator (freed when it closes, as all its memory is)}
     *
     * @param longs its length
     */
    U64Buffer allocate(long longs);

    /**
     * Enqueues, in one group, an all-gather of {@code ownHeaders} into {@code headers} and one of {@code
     * ownRecords} into {@code records}.
     *
     * @param ownHeaders this rank's header
     * @param headers every rank's headers
     * @param ownRecords this rank's records
     * @param records every rank's records
     * @param stream the stream of the unit that made the check due
     */
    void allGather(Buffer ownHeaders, Buffer headers, Buffer ownRecords, Buffer records, Stream stream);

    /**
     * Enqueues an all-gather of {@code own} into {@code all} on the communicator's own stream, holding the
     * communicator's gate as a direct call does: for the comparisons made once ({@link TextExchange}), from
     * a thread that holds nothing.
     *
     * @param own this rank's part
     * @param all every rank's parts
     * @return the stream it was enqueued on, which the caller synchronizes
     */
    Stream allGather(Buffer own, Buffer all);

    /**
     * Enqueues an all-gather of {@code own} into {@code all} on {@code stream}, from the thread that holds the
     * communicator's gate: the finite check's findings ({@link FiniteVerdict}), in stream order after the search
     * that wrote them.
     *
     * @param own this rank's part
     * @param all every rank's parts
     * @param stream the stream of the unit being checked
     */
    void allGather(Buffer own, Buffer all, Stream stream);

    /**
     * Enqueues a send of {@code message} to {@code peer}.
     *
     * @param message the check's message
     * @param peer the rank it goes to
     * @param stream the stream of the send that made the check due
     */
    void send(Buffer message, int peer, Stream stream);

    /**
     * Enqueues a receive of {@code message} from {@code peer}.
     *
     * @param message where the peer's message goes
     * @param peer the rank it comes from
     * @param stream the stream of the receive that made the check due
     */
    void recv(Buffer message, int peer, Stream stream);

    /** {@return whether a group is open (its calls are not issued yet, so nothing can be waited for)} */
    boolean inGroup();

    /**
     * {@return whether {@code stream} is being captured into a CUDA graph (a check there would run at every launch,
     * comparing stale records)}
     *
     * @param stream the stream of the unit
     */
    boolean isCapturing(Stream stream);

    /**
     * Adds to {@code countAndSum} how many of the communicator's collectives this rank timed its wait in (for its
     * peers), and the sum of those waits in nanoseconds, since the communicator was made: what each window check
     * carries for {@link Agreement#lateness()}. The default adds nothing (a backend that times no waits).
     *
     * @param countAndSum two longs, added to; allocate nothing here
     */
    default void addWaits(long[] countAndSum) {}
  }

  private final Exchange exchange;
  private final int rank;
  private final int ranks;
  private final String group;
  /** Whether the communicator's calls are recorded (its check is on); off, only order-checked plans are. */
  private final boolean recordsCalls;
  private final PlanNames plans = new PlanNames();
  private final CheckBuffers buffers;
  private final CallWindow window = new CallWindow(this);
  private final PairDigests pairs;
  private final LatenessWindows lateness;

  /**
   * Set once a comparison found a difference here: the ranks were told, and their records no longer line up,
   * so nothing later compares them again (the host's comparison at the end, the last check at close).
   */
  private volatile boolean found;

  /**
   * The check of one communicator.
   *
   * @param exchange the communicator's calls for the check
   * @param rank this rank in the communicator
   * @param ranks the communicator's size
   * @param group what messages call the communicator: {@code world}, {@code tp}
   * @param recordsCalls whether the communicator's check is on ({@code CommOptions.agreementCheck()}); off,
   *     only the units of plans built with the order check are recorded and compared, and the comparisons
   *     made once (fingerprints, meshes) still use this check's exchange
   */
  @SuppressWarnings("this-escape") // the window and the pairs keep their owner; neither calls it before it is made
  public Agreement(Exchange exchange, int rank, int ranks, String group, boolean recordsCalls) {
    this.exchange = exchange;
    this.rank = rank;
    this.ranks = ranks;
    this.group = group;
    this.recordsCalls = recordsCalls;
    this.buffers = new CheckBuffers(exchange, rank, ranks);
    this.pairs = new PairDigests(this, ranks);
    this.lateness = new LatenessWindows(ranks);
  }

  /**
   * {@return the check of {@code communicator}, or null for a communicator without one} The SPI's
   * communicator base class gives its own ({@link AgreementChecked#agreementCheck()}), made on first use, also
   * where the check is off (see {@link #recordsCalls()}).
   *
   * @param communicator a communicator
   */
  public static Agreement of(Object communicator) {
    return communicator instanceof AgreementChecked checked && checked.agreementCheck() instanceof Agreement a ? a
        : null;
  }

  /**
   * Compares {@code description} with every rank's mesh ({@link MeshCheck}): collective over this check's
   * communicator, the world of the mesh being built ({@link AgreementChecked#compareMeshes}).
   *
   * @param description this rank's mesh: {@code [dp=2, tp=4]}
   * @throws DisagreementException on every rank, if the ranks' meshes differ
   */
  public void compareMeshes(String description) {
    MeshCheck.compare(this, description);
  }

  /** {@return whether this communicator's calls are recorded and compared (its agreement check is on)} */
  public boolean recordsCalls() {
    return recordsCalls;
  }

  /**
   * Records that a plan of this name was built here (collectively, in the same order on every rank), so that
   * records tell its instances apart and messages can name it.
   *
   * @param planName the plan's name
   * @return what names the plan in records: the hash of its name and its instance on this communicator
   */
  public PlanKey registerPlan(String planName) {
    return plans.register(planName, List.of());
  }

  /**
   * As {@link #registerPlan(String)}, with the plan's fields by handle, so that messages can name the fields
   * of a record that lists some ({@link #roundClosed}).
   *
   * @param planName the plan's name
   * @param fields the plan's fields, by handle
   * @return what names the plan in records
   */
  public PlanKey registerPlan(String planName, List<String> fields) {
    return plans.register(planName, fields);
  }

  /**
   * What names one built plan in the records ({@link #registerPlan}).
   *
   * @param name the hash of the plan's name
   * @param instance the how-manyth plan of that name built on the communicator, from 1
   */
  public record PlanKey(long name, long instance) {}

  /**
   * A direct collective was enqueued on {@code stream}.
   *
   * @param collective the collective (not a send or receive)
   * @param type its data type
   * @param op its op, or null
   * @param root its root, or -1
   * @param count its count
   * @param stream the stream it was enqueued on
   */
  public void collective(Collective collective, DataType type, ReduceOp op, int root, long count, Stream stream) {
    window.add(CallRecord.direct(CallRecord.DIRECT, collective, type, op, root), count, 0, 0, stream, false);
  }

  /**
   * A plan's steps were enqueued on {@code stream}: all of them ({@code step} -1), one step, or a launch.
   *
   * @param plan the plan's {@link #registerPlan} key
   * @param step the step's number, or -1 for the whole plan
   * @param launch whether it was a launch of the plan's captured graph
   * @param stream the stream
   * @param compareNow whether the plan has the order check: the window is compared right after this unit
   */
  public void plan(PlanKey plan, int step, boolean launch, Stream stream, boolean compareNow) {
    int kind = launch ? CallRecord.LAUNCH : step < 0 ? CallRecord.EXECUTE : CallRecord.STEP;
    window.add(kind, plan.instance(), plan.name(), step, stream, compareNow);
  }

  /**
   * A bucket of a bucketed plan's round was enqueued on {@code stream}: a unit of its own, so that ranks that
   * cut or order their buckets differently are found.
   *
   * @param plan the plan's {@link #registerPlan} key
   * @param bucket the bucket's index in the plan's bucket order
   * @param step the step its calls belong to
   * @param stream the stream (the plan's communication stream)
   * @param compareNow whether the plan has the order check: the window is compared right after this unit
   */
  public void bucket(PlanKey plan, int bucket, int step, Stream stream, boolean compareNow) {
    window.add(CallRecord.BUCKET | (long) bucket << 32, plan.instance(), plan.name(), step, stream, compareNow);
  }

  /**
   * A bucketed plan was closed while its ready()/finish() round was open, before bucket {@code nextBucket} was
   * enqueued: a unit, so that peers which enqueued that bucket find this rank's unit differing there, and their
   * messages name the open round. Closing a plan is not a collective, so this enqueues nothing: a comparison due
   * at this unit is made at this rank's next unit instead, over the window up to this one.
   *
   * @param plan the plan's {@link #registerPlan} key
   * @param nextBucket the first bucket of the round this rank never enqueued
   * @param unmarked the handles (below 63) not marked ready in the round as bits; bit 63: a higher one too
   */
  public void roundClosed(PlanKey plan, int nextBucket, long unmarked) {
    window.addWithoutCall(CallRecord.ROUND_CLOSED | (long) nextBucket << 32, plan.instance(), plan.name(), unmarked);
  }

  /**
   * Compares, with one last window check on every rank, the calls no check has compared yet, and waits for
   * it: for a backend whose ranks live in separate processes (nobody compares them on the host), where a
   * rank closes its communicator normally. A collective: every rank of the communicator calls it, after its
   * last call there. Does nothing where the calls are not recorded. Its finding, a {@link
   * DisagreementException} naming the first differing call, is thrown by the synchronize.
   *
   * @param stream the communicator's stream, synchronized here
   */
  public void compareAtClose(Stream stream) {
    if (!recordsCalls || found) {
      return; // order-checked plans alone are recorded (each unit compared at once), or a check already failed
    }
    window.compare(stream);
    stream.synchronize();
  }

  /**
   * A send or receive was enqueued on {@code stream}.
   *
   * @param send true for a send, false for a receive
   * @param peer the other rank
   * @param type the data type
   * @param count the count
   * @param stream the stream
   */
  public void pointToPoint(boolean send, int peer, DataType type, long count, Stream stream) {
    pairs.add(send, peer, type, count, stream);
  }

  /**
   * Compares, on the host, what no check has compared yet, across the ranks of one group that all live in
   * this process (an in-process cluster, once every rank's task has returned): the calls since each rank's
   * last comparison, and the messages since each pair's last. A program whose last calls disagree would
   * otherwise end without a word. Enqueues nothing; call it only while no rank uses its communicator.
   *
   * @param size the number of ranks of the group
   * @param communicator rank r's communicator of the group
   * @return the first difference, as rank 0 sees it (calls) or as the sender does (messages), or null when
   *     they agree, the check is off, or a communicator is missing or closed (nothing to compare)
   */
  public static DisagreementException compareUnchecked(int size, IntFunction<? extends Communicator> communicator) {
    Agreement[] ranks = new Agreement[size];
    for (int r = 0; r < size; r++) {
      Communicator comm = communicator.apply(r);
      ranks[r] = comm == null || comm.isClosed() ? null : of(comm);
      if (ranks[r] == null || !ranks[r].recordsCalls || ranks[r].found) {
        return null; // the check is off (every rank of a group has the same options), a task closed its own, or
                     // a check already found the ranks disagreeing
      }
    }
    return compareUnchecked(ranks);
  }

  /** {@link #compareUnchecked(int, IntFunction)} of the checks themselves: rank r's at index r. */
  static DisagreementException compareUnchecked(Agreement[] ranks) {
    return HostComparison.unchecked(ranks);
  }

  /**
   * Which ranks this communicator waits for, from the waits its window checks carried ({@link LatenessWindows};
   * docs/reliability.md, "Lateness online"): every rank's figures, slowest first; the same on every rank; empty
   * before a synchronize has read a window check in which every rank timed a collective, and where the calls are
   * not recorded (the check is off).
   *
   * @return every rank's lateness, slowest first, or an empty list
   */
  public List<Lateness> lateness() {
    return lateness.snapshot();
  }

  LatenessWindows latenessWindows() {
    return lateness;
  }

  int rank() {
    return rank;
  }

  int ranks() {
    return ranks;
  }

  String group() {
    return group;
  }

  PlanNames plans() {
    return plans;
  }

  Exchange exchange() {
    return exchange;
  }

  CheckBuffers buffers() {
    return buffers;
  }

  CallWindow window() {
    return window;
  }

  PairDigests pairs() {
    return pairs;
  }

  /** A comparison found the ranks disagreeing: what it throws tells them; nothing compares them again. */
  void found() {
    found = true;
  }

  /** {@return whether a comparison found the ranks disagreeing ({@link #found()})} */
  boolean hasFound() {
    return found;
  }

  void release(CheckBuffers.Pooled check) {
    buffers.release(check);
  }
}
