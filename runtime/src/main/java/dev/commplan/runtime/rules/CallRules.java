package dev.commplan.runtime.rules;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.CountRule;
import dev.commplan.model.ElementType;
import dev.commplan.model.Fp8AverageRule;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.rules.RuleSubject.CallSubject;
import dev.commplan.runtime.rules.RuleSubject.Direct;
import dev.commplan.runtime.rules.RuleSubject.Side;
import java.math.BigInteger;
import java.util.Objects;

/**
 * The runtime's rules, each once, for all of their users: a plan's build ({@code PlanBuilder.build()}: a
 * plan's declarations, with the bound dims and the real communicator, through the plan package's {@code
 * PlanRules}), the collectives called directly on a communicator ({@link #checkCollective} and {@link
 * #checkPointToPoint}, which {@code spi.AbstractCommunicator} calls before the backend sees the call) and
 * a schedule before a backend compiles it ({@code spi.AbstractCommunicator.compile}). Every message starts with
 * the rule's {@link RuleId#tag()}, the id the annotation processor prints for the same rule at compile
 * time, then names the plan, annotation and field (or the call and rank), the sizes with their shapes,
 * the ranks and the fix.
 *
 * <p>The rules read {@link Collective}'s {@link Collective#counts() count rule}, {@link
 * Collective#inPlace() in-place meaning} and {@link Collective#operand() operand}, never a list of
 * collectives, so a collective added to the model is checked here without new code.
 *
 * <table>
 *   <caption>Rules</caption>
 *   <tr><th>id</th><th>rule</th><th>plan</th><th>direct call</th></tr>
 *   <tr><td>TypeMismatch</td><td>both sides have one data type</td><td>PlanBuildException</td>
 *       <td>BufferBindingException</td></tr>
 *   <tr><td>GatherSize, ScatterSize, AllToAllSize, CountMismatch</td><td>the collective's {@link
 *       CountRule}</td><td>PlanBuildException</td><td>BufferBindingException</td></tr>
 *   <tr><td>MissingInto</td><td>AllToAll is out of place</td><td>PlanBuildException</td>
 *       <td>(Overlap)</td></tr>
 *   <tr><td>BadPeer</td><td>a direct send's or receive's peer is a rank</td><td>(the processor: rule 17)</td>
 *       <td>IllegalArgumentException</td></tr>
 *   <tr><td>UnmatchedPeer</td><td>each step's sends and receives pair up one to one</td>
 *       <td>PlanBuildException</td><td>(NCCL's, the user's)</td></tr>
 *   <tr><td>BadRoot</td><td>a root is in [0, ranks)</td><td>PlanBuildException</td>
 *       <td>IllegalArgumentException</td></tr>
 *   <tr><td>NotDivisible</td><td>an in-place buffer holding one slice per rank divides by the ranks</td>
 *       <td>PlanBuildException</td><td>(implied by the count rule)</td></tr>
 *   <tr><td>Overlap</td><td>the sides are disjoint, or in place</td><td>PlanBuildException</td>
 *       <td>BufferBindingException</td></tr>
 *   <tr><td>StepRace</td><td>no call of a step writes what another of that step reads or writes (a
 *       root-only write counts)</td>
 *       <td>PlanBuildException</td><td>(one call at a time)</td></tr>
 *   <tr><td>BadBuffer</td><td>buffers are open, of this communicator, of the field's type and count</td>
 *       <td>BufferBindingException</td><td>BufferBindingException</td></tr>
 *   <tr><td>Fp8Average</td><td>no AVG on fp8 ({@link #fp8Average})</td><td>PlanBuildException</td>
 *       <td>IllegalArgumentException</td></tr>
 *   <tr><td>BadBucket</td><td>a plan's bucketBytes is 0 (no buckets) or more (the processor: rule 23)</td>
 *       <td>PlanBuildException</td><td>(no buckets)</td></tr>
 * </table>
 *
 * <p>Besides: {@link NullPointerException} for a null argument, {@link IllegalStateException} for a
 * closed communicator, {@link IllegalArgumentException} for another communicator's stream. A check that
 * passes allocates nothing; {@code Plan.execute} checks nothing of this (it was checked at build).
 *
 * <p>The plan-only rules of the table (MissingInto, NotDivisible, StepRace, UnmatchedPeer, BadBucket) are the
 * plan package's ({@code PlanRules}, {@code PeerRules}, {@code Buckets}), written with the primitives here.
 * Not exported: the rules are the runtime's, applied for every backend before it sees a call.
 */
