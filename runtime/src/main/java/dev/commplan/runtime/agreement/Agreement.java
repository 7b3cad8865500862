package dev.commplan.runtime.agreement;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
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
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;
import java.util.function.IntFunction;

/**
 * The agreement check of one communicator (docs/reliability.md, "Agreement check"): whether its ranks
 * make the same calls. On by default, on every backend, through the backend's own collectives.
 *
 * <p><b>Collectives and plans.</b> Each direct collective and each plan execute, step or launch is a
 * <i>unit</i>: this rank writes a {@link CallRecord} of it into a window. After units 1, 3, 7, ..., 255
 * and then every {@value #MAX_INTERVAL}, the window is compared: one group of two all-gathers, of a
 * 4-long header (the units it covers and a digest of its records) and of the records, enqueued after the
 * unit on the same stream. Every rank reaches that check after the same units, so
 * the checks pair up exactly when the ranks agree, and where they do not, the check compares what they
 * did. The comparison runs on the host after the synchronize that covers the check; it reads only the
 * headers unless they differ, and then names the first differing call on each side. Every rank reads
 * the same gathered headers, so every rank fails, with the same finding.
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
  public static final int MAX_INTERVAL = 256;

  /** Marks a header or message as the check's: a check that met a user's call reads something else there. */
  static final long MAGIC = 0x436f6d6d506c616eL;

  private static volatile Function<Object, Agreement> accessor;

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
  private final Map<Long, String> plans = new ConcurrentHashMap<>();
  private final CheckBuffers buffers;

  private final long[] window = new long[MAX_INTERVAL * CallRecord.LONGS];
  private int windowLength;
  private long windowDigest;
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
   */
  public Agreement(Exchange exchange, int rank, int ranks, String group) {
    this.exchange = exchange;
    this.rank = rank;
    this.ranks = ranks;
    this.group = group;
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
   * Called once, by the SPI's communicator base class, so that plans can reach their communicator's check.
   *
   * @param of returns a communicator's check, or null where it has none
   */
  public static void register(Function<Object, Agreement> of) {
    accessor = of;
  }

  /**
   * {@return the check of {@code communicator}, or null (another kind of communicator, or the check is off)}
   *
   * @param communicator a communicator
   */
  public static Agreement of(Object communicator) {
    Function<Object, Agreement> a = accessor;
    return a == null ? null : a.apply(communicator);
  }

  /**
   * Records that a plan of this name was built here, so that messages can name it.
   *
   * @param planName the plan's name
   * @return the hash that names the plan in records
   */
  public long registerPlan(String planName) {
    long id = CallRecord.planId(planName);
    plans.put(id, planName);
    return id;
  }

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
    unit(CallRecord.direct(CallRecord.DIRECT, collective, type, op, root), count, 0, 0, stream);
  }

  /**
   * A plan's steps were enqueued on {@code stream}: all of them ({@code step} -1), one step, or a launch.
   *
   * @param planId the plan's {@link #registerPlan} hash
   * @param step the step's number, or -1 for the whole plan
   * @param launch whether it was a launch of the plan's captured graph
   * @param stream the stream
   */
  public void plan(long planId, int step, boolean launch, Stream stream) {
    int kind = launch ? CallRecord.LAUNCH : step < 0 ? CallRecord.EXECUTE : CallRecord.STEP;
    unit(kind, 0, planId, step, stream);
  }

  /**
   * A bucket of a bucketed plan's round was enqueued on {@code stream}: a unit of its own, so that ranks that
   * cut or order their buckets differently are found.
   *
   * @param planId the plan's {@link #registerPlan} hash
   * @param bucket the bucket's index in the plan's bucket order
   * @param step the step its calls belong to
   * @param stream the stream (the plan's communication stream)
   */
  public void bucket(long planId, int bucket, int step, Stream stream) {
    unit(CallRecord.BUCKET, bucket, planId, step, stream);
  }

  private void unit(long word0, long count, long plan, long step, Stream stream) {
    StreamProgress progress = Guards.progressOf(stream);
    if (progress == null) {
      return; // a stream with no synchronize hook: nothing could compare the check
    }
    int at = windowLength * CallRecord.LONGS;
    window[at] = word0;
    window[at + 1] = count;
    window[at + 2] = plan;
    window[at + 3] = step;
    windowDigest = CallRecord.mix(CallRecord.mix(CallRecord.mix(CallRecord.mix(windowDigest, word0), count), plan), step);
    windowLength++;
    units++;
    if (units == nextCheck) {
      nextCheck = next(units);
      compareWindow(stream, progress);
    }
  }

  /** The unit (or message) after which the next check runs: 1, 3, 7, ..., 255, then every {@value #MAX_INTERVAL}. */
  static long next(long checkedAt) {
    return checkedAt < MAX_INTERVAL - 1 ? 2 * checkedAt + 1 : checkedAt + MAX_INTERVAL;
  }

  private void compareWindow(Stream stream, StreamProgress progress) {
    if (!exchange.isCapturing(stream)) { // captured, it would run at every launch: skipped alike on every rank
      WindowCheck check = buffers.window(stream);
      check.arm(units, windowDigest, window, windowLength, this);
      exchange.allGather(check.stagedHeader(), check.headers(), check.stagedRecords(), check.records(), stream);
      progress.afterSynchronize(check, progress.issue());
    }
    windowLength = 0;
    windowDigest = 0;
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
      if (ranks[r] == null) {
        return null; // the check is off (every rank of a group has the same options), or a task closed its own
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
        + " collective, data type, count, op and root, in the same order (docs/reliability.md, \"Agreement check\";"
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

  Map<Long, String> plans() {
    return plans;
  }

  void release(CheckBuffers.Pooled check) {
    buffers.release(check);
  }
}
