package dev.commplan.runtime.plan;

import static dev.commplan.runtime.rules.CallRules.counts;
import static dev.commplan.runtime.rules.CallRules.disjoint;
import static dev.commplan.runtime.rules.CallRules.fp8Average;
import static dev.commplan.runtime.rules.CallRules.overlaps;
import static dev.commplan.runtime.rules.CallRules.rootInRange;
import static dev.commplan.runtime.rules.CallRules.sameType;
import static dev.commplan.runtime.rules.CallRules.usable;
import static dev.commplan.runtime.rules.CallRules.violation;

import dev.commplan.model.Collective;
import dev.commplan.model.InPlace;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.rules.CallRules;
import dev.commplan.runtime.rules.RuleSubject.CallSubject;
import dev.commplan.runtime.rules.RuleSubject.Side;
import dev.commplan.runtime.rules.RuleSubject;
import java.util.List;

/**
 * The rules as a plan's build applies them ({@link PlanBuilder#buffer} and {@link PlanAssembly}): each
 * rule is {@link CallRules}' (the same rules and ids as the direct calls and the processor), applied to a
 * plan's declarations with their subjects (the plan, the annotation, the fields with their shapes), plus
 * the rules only a plan has: {@link RuleId#MISSING_INTO}, {@link RuleId#NOT_DIVISIBLE} and {@link
 * RuleId#STEP_RACE} ({@link PeerRules} has {@link RuleId#UNMATCHED_PEER}, {@link Buckets} {@link
 * RuleId#BAD_BUCKET}).
 */
final class PlanRules {
  private PlanRules() {}

  /**
   * Checks a buffer bound to a declared field: open, of the plan's communicator, of the field's data type
   * and count ({@link RuleId#BAD_BUFFER}, thrown as {@link BufferBindingException}).
   */
  static void checkBinding(String planName, Communicator comm, Declarations.Field field) {
    Buffer bound = field.bound();
    RuleSubject subject = new BoundField(planName, field);
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
    fp8Average(subject, c, null, send.type(), call.op());
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

  /**
   * A collective a plan declares: the messages name the plan, the annotation, the fields with their shapes, and
   * the axis it runs over ("" for the plan's own communicator), whose size stands for ranks.
   */
  private record Declared(String planName, String annotation, Declarations.Field send, Declarations.Field recv,
      String axis) implements CallSubject {
    static Declared of(String planName, Declarations declarations, Declarations.Call call) {
      return new Declared(planName, declarations.annotation(call), declarations.field(call.send()),
          declarations.field(call.recv()), declarations.axis(call.group()));
    }

    @Override
    public String ranksName() {
      return axis.isEmpty() ? "ranks" : axis;
    }

    @Override
    public String where(Collective collective, Communicator comm) {
      return "plan " + planName + ": " + annotation + " on field '" + send.field() + "'";
    }

    @Override
    public String ref(Side side) {
      return "'" + name(side) + "'";
    }

    @Override
    public String user() {
      return "plan";
    }

    @Override
    public String communicator() {
      return "the communicator the plan is built for";
    }

    @Override
    public String name(Side side) {
      return field(side).field();
    }

    @Override
    public String size(Side side, long count) {
      return "count(" + name(side) + ") = " + count + " (shape " + field(side).shape() + ")";
    }

    @Override
    public String sides() {
      return "the buffers bound to " + ref(Side.SEND) + " and " + ref(Side.RECV);
    }

    @Override
    public boolean inPlaceByArrangement() {
      return false;
    }

    @Override
    public String overlapFix(Collective collective, Communicator comm, Buffer send, Buffer recv) {
      return "bind disjoint buffers, or declare the collective in place (one field, no into)";
    }

    @Override
    public RuntimeException reject(RuleId rule, String message) {
      return new PlanBuildException(message);
    }

    private Declarations.Field field(Side side) {
      return side == Side.SEND ? send : recv;
    }
  }

  /** A buffer the user binds to a plan's field ({@code PlanBuilder.buffer(..., bound)}). */
  private record BoundField(String planName, Declarations.Field field) implements RuleSubject {
    @Override
    public String where(Collective collective, Communicator comm) {
      return "plan " + planName + ": field '" + field.field() + "' needs a " + field.type() + " buffer of "
          + field.count() + " elements (shape " + field.shape() + ")";
    }

    @Override
    public String ref(Side side) {
      return "the bound buffer";
    }

    @Override
    public String user() {
      return "plan";
    }

    @Override
    public String communicator() {
      return "the communicator the plan is built for";
    }

    @Override
    public RuntimeException reject(RuleId rule, String message) {
      return new BufferBindingException(message);
    }
  }
}