public final class CallRules {
  private CallRules() {}

  // ---- Direct calls ---------------------------------------------------------------------------------

  /**
   * Checks a collective called directly on {@code comm}, as NCCL would take it: in place is NCCL's
   * arrangement of the two buffers ({@link #isInPlace}).
   *
   * @param collective the collective called; not a send or receive
   * @param comm the communicator it was called on
   * @param send the send buffer
   * @param recv the receive buffer
   * @param op the reduction, for collectives with one ({@link Collective#hasOp()}); else ignored
   * @param root the root rank, for collectives with one ({@link Collective#hasRoot()}); else ignored
   * @param stream the stream it was called with; must be {@code comm}'s
   * @return NCCL's count ({@link CountRule#ncclCount})
   */
  public static long checkCollective(
      Collective collective, Communicator comm, Buffer send, Buffer recv, ReduceOp op, int root, Stream stream) {
    Objects.requireNonNull(collective, "collective");
    if (collective.pointToPoint()) {
      throw new IllegalArgumentException(collective.label() + " is point-to-point: check it with checkPointToPoint");
    }
    if (collective.hasOp()) {
      Objects.requireNonNull(op, "op");
    }
    Objects.requireNonNull(comm, "comm");
    Objects.requireNonNull(send, "send");
    Objects.requireNonNull(recv, "recv");
    openWithOwnStream(collective, comm, stream);
    usable(Direct.CALL, collective, comm, Side.SEND, send);
    usable(Direct.CALL, collective, comm, Side.RECV, recv);
    sameType(Direct.CALL, collective, comm, send.dataType(), send.length(), recv.dataType(), recv.length());
    fp8Average(Direct.CALL, collective, comm, send.dataType(), op);
    if (collective.hasRoot()) {
      rootInRange(Direct.CALL, collective, comm, root, comm.size());
    }
    counts(Direct.CALL, collective, comm, send.length(), recv.length(), comm.size());
    disjoint(Direct.CALL, collective, comm, send, recv);
    return collective.counts().ncclCount(send.length(), recv.length(), comm.size());
  }

  /**
   * Checks a send or receive called directly on {@code comm}: the buffer open and of this communicator,
   * the stream this communicator's, the peer a rank of it ({@link RuleId#BAD_PEER}, an {@link
   * IllegalArgumentException}).
   *
   * @param collective {@link Collective#SEND} or {@link Collective#RECV}
   * @param comm the communicator it was called on
   * @param buffer the one buffer sent or received into
   * @param peer the other rank
   * @param stream the stream it was called with; must be {@code comm}'s
   * @return the element count to send or receive: the whole buffer
   */
  public static long checkPointToPoint(Collective collective, Communicator comm, Buffer buffer, int peer,
      Stream stream) {
    Objects.requireNonNull(collective, "collective");
    if (!collective.pointToPoint()) {
      throw new IllegalArgumentException(collective.label() + " is not point-to-point: check it with checkCollective");
    }
    Objects.requireNonNull(comm, "comm");
    Objects.requireNonNull(buffer, "buffer");
    openWithOwnStream(collective, comm, stream);
    usable(Direct.CALL, collective, comm, collective == Collective.SEND ? Side.SEND : Side.RECV, buffer);
    if (peer < 0 || peer >= comm.size()) {
      throw new IllegalArgumentException(RuleId.BAD_PEER.tag() + " " + Direct.CALL.where(collective, comm) + ": peer "
          + peer + " is not a rank of this " + comm.size() + "-rank communicator; it must be in [0, " + comm.size()
          + ")" + (collective == Collective.SEND ? ". Fix: send to a rank that exists (a rank with no one to send to"
              + " makes no call)" : ". Fix: receive from a rank that exists (a rank with no one to receive from makes"
              + " no call)"));
    }
    return buffer.length();
  }

