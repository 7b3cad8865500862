package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.CountRule;
import dev.commplan.model.InPlace;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.RuleSubject.CallSubject;
import dev.commplan.runtime.plan.RuleSubject.Declared;
import dev.commplan.runtime.plan.RuleSubject.Direct;
import dev.commplan.runtime.plan.RuleSubject.Side;
import java.math.BigInteger;
import java.util.List;
import java.util.Objects;

/**
 * The runtime's rules, each once, for both of their users: {@link PlanBuilder#build()} (a plan's
 * declarations, with the bound dims and the real communicator) and the collectives called directly on a
 * communicator ({@link #checkCollective}, which every backend calls first). Every message starts with
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
 *   <tr><td>Fp8Average</td><td>no AVG on fp8 ({@link Fp8Average})</td><td>PlanBuildException</td>
 *       <td>IllegalArgumentException</td></tr>
 * </table>
 *
 * <p>Besides: {@link NullPointerException} for a null argument, {@link IllegalStateException} for a
 * closed communicator, {@link IllegalArgumentException} for another communicator's stream. A check that
 * passes allocates nothing; {@link Plan#execute} checks nothing of this (it was checked at build).
 */
public final class PlanRules {
  private PlanRules() {}

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
    Objects.requireNonNull(stream, "stream");
    checkOpen(comm);
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException(
          Direct.CALL.where(collective, comm) + ": the stream belongs to rank " + stream.communicator().rank()
              + "'s communicator; use this communicator's stream()");
    }
    usable(Direct.CALL, collective, comm, Side.SEND, send);
    usable(Direct.CALL, collective, comm, Side.RECV, recv);
    sameType(Direct.CALL, collective, comm, send.dataType(), send.length(), recv.dataType(), recv.length());
    Fp8Average.check(Direct.CALL, collective, comm, send.dataType(), op);
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
    Objects.requireNonNull(stream, "stream");
    checkOpen(comm);
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException(
          Direct.CALL.where(collective, comm) + ": the stream belongs to rank " + stream.communicator().rank()
              + "'s communicator; use this communicator's stream()");
    }
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
  static String inPlaceArrangement(Collective collective, Buffer send, Buffer recv, int rank) {
    return switch (collective.inPlace()) {
      case SAME_BUFFER, ONE_BUFFER -> "send and recv the same buffer";
      case NOT_ALLOWED -> "none: " + collective.label() + " has no in-place form";
      case SEND_IS_RANK_SLICE_OF_RECV -> "send the rank-th slice of recv (byte "
          + (recv.byteOffset() + rank * send.byteSize()) + " of the block on rank " + rank + ")";
      case RECV_IS_RANK_SLICE_OF_SEND -> "recv the rank-th slice of send (byte "
          + (send.byteOffset() + rank * recv.byteSize()) + " of the block on rank " + rank + ")";
    };
  }

  /**
   * Checks a schedule before a backend compiles it: built for {@code comm}'s size, every call's memory
   * open and owned by {@code comm}, every region inside its block, ops and roots present and in range.
   *
   * @param comm the communicator that is to compile it
   * @param schedule the schedule to check
   * @throws IllegalArgumentException naming the step, the call's fields and what is wrong
   */
  public static void checkSchedule(Communicator comm, Schedule schedule) {
    Objects.requireNonNull(schedule, "schedule");
    checkOpen(comm);
    if (schedule.ranks() != comm.size()) {
      throw new IllegalArgumentException(
          "schedule of plan " + schedule.planName() + " was built for " + schedule.ranks()
              + " ranks, but this communicator has " + comm.size());
    }
    for (Step step : schedule.steps()) {
      for (CollectiveCall call : step.calls()) {
        Collective c = call.collective();
        String axis = schedule.axisOf(call);
        String where = "plan " + schedule.planName() + ", step " + step.number() + ", " + c.label()
            + (axis.isEmpty() ? "" : " over " + axis) + " of " + call.fields();
        if (call.count() <= 0) {
          throw new IllegalArgumentException(where + ": count must be > 0, was " + call.count());
        }
        if (c.hasOp() != (call.op() != null)) {
          throw new IllegalArgumentException(
              where + ": op must be " + (c.hasOp() ? "set" : "null") + ", was " + call.op());
        }
        Communicator over = schedule.communicatorOf(call, comm);
        if (over != comm) {
          checkOpen(over);
          if (!sharesMemory(over, comm)) {
            throw new IllegalArgumentException(where + ": it runs over " + over + " (" + over.groupLabel() + "), which"
                + " cannot use the memory of " + comm + "; a plan's groups must be this rank's communicators of one"
                + " family (a mesh's axes) of the " + comm.backendName() + " backend");
          }
        }
        int ranks = over.size();
        if (c.hasRoot()) {
          rootInRange(Direct.CALL, c, over, call.root(), ranks);
        }
        if (c.pointToPoint() ? call.peer() < -1 || call.peer() >= ranks : call.peer() != -1) {
          throw new IllegalArgumentException(where + ": peer " + call.peer() + (c.pointToPoint() ? " is neither a rank"
              + " of this " + ranks + "-rank communicator nor -1 (no transfer)" : "; only a send or receive has one"));
        }
        checkRegion(where + ", send side", comm, call.sendMemory(), call.sendByteOffset(), call.sendBytes(ranks));
        checkRegion(where + ", receive side", comm, call.recvMemory(), call.recvByteOffset(), call.recvBytes(ranks));
      }
    }
  }

  private static void checkRegion(String where, Communicator comm, DeviceMemory memory, long offset, long bytes) {
    String tag = RuleId.BAD_BUFFER.tag() + " ";
    if (!sharesMemory(comm, memory.owner())) {
      throw new IllegalArgumentException(
          tag + where + ": the memory belongs to " + memory.owner().backendName() + " rank " + memory.owner().rank()
              + ", not to this communicator (" + comm.backendName() + " rank " + comm.rank() + ")");
    }
    if (memory.isClosed()) {
      throw new IllegalArgumentException(tag + where + ": the memory has been freed");
    }
    if (offset < 0 || offset > memory.byteSize() - bytes) {
      throw new IllegalArgumentException(
          tag + where + ": bytes [" + offset + ", " + (offset + bytes) + ") do not fit in a block of "
              + memory.byteSize());
    }
  }

  /** Whether {@code comm}'s collectives may use memory {@code owner} allocated ({@link DeviceMemory.Allocator#sharesMemoryWith}). */
  private static boolean sharesMemory(Communicator comm, Communicator owner) {
    return owner == comm || comm instanceof DeviceMemory.Allocator allocator && allocator.sharesMemoryWith(owner);
  }

  private static void checkOpen(Communicator comm) {
    if (comm.isClosed()) {
      throw new IllegalStateException(comm.backendName() + " communicator of rank " + comm.rank() + " is closed");
    }
  }

  // ---- Plans ----------------------------------------------------------------------------------------

  /**
   * Checks a buffer bound to a declared field: open, of the plan's communicator, of the field's data type
   * and count ({@link RuleId#BAD_BUFFER}, thrown as {@link dev.commplan.runtime.BufferBindingException}).
   */
  static void checkBinding(String planName, Communicator comm, Declarations.Field field) {
    Buffer bound = field.bound();
    RuleSubject subject = new RuleSubject.BoundField(planName, field);
    usable(subject, null, comm, Side.SEND, bound);
    if (bound.dataType() != field.type()) {
      throw violation(subject, RuleId.BAD_BUFFER, subject.where(null, comm) + ": the bound buffer is a "
          + bound.dataType() + " buffer of " + bound.length() + " elements (" + bound.getClass().getSimpleName() + ")");
    }
    if (bound.length() != field.count()) {
      throw violation(subject, RuleId.BAD_BUFFER,
          subject.where(null, comm) + ": the bound buffer has " + bound.length() + " elements");
    }
  }

  /** Checks one declared collective with the bound dims on {@code ranks} ranks: types, root, counts. */
  static void checkCall(String planName, Declarations declarations, Declarations.Call call, int ranks) {
    Declarations.Field send = declarations.field(call.send());
    Declarations.Field recv = declarations.field(call.recv());
    Collective c = call.collective();
    Declared subject = Declared.of(planName, declarations, call);
    sameType(subject, c, null, send.type(), send.count(), recv.type(), recv.count());
    Fp8Average.check(subject, c, null, send.type(), call.op());
    if (c.hasRoot()) {
      rootInRange(subject, c, null, call.root(), ranks);
    }
    if (call.inPlace()) {
      if (c.inPlace().sliced()) {
        divisible(subject, c, ranks);
      } else if (c.inPlace() == InPlace.NOT_ALLOWED) {
        throw violation(subject, RuleId.MISSING_INTO, subject.where(c, null) + ": " + c.label() + " has no in-place"
            + " form: it needs a receive field of its own (count(into) = count(" + send.field() + ") = " + send.count()
            + ", divisible by " + subject.ranks(ranks) + "). Fix: add into = \"<field>\" naming a " + send.type()
            + " field with @Shape(" + send.shape() + ")");
      }
      return;
    }
    counts(subject, c, null, send.count(), recv.count(), ranks);
  }

  /**
   * Checks the plan's calls on the memory they will use (plan-owned views and bound buffers): an
   * out-of-place call's sides are disjoint ({@link RuleId#OVERLAP}), and within one step no call writes
   * memory another reads or writes ({@link RuleId#STEP_RACE}: NCCL leaves both undefined). The processor
   * proves this for fields; bound buffers can share memory it cannot see.
   */
  static void checkNoRaces(String planName, Declarations declarations, List<Declarations.Call> ordered,
      Buffer[] views) {
    for (int i = 0; i < ordered.size(); i++) {
      Declarations.Call a = ordered.get(i);
      if (!a.inPlace()) {
        disjoint(Declared.of(planName, declarations, a), a.collective(), null, views[a.send()], views[a.recv()]);
      }
      if (!a.collective().writesRecv()) {
        continue; // a send only reads; its conflicts are found from the writer's side
      }
      for (int j = 0; j < ordered.size(); j++) {
        Declarations.Call b = ordered.get(j);
        if (i == j || a.step() != b.step()) {
          continue;
        }
        // Rule 19: a write on the root only (Reduce, Gather) is still a write.
        boolean writesWhatBReads = b.collective().readsSend() && overlaps(views[a.recv()], views[b.send()]);
        boolean bothWrite = j > i && b.collective().writesRecv() && overlaps(views[a.recv()], views[b.recv()]);
        if (writesWhatBReads || bothWrite) {
          throw new PlanBuildException(RuleId.STEP_RACE.tag() + " plan " + planName + ", step " + a.step() + ": "
              + declarations.annotation(a) + " on field '" + declarations.name(a.send()) + "' writes '"
              + declarations.name(a.recv()) + "', which overlaps '"
              + declarations.name(writesWhatBReads ? b.send() : b.recv()) + "', which " + declarations.annotation(b)
              + " on field '" + declarations.name(b.send()) + "' " + (writesWhatBReads ? "reads" : "writes")
              + " in the same step; collectives of one group must not race. Fix: move one to another step");
        }
      }
    }
  }

  // ---- The rules, each once -------------------------------------------------------------------------

  /** {@link RuleId#BAD_BUFFER}: open, and of this communicator. */
  private static void usable(RuleSubject s, Collective c, Communicator comm, Side side, Buffer buffer) {
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
  private static void sameType(CallSubject s, Collective c, Communicator comm, DataType sendType, long sendCount,
      DataType recvType, long recvCount) {
    if (sendType != recvType) {
      throw violation(s, RuleId.TYPE_MISMATCH, s.where(c, comm) + ": " + s.ref(Side.SEND) + " is " + sendType + " ("
          + sendCount + " elements) but " + s.ref(Side.RECV) + " is " + recvType + " (" + recvCount + " elements);"
          + " both sides of a collective must have the same data type. Fix: make " + s.ref(Side.RECV) + " "
          + sendType + " too");
    }
  }

  /** {@link RuleId#BAD_ROOT}: a root is a rank of the communicator. */
  private static void rootInRange(CallSubject s, Collective c, Communicator comm, int root, int ranks) {
    if (root < 0 || root >= ranks) {
      throw violation(s, RuleId.BAD_ROOT, s.where(c, comm) + ": root " + root + " is not a rank of this " + ranks
          + "-rank communicator; it must be in [0, " + ranks + ")");
    }
  }

  /**
   * The collective's {@link CountRule}, reported under {@link CountRule#violation()}; the fix gives the
   * side the rule constrains the count it needs.
   */
  private static void counts(CallSubject s, Collective c, Communicator comm, long send, long recv, int ranks) {
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
        relation = "must be " + s.ranksName() + " × count(" + sendName + ") = " + ranks + " × " + send + " = " + needed;
      }
      case SEND_IS_RANKS_TIMES_RECV -> {
        side = sendName;
        needed = times(ranks, recv);
        relation = "must be " + s.ranksName() + " × count(" + recvName + ") = " + ranks + " × " + recv + " = " + needed;
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

  /**
   * {@link RuleId#NOT_DIVISIBLE}: a plan's in-place buffer that holds one slice per rank divides by the
   * ranks. (A direct call's count rule implies it.)
   */
  private static void divisible(Declared s, Collective c, int ranks) {
    Declarations.Field field = s.send();
    if (field.count() % ranks != 0) {
      String holds = switch (c.inPlace()) {
        case SEND_IS_RANK_SLICE_OF_RECV -> "the whole gathered result";
        case RECV_IS_RANK_SLICE_OF_SEND -> "the whole input";
        default -> "one buffer";
      };
      throw violation(s, RuleId.NOT_DIVISIBLE, s.where(c, null) + ": in place, the field holds " + holds
          + ", one slice per rank, but its count " + field.count() + " (shape " + field.shape()
          + ") is not divisible by " + s.ranks(ranks) + ". Fix: make the count a multiple of "
          + (s.ranksName().equals("ranks") ? "the ranks" : s.ranksName()) + " (e.g. a shape with \"" + s.ranksName()
          + "\" in it) or use a separate field with into");
    }
  }

  /** {@link RuleId#OVERLAP}: the two sides share no memory, unless they are in place. */
  private static void disjoint(CallSubject s, Collective c, Communicator comm, Buffer send, Buffer recv) {
    if (overlaps(send, recv) && !(s.inPlaceByArrangement() && isInPlace(c, send, recv, comm.rank()))) {
      throw violation(s, RuleId.OVERLAP, s.where(c, comm) + ": " + s.sides() + " overlap (bytes "
          + send.byteOffset() + ".."
          + (send.byteOffset() + send.byteSize()) + " and " + recv.byteOffset() + ".."
          + (recv.byteOffset() + recv.byteSize()) + " of one block); out of place, they must be disjoint. Fix: "
          + s.overlapFix(c, comm, send, recv));
    }
  }

  private static boolean overlaps(Buffer x, Buffer y) {
    return x.memory() == y.memory()
        && x.byteOffset() < y.byteOffset() + y.byteSize() && y.byteOffset() < x.byteOffset() + x.byteSize();
  }

  /** The exception {@code subject} reports {@code rule} with: the rule's tag, then {@code message}. */
  private static RuntimeException violation(RuleSubject subject, RuleId rule, String message) {
    return subject.reject(rule, rule.tag() + " " + message);
  }

  /** {@code a × b}, exactly, for messages. */
  private static String times(long a, long b) {
    return BigInteger.valueOf(a).multiply(BigInteger.valueOf(b)).toString();
  }
}
