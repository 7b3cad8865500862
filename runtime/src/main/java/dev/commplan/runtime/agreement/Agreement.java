package dev.commplan.runtime.agreement;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.AgreementChecked;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.U64Buffer;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.Arrays;
import java.util.List;
import java.util.function.IntFunction;

/**
 * The agreement check of one communicator (docs/reliability.md, "Agreement check"): whether its ranks
 * make the same calls. On by default, on every backend, through the backend's own collectives. This
 * package is the one place where ranks' data is compared: besides the calls, a plan's fingerprint at build
 * ({@link PlanFingerprint}) and a mesh at build ({@link MeshCheck}), through the same {@link Exchange}, and
 * every finding is a {@link DisagreementException}.
 *
 * <p><b>Collectives and plans.</b> Each direct collective and each plan execute, step or launch is a
 * <i>unit</i>: this rank writes a {@link CallRecord} of it into a window (four stores: the digest is made
 * per check). After units 1, 3, 7, ..., 1023 and then every {@value #MAX_INTERVAL}, the window is compared:
 * one group of two all-gathers, of a 4-long header (the units it covers and a digest of its records) and of
 * the records, enqueued after the unit on the same stream. Every rank reaches that check after the same
 * units, so the checks pair up exactly when the ranks agree, and where they do not, the check compares what they
 * did. The comparison runs on the host after the synchronize that covers the check; it reads only the
 * headers unless they differ, and then names the first differing call on each side. Every rank reads
 * the same gathered headers, so every rank fails, with the same finding. A plan built with the order check
 * ({@code PlanBuilder.orderCheck}) has the window compared right after each of its units as well (a window
 * of 1 where its executes are concerned); every rank does so after the same units, since the setting is
 * part of the plan's fingerprint. A plan is named by its name and instance ({@link PlanNames}).
 *
 * <p><b>The last calls.</b> What no check compared is compared on the host when every rank of an
 * in-process cluster returns ({@link #compareUnchecked}), and with one last window check where a rank of
 * a backend with one rank per process closes its communicator normally ({@link #compareAtClose}).
 *
 * <p><b>Sends and receives</b> are not units (a rank takes part only in its own). Per peer, the sender
 * folds each message's data type and count into a digest; after its messages 1, 3, 7, ... to that peer
 * it sends the peer its count and digest, and the receiver receives them after its receive of the same
 * number and compares them with its own. The receiver fails; the sender learns it through the family's
 * failure, like every other failure of one rank.
 *
 * <p>Used by the thread that holds the communicator's gate; the comparisons run on the synchronizing
 * thread, so the pool of check buffers is locked ({@link CheckBuffers}).
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
  }

  private final Exchange exchange;
  private final int rank;
  private final int ranks;
  private final String group;
  /** Whether the communicator's calls are recorded (its check is on); off, only order-checked plans are. */
  private final boolean recordsCalls;
  private final PlanNames plans = new PlanNames();
  private final CheckBuffers buffers;

  /**
   * Set once a comparison found a difference here: the ranks were told, and their records no longer line up,
   * so nothing later compares them again (the host's comparison at the end, the last check at close).
   */
  private volatile boolean found;

  private final long[] window = new long[MAX_INTERVAL * CallRecord.LONGS];
  private int windowLength;
  /** A comparison was due at a unit that enqueues nothing ({@link #roundClosed}): the next unit makes it first. */
  private boolean comparisonOwed;
  private long units;
  private long nextCheck = 1;

  private final long[] sent;
  private final long[] sentDigest;
  private final long[] received;
  private final long[] receivedDigest;
  private final long[] lastSent;
  private final long[] lastReceived;
  private final long[] nextSendCheck;
  private final long[] nextReceiveCheck;

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
  public Agreement(Exchange exchange, int rank, int ranks, String group, boolean recordsCalls) {
    this.exchange = exchange;
    this.rank = rank;
    this.ranks = ranks;
    this.group = group;
    this.recordsCalls = recordsCalls;
    this.buffers = new CheckBuffers(exchange, rank, ranks);
    sent = new long[ranks];
    sentDigest = new long[ranks];
    received = new long[ranks];
    receivedDigest = new long[ranks];
    lastSent = new long[ranks * CallRecord.LONGS];
    lastReceived = new long[ranks * CallRecord.LONGS];
    nextSendCheck = new long[ranks];
    nextReceiveCheck = new long[ranks];
    Arrays.fill(nextSendCheck, 1);
    Arrays.fill(nextReceiveCheck, 1);
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
    unit(CallRecord.direct(CallRecord.DIRECT, collective, type, op, root), count, 0, 0, stream, false);
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
    unit(kind, plan.instance(), plan.name(), step, stream, compareNow);
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
    unit(CallRecord.BUCKET | (long) bucket << 32, plan.instance(), plan.name(), step, stream, compareNow);
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
    if (windowLength == MAX_INTERVAL) {
      return; // only where a comparison is owed already and its window is full: its record would not fit
    }
    record(CallRecord.ROUND_CLOSED | (long) nextBucket << 32, plan.instance(), plan.name(), unmarked);
    if (++units == nextCheck) {
      nextCheck = next(units);
      comparisonOwed = true;
    }
  }

  /** Four stores and two counters: the digest is made when the window is compared ({@link WindowCheck#arm}). */
  private void unit(long word0, long word1, long plan, long step, Stream stream, boolean compareNow) {
    if (comparisonOwed) { // due at a unit that could enqueue nothing (roundClosed): the window up to that unit
      compareWindow(stream, false);
    }
    record(word0, word1, plan, step);
    if (++units == nextCheck) {
      nextCheck = next(units);
      compareWindow(stream, false);
    } else if (compareNow) {
      compareWindow(stream, false);
    }
  }

  private void record(long word0, long word1, long plan, long step) {
    int at = windowLength * CallRecord.LONGS;
    window[at] = word0;
    window[at + 1] = word1;
    window[at + 2] = plan;
    window[at + 3] = step;
    windowLength++;
  }

  /** The unit (or message) after which the next check runs: 1, 3, 7, ..., 1023, then every {@value #MAX_INTERVAL}. */
  static long next(long checkedAt) {
    return checkedAt < MAX_INTERVAL - 1 ? 2 * checkedAt + 1 : checkedAt + MAX_INTERVAL;
  }

  /**
   * Enqueues the comparison of the window on {@code stream}, to be read after the synchronize that covers
   * it; skipped alike on every rank for a stream being captured (it would run at every launch) or one with
   * no synchronize hook (nothing could read it).
   */
  private void compareWindow(Stream stream, boolean atClose) {
    StreamProgress progress = Guards.progressOf(stream);
    if (progress != null && !exchange.isCapturing(stream)) {
      WindowCheck check = buffers.window(stream);
      check.arm(units, window, windowLength, this, atClose);
      exchange.allGather(check.stagedHeader(), check.headers(), check.stagedRecords(), check.records(), stream);
      progress.afterSynchronize(check, progress.issue());
    }
    windowLength = 0;
    comparisonOwed = false;
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
    compareWindow(stream, true);
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
    StreamProgress progress = Guards.progressOf(stream);
    if (progress == null) {
      return;
    }
    long word0 = CallRecord.direct(send ? CallRecord.SEND : CallRecord.RECV, send ? Collective.SEND : Collective.RECV,
        type, null, peer);
    long[] last = send ? lastSent : lastReceived;
    int at = peer * CallRecord.LONGS;
    last[at] = word0;
    last[at + 1] = count;
    long[] counts = send ? sent : received;
    long[] digests = send ? sentDigest : receivedDigest;
    digests[peer] = CallRecord.mix(CallRecord.mix(digests[peer], type.ordinal() + 1), count);
    long n = ++counts[peer];
    long[] due = send ? nextSendCheck : nextReceiveCheck;
    if (n == due[peer]) {
      due[peer] = next(n);
      if (exchange.isCapturing(stream)) {
        return;
      }
      PairCheck check = buffers.pair(stream);
      check.arm(send, rank, peer, n, digests[peer], word0, count, this);
      if (send) {
        exchange.send(check.message(), peer, stream);
      } else {
        exchange.recv(check.message(), peer, stream);
      }
      progress.afterSynchronize(check, progress.issue());
    }
  }

  /**
   * Compares, on the host, what no check has compared yet, across the ranks of one group that all live in
   * this process (an in-process cluster, once every rank's task has returned): the calls since each rank's
   * last comparison, and the messages since each pair's last. A program whose last calls disagree would
   * otherwise end without a word. Enqueues nothing; call it only while no rank uses its communicator.
   *
   * @param size the number of ranks of the group
   * @param communicator rank r's communicator of the group
   * @return the first difference against rank 0 (calls) or between a sender and its receiver, or null when
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
    for (int r = 1; r < ranks.length; r++) {
      DisagreementException e = ranks[0].uncheckedCallsAgainst(ranks[r]);
      if (e != null) {
        return e;
      }
    }
    for (Agreement sender : ranks) {
      for (Agreement receiver : ranks) {
        DisagreementException e = sender.uncheckedMessagesTo(receiver);
        if (e != null) {
          return e;
        }
      }
    }
    return null;
  }

  /** Rank 0's window ({@code this}) against {@code other}'s; null where they agree. */
  private DisagreementException uncheckedCallsAgainst(Agreement other) {
    long from = units - windowLength;
    long theirFrom = other.units - other.windowLength;
    int words = windowLength * CallRecord.LONGS;
    if (units == other.units && from == theirFrom
        && Arrays.equals(window, 0, words, other.window, 0, other.windowLength * CallRecord.LONGS)) {
      return null;
    }
    String where = group + ": the ranks disagree about their last calls, which no agreement check compared before"
        + " every rank's task returned (rank 0 made " + units + " collective calls and plan executes on " + group
        + ", rank " + other.rank + " " + other.units + ")";
    List<Integer> differing = List.of(other.rank);
    if (from != theirFrom) { // cannot happen when both returned normally: a check would have been left unpaired
      return new DisagreementException(where + callsFix(group), "", "", differing, List.of("number of calls"));
    }
    DisagreementException e = WindowCheck.firstDifference(where, callsFix(group), from, "rank 0", window, 0,
        windowLength, "rank " + other.rank, other.window, 0, other.windowLength, plans, differing);
    return e != null ? e : new DisagreementException(where + callsFix(group), "", "", differing,
        List.of("number of calls"));
  }

  /** This rank's sends to {@code receiver} against its receives from this rank, in all; null where they agree. */
  private DisagreementException uncheckedMessagesTo(Agreement receiver) {
    int to = receiver.rank;
    long n = sent[to];
    long m = receiver.received[rank];
    if (n == m && sentDigest[to] == receiver.receivedDigest[rank]) {
      return null;
    }
    String mine = n == 0 ? "none" : CallRecord.text(lastSent, to * CallRecord.LONGS, plans);
    String theirs = m == 0 ? "none" : CallRecord.text(receiver.lastReceived, rank * CallRecord.LONGS, plans);
    String field = n != m ? "number of messages" : "data type or count";
    return new DisagreementException(group + ": rank " + rank + "'s sends to rank " + to + " and rank " + to
        + "'s receives from it disagree, and no agreement check compared them before every rank's task returned:"
        + " rank " + rank + " sent " + n + " messages (its last: " + mine + "), rank " + to + " received " + m
        + " (its last: " + theirs + ") (differing: " + field + "). Every send must meet a receive of the same data"
        + " type and count, in the same order (docs/reliability.md, \"Agreement check\";"
        + " CommOptions.withAgreementCheck(false) turns the check off)", mine, theirs, List.of(to),
        List.of(field));
  }

  /** The end of every message about calls that differ: what must agree, and where to read more. */
  static String callsFix(String group) {
    return ". Every rank of " + group + " must make the same collective calls and plan executes, with the same"
        + " collective, data type, count, op and root, and the same plan (#2: the second plan of that name built on "
        + group + "), in the same order (docs/reliability.md, \"Agreement check\";"
        + " CommOptions.withAgreementCheck(false) turns the check off)";
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

  /** A comparison found the ranks disagreeing: what it throws tells them; nothing compares them again. */
  void found() {
    found = true;
  }

  void release(CheckBuffers.Pooled check) {
    buffers.release(check);
  }
}