  /**
   * Whether {@code send} and {@code recv} are NCCL's in-place arrangement for {@code collective} on
   * {@code rank} ({@link Collective#inPlace()}): the same region, send the rank-th slice of recv, or recv
   * the rank-th slice of send.
   *
   * @param collective the collective; its in-place meaning decides
   * @param send the send buffer
   * @param recv the receive buffer
   * @param rank this rank, which picks the slice
   * @return true for NCCL's in-place arrangement, false for disjoint or otherwise overlapping buffers
   */
  public static boolean isInPlace(Collective collective, Buffer send, Buffer recv, int rank) {
    if (send.memory() != recv.memory()) {
      return false;
    }
    return switch (collective.inPlace()) {
      case SAME_BUFFER, ONE_BUFFER -> send.byteOffset() == recv.byteOffset() && send.length() == recv.length();
      case SEND_IS_RANK_SLICE_OF_RECV -> send.byteOffset() == recv.byteOffset() + rank * send.byteSize();
      case RECV_IS_RANK_SLICE_OF_SEND -> recv.byteOffset() == send.byteOffset() + rank * recv.byteSize();
      case NOT_ALLOWED -> false;
    };
  }

  /** NCCL's in-place arrangement in words, with the byte it starts at on {@code rank}. */
  public static String inPlaceArrangement(Collective collective, Buffer send, Buffer recv, int rank) {
    return switch (collective.inPlace()) {
      case SAME_BUFFER, ONE_BUFFER -> "send and recv the same buffer";
      case NOT_ALLOWED -> "none: " + collective.label() + " has no in-place form";
      case SEND_IS_RANK_SLICE_OF_RECV -> "send the rank-th slice of recv (byte "
          + (recv.byteOffset() + rank * send.byteSize()) + " of the block on rank " + rank + ")";
      case RECV_IS_RANK_SLICE_OF_SEND -> "recv the rank-th slice of send (byte "
          + (send.byteOffset() + rank * recv.byteSize()) + " of the block on rank " + rank + ")";
    };
  }

  /** A direct call's communicator is open, and {@code stream} is that communicator's. */
  private static void openWithOwnStream(Collective collective, Communicator comm, Stream stream) {
    Objects.requireNonNull(stream, "stream");
    checkOpen(comm);
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException(
          Direct.CALL.where(collective, comm) + ": the stream belongs to rank " + stream.communicator().rank()
              + "'s communicator; use this communicator's stream()");
    }
  }

  /**
   * Whether {@code comm}'s collectives may use memory {@code owner} allocated ({@link
   * DeviceMemory.Allocator#sharesMemoryWith}).
   */
  public static boolean sharesMemory(Communicator comm, Communicator owner) {
    return owner == comm || comm instanceof DeviceMemory.Allocator allocator && allocator.sharesMemoryWith(owner);
  }

  /**
   * Throws {@link IllegalArgumentException}, naming both, unless {@code waiting} may wait for an event of
   * {@code origin} ({@code Stream.waitFor}, a bucketed plan's producers and consumer): a stream of the same
   * backend whose communicator's memory {@code waiting}'s communicator may use, that is, of this rank on the
   * same device (its own communicator, or one of its family: a mesh's world and axes).
   *
   * @param waiting the stream that is to wait
   * @param origin the stream the event is (or will be) recorded on
   */
  public static void checkSameDevice(Stream waiting, Stream origin) {
    Communicator w = waiting.communicator();
    Communicator o = origin.communicator();
    if (!w.backendName().equals(o.backendName())) {
      throw new IllegalArgumentException(waiting + " (" + w.backendName() + " backend) cannot wait for an event of "
          + origin + " (" + o.backendName() + " backend): events order the streams of one backend only");
    }
    if (!sharesMemory(w, o)) {
      throw new IllegalArgumentException(waiting + " (" + w + ") cannot wait for an event of " + origin + " (" + o
          + "): that is another rank's or another device's; a stream waits only for events of its own rank on its own"
          + " device (its communicator's streams, or those of the communicators split from it or it from)");
    }
  }

  /** Throws {@link IllegalStateException} if {@code comm} is closed. */
  public static void checkOpen(Communicator comm) {
    if (comm.isClosed()) {
      throw new IllegalStateException(comm.backendName() + " communicator of rank " + comm.rank() + " is closed");
    }
  }

  // ---- The rules, each once -------------------------------------------------------------------------

  /** {@link RuleId#BAD_BUFFER}: open, and of this communicator. */
  public static void usable(RuleSubject s, Collective c, Communicator comm, Side side, Buffer buffer) {
    if (buffer.isClosed()) {
      throw violation(s, RuleId.BAD_BUFFER, s.where(c, comm) + ": " + s.ref(side) + " (" + buffer + ") is closed."
          + " Fix: use an open buffer");
    }
    Communicator other = buffer.communicator();
    if (!sharesMemory(comm, other)) {
      String whose = !other.backendName().equals(comm.backendName())
          ? "the " + other.backendName() + " backend (rank " + other.rank() + ")"
          : other.rank() == comm.rank()
              ? "another " + other.backendName() + " communicator of rank " + other.rank() + " (another cluster's)"
              : "another communicator (" + other.backendName() + " rank " + other.rank() + ")";
      throw violation(s, RuleId.BAD_BUFFER, s.where(c, comm) + ": " + s.ref(side) + " (" + buffer.length()
          + " elements) belongs to " + whose + ", not to this " + s.user() + "'s (" + comm.backendName() + " rank "
          + comm.rank() + "). Fix: allocate it on " + s.communicator());
    }
  }

  /** {@link RuleId#TYPE_MISMATCH}: both sides have one data type. */
  public static void sameType(CallSubject s, Collective c, Communicator comm, DataType sendType, long sendCount,
      DataType recvType, long recvCount) {
    if (sendType != recvType) {
      throw violation(s, RuleId.TYPE_MISMATCH, s.where(c, comm) + ": " + s.ref(Side.SEND) + " is " + sendType + " ("
          + sendCount + " elements) but " + s.ref(Side.RECV) + " is " + recvType + " (" + recvCount + " elements);"
          + " both sides of a collective must have the same data type. Fix: make " + s.ref(Side.RECV) + " "
          + sendType + " too");
    }
  }

  /** {@link RuleId#BAD_ROOT}: a root is a rank of the communicator. */
  public static void rootInRange(CallSubject s, Collective c, Communicator comm, int root, int ranks) {
    if (root < 0 || root >= ranks) {
      throw violation(s, RuleId.BAD_ROOT, s.where(c, comm) + ": root " + root + " is not a rank of this " + ranks
          + "-rank communicator; it must be in [0, " + ranks + ")");
    }
  }

  /**
   * {@link RuleId#FP8_AVERAGE}: no AVG on the fp8 types, on any backend ({@link Fp8AverageRule}, which the
   * processor checks too, says why). The local and MPI backends must not compute what the NCCL backend
   * refuses, so every backend refuses it here, with the processor's id: a plan's declaration with a {@link
   * PlanBuildException}, a direct call with an {@link IllegalArgumentException}.
   */
  public static void fp8Average(CallSubject s, Collective c, Communicator comm, DataType type, ReduceOp op) {
    if (Fp8AverageRule.refuses(c, op == null ? null : op.name(), ElementType.valueOf(type.name()))) {
      throw violation(s, RuleId.FP8_AVERAGE, s.where(c, comm) + ": AVG on " + type + " is not offered: NCCL"
          + " multiplies the sum by 1/ranks rounded to fp8 (for 3 ranks 0.34375 or 0.3125, not 1/3), and fails on"
          + " one rank. Fix: reduce with SUM and scale the result, or use a wider type (F16, BF16 or F32)");
    }
  }

  /**
   * The collective's {@link CountRule}, reported under {@link CountRule#violation()}; the fix gives the
   * side the rule constrains the count it needs.
   */
  public static void counts(CallSubject s, Collective c, Communicator comm, long send, long recv, int ranks) {
    CountRule rule = c.counts();
    if (rule.holds(send, recv, ranks)) {
      return;
    }
    String sendName = s.name(Side.SEND);
    String recvName = s.name(Side.RECV);
    String side; // the side whose count the rule gives
    String needed; // that count
    String relation;
    switch (rule) {
      case SAME -> {
        side = recvName;
        needed = Long.toString(send);
        relation = "must equal count(" + sendName + ")";
      }
      case RECV_IS_RANKS_TIMES_SEND -> {
        side = recvName;
        needed = times(ranks, send);
        relation = "must be " + s.ranksName() + " × count(" + sendName + ") = " + ranks + " × " + send
            + " = " + needed;
      }
      case SEND_IS_RANKS_TIMES_RECV -> {
        side = sendName;
        needed = times(ranks, recv);
        relation = "must be " + s.ranksName() + " × count(" + recvName + ") = " + ranks + " × " + recv
            + " = " + needed;
      }
      case SAME_DIVISIBLE -> {
        boolean divisible = send % ranks == 0;
        side = divisible ? recvName : sendName;
        needed = divisible ? Long.toString(send) : "a multiple of " + s.ranks(ranks) + " (e.g. a shape with \""
            + s.ranksName() + "\" in it), and count(" + recvName + ") the same";
        relation = divisible ? "must equal count(" + sendName + ")"
            : "must hold one slice per rank, so be divisible by " + s.ranks(ranks);
      }
      default -> throw new AssertionError(rule);
    }
    throw violation(s, rule.violation(), s.where(c, comm) + ": count(" + side + ") " + relation + "; "
        + s.size(Side.SEND, send) + ", " + s.size(Side.RECV, recv) + ", " + s.ranks(ranks) + ". Fix: make count("
        + side + ") = " + needed);
  }

  /** {@link RuleId#OVERLAP}: the two sides share no memory, unless they are in place. */
  public static void disjoint(CallSubject s, Collective c, Communicator comm, Buffer send, Buffer recv) {
    if (overlaps(send, recv) && !(s.inPlaceByArrangement() && isInPlace(c, send, recv, comm.rank()))) {
      throw violation(s, RuleId.OVERLAP, s.where(c, comm) + ": " + s.sides() + " overlap (bytes "
          + send.byteOffset() + ".."
          + (send.byteOffset() + send.byteSize()) + " and " + recv.byteOffset() + ".."
          + (recv.byteOffset() + recv.byteSize()) + " of one block); out of place, they must be disjoint. Fix: "
          + s.overlapFix(c, comm, send, recv));
    }
  }

  public static boolean overlaps(Buffer x, Buffer y) {
    return x.memory() == y.memory()
        && x.byteOffset() < y.byteOffset() + y.byteSize() && y.byteOffset() < x.byteOffset() + x.byteSize();
  }

  /** The exception {@code subject} reports {@code rule} with: the rule's tag, then {@code message}. */
  public static RuntimeException violation(RuleSubject subject, RuleId rule, String message) {
    return subject.reject(rule, rule.tag() + " " + message);
  }

  /** {@code a × b}, exactly, for messages. */
  private static String times(long a, long b) {
    return BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).toString();
  }
}
