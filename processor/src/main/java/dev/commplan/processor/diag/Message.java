package dev.commplan.processor.diag;

import dev.commplan.model.RuleId;
import java.util.Locale;
import javax.tools.Diagnostic;

/**
 * Every diagnostic the processor prints: one constant each, with a stable id ({@link RuleId}, from the
 * model the runtime shares, printed as {@code [CommPlan/Id]} and listed with examples in docs/dsl.md), its
 * kind, and its {@link String#format} text. Several constants may share an id when they are variants of
 * one rule.
 */
public enum Message {
  // Rule 1: AllGather with into (rule 21: over an axis, that axis's size where it says ranks).
  GATHER_SIZE(RuleId.GATHER_SIZE,
      "%s gathers into '%s': count(%s) must be %s × count(%s) = %s%s, but '%s' has @Shape(%s) = %s%s."
          + " Fix: declare '%s' as @Shape(%s)%s."),

  // Rule 2: ReduceScatter with into (and rule 21).
  SCATTER_SIZE(RuleId.SCATTER_SIZE,
      "%s scatters into '%s': count(%s) must be %s × count(%s) = %s%s, but '%s' has @Shape(%s) = %s%s."
          + " Fix: declare '%s' as @Shape(%s)%s."),

  // Rule 3: AllReduce or Broadcast with into.
  COUNT_MISMATCH(RuleId.COUNT_MISMATCH,
      "%s %s '%s': count(%s) must equal count(%s) = %s (@Shape(%s)), but '%s' has @Shape(%s) = %s."
          + " Fix: declare '%s' as @Shape(%s)."),

  // Rule 15: AllToAll sizes (Gather's and Scatter's are rules 1 and 2's messages) and AllToAll without into.
  ALL_TO_ALL_SIZE(RuleId.ALL_TO_ALL_SIZE,
      "%s exchanges into '%s': count(%s) must equal count(%s) = %s (@Shape(%s)), one slice per rank on both"
          + " sides, but '%s' has @Shape(%s) = %s. Fix: declare '%s' as @Shape(%s)."),
  ALL_TO_ALL_NOT_DIVISIBLE(RuleId.ALL_TO_ALL_SIZE,
      "%s exchanges into '%s': both hold one slice per rank, so count(%s) must be divisible by ranks = %s,"
          + " but count(%s) = %s (@Shape(%s)) is not. Fix: declare '%s' and '%s' as @Shape(%s) (%s elements per"
          + " rank)."),
  MISSING_INTO(RuleId.MISSING_INTO,
      "%s has into = \"%s\", but @%s has no in-place form: it needs a receive buffer of its own, with"
          + " count(into) = count(%s), divisible by ranks. Fix: name a %s field with @Shape(%s) in into."),

  // Rule 17: a peer that does not parse.
  BAD_PEER(RuleId.BAD_PEER,
      "%s has %s = \"%s\": %s. Fix: write the peer as one of those, such as \"rank + 1\" or"
          + " \"(rank - 1) %% ranks\"."),

  // Rule 18: a send or receive that nothing pairs with.
  UNMATCHED_PEER(RuleId.UNMATCHED_PEER,
      "%s (%s, count %s) has %s = \"%s\", so it needs a %s of %s with count %s in step %s, and there is none"
          + " left to pair with it%s: in each step every %s is matched by exactly one %s, or the plan could"
          + " deadlock or truncate. Fix: declare %s on a field of type %s with @Shape(%s), or remove this @%s."),

  // CommPlan's own: AVG on fp8, which NCCL does not average.
  FP8_AVERAGE(RuleId.FP8_AVERAGE,
      "%s has op = AVG, but '%s' is %s: NCCL computes AVG on fp8 as the sum multiplied by 1/ranks rounded to"
          + " fp8 (for 3 ranks 0.34375 or 0.3125, not 1/3), and fails on one rank, so no backend offers it."
          + " Fix: use op = SUM and scale the result, or declare '%s'%s as a wider type (F16Buffer, BF16Buffer"
          + " or F32Buffer)."),

  // Rule 4: into names no field, a non-buffer, or the field itself.
  UNKNOWN_INTO(RuleId.UNKNOWN_INTO,
      "%s has into = \"%s\", but class '%s' has no field '%s'%s."
          + " Fix: name one of its buffer fields (%s), or leave into empty for in place."),
  INTO_NOT_BUFFER(RuleId.INTO_NOT_BUFFER,
      "%s has into = \"%s\", but '%s' is a %s, not a buffer."
          + " Fix: declare '%s' as %s (dev.commplan.runtime) with a @Shape."),
  INTO_SELF(RuleId.INTO_SELF,
      "%s has into = \"%s\", the field itself; into names another field, the receive buffer."
          + " Fix: leave into empty for in place."),

  // Rule 5: send and into of different buffer types.
  TYPE_MISMATCH(RuleId.TYPE_MISMATCH,
      "%s (%s) %s '%s' (%s): send and receive buffers must have the same data type."
          + " Fix: declare '%s' as %s, or '%s' as %s."),

  // Rule 6: collective or @Shape on a non-buffer.
  NOT_A_BUFFER(RuleId.NOT_A_BUFFER,
      "'%s' carries @%s but has type %s, which is not a buffer type."
          + " Fix: declare '%s' as one of %s (package dev.commplan.runtime)."),

  // Rule 7: collective without @Shape on either side.
  MISSING_SHAPE(RuleId.MISSING_SHAPE,
      "'%s', the send buffer of @%s, has no @Shape: every buffer of a plan declares its shape, one entry per"
          + " dimension. Fix: add %s to '%s'."),
  MISSING_PEER_SHAPE(RuleId.MISSING_SHAPE,
      "'%s', the buffer of @%s, has no @Shape: every buffer of a plan declares its shape, one entry per"
          + " dimension. Fix: add %s to '%s'."),
  MISSING_RECV_SHAPE(RuleId.MISSING_SHAPE,
      "'%s', the receive buffer of %s, has no @Shape: every buffer of a plan declares its shape."
          + " Fix: add %s to '%s'."),

  // Rule 8: @Shape entries.
  BAD_SHAPE(RuleId.BAD_SHAPE,
      "@Shape entry \"%s\" of '%s' does not parse: %s. An entry is an integer > 0, a dim, ranks,"
          + " or a product of those joined by '*', such as \"4 * hidden\"."),
  EMPTY_SHAPE(RuleId.BAD_SHAPE,
      "@Shape of '%s' has no entries. Fix: give one entry per dimension, such as @Shape(\"1\") for one"
          + " element."),
  UNKNOWN_DIM(RuleId.UNKNOWN_DIM,
      "@Shape entry \"%s\" of '%s' names '%s', which is not a dim of this plan (declared: %s)%s."
          + " Fix: add \"%s\" to @CommPlan(dims), or use a declared dim or ranks."),
  UNKNOWN_DIM_OR_AXIS(RuleId.UNKNOWN_DIM,
      "@Shape entry \"%s\" of '%s' names '%s', which is neither a dim nor an axis of this plan (dims: %s; axes:"
          + " %s)%s. Fix: add \"%s\" to @CommPlan(dims), or use a declared dim, axis or ranks."),
  COUNT_OVERFLOW(RuleId.COUNT_OVERFLOW,
      "@Shape(%s) of '%s' has the constant factor %s, more than the largest long (9223372036854775807)."
          + " Fix: use smaller sizes, or dims bound when the plan is built."),

  // Rules 9 and 16: the root of Broadcast, Reduce, Gather and Scatter (rule 21: over an axis, a coordinate).
  NEGATIVE_ROOT(RuleId.BAD_ROOT,
      "%s has root = %s, but a root is a rank, 0 or more. Fix: set root to a rank in [0, %s)."),
  ROOT_OUT_OF_RANGE(RuleId.BAD_ROOT,
      "%s has root = %s, but the plan fixes @CommPlan(ranks = %s), so ranks are 0 to %s."
          + " Fix: set root to a rank in [0, %s)."),

  // Rule 10: in-place AllGather / ReduceScatter (and Gather / Scatter) not divisible by ranks.
  NOT_DIVISIBLE(RuleId.NOT_DIVISIBLE,
      "in-place %s: '%s' %s, one slice per rank, so count(%s) must be divisible by ranks = %s,"
          + " but count(%s) = %s (@Shape(%s)) is not."
          + " Fix: declare '%s' as @Shape(%s) (%s elements per rank), or give it an into buffer."),

  // Rules 11 and 19: race inside one step.
  STEP_RACE(RuleId.STEP_RACE,
      "%s %s '%s', which %s %s, in the same step %s: collectives of one step are issued in one NCCL group"
          + " and run in no defined order. Fix: move one of them to another step, such as step = %s on %s."),

  // Rule 12: two collectives on one field in one step.
  DUPLICATE_COLLECTIVE(RuleId.DUPLICATE_COLLECTIVE,
      "'%s' has @%s and @%s both in step %s; a field takes part in one collective per step."
          + " Fix: give @%s another step, such as step = %s."),

  // Rule 13: private fields, wrong targets.
  PRIVATE_FIELD(RuleId.PRIVATE_FIELD,
      "'%s' carries @%s but is private; plan fields must not be private. Fix: remove 'private' from '%s'."),
  BAD_TARGET_KIND(RuleId.BAD_TARGET,
      "@CommPlan goes on a class, but '%s' is %s. Fix: declare '%s' as a class (top-level or static nested)."),
  BAD_TARGET_PRIVATE(RuleId.BAD_TARGET,
      "@CommPlan class '%s' is private. Fix: remove 'private' from '%s'."),
  BAD_TARGET_INNER(RuleId.BAD_TARGET,
      "@CommPlan class '%s' is an inner (non-static) class. Fix: declare '%s' static."),
  BAD_TARGET_LOCAL(RuleId.BAD_TARGET,
      "@CommPlan class '%s' is %s class. Fix: move it to a top-level or static nested class."),

  // Rule 14: dims and ranks.
  RESERVED_DIM(RuleId.BAD_DIM,
      "dims entry \"ranks\" is reserved: ranks always means the communicator's size."
          + " Fix: remove it from dims; @Shape can use \"ranks\" as it is."),
  DUPLICATE_DIM(RuleId.BAD_DIM, "dims lists \"%s\" twice. Fix: remove the second \"%s\"."),
  DUPLICATE_DIM_IGNORABLE(RuleId.BAD_DIM,
      "dims entry \"%s\" is the dim \"%s\" again: Java ignores %s in names. Fix: remove \"%s\", or rename it."),
  INVALID_DIM(RuleId.BAD_DIM,
      "dims entry \"%s\" is not a Java identifier (each dim becomes a Builder setter). Fix: rename it, such"
          + " as \"%s\"."),
  NEGATIVE_RANKS(RuleId.BAD_RANKS,
      "@CommPlan(ranks = %s) is negative. Fix: use 0 for any world size, or N > 0 to fix it to N ranks."),

  // Rule 23: bucketBytes.
  NEGATIVE_BUCKET(RuleId.BAD_BUCKET,
      "@CommPlan(bucketBytes = %s) is negative. Fix: use 0 for no buckets (the plan runs whole with execute), or"
          + " N > 0, the most bytes of one bucket (docs/overlap.md, \"Choosing bucketBytes\")."),
  OVERFLOWED_BUCKET(RuleId.BAD_BUCKET,
      "@CommPlan(bucketBytes = %s) is negative: an int expression overflowed before it became the long"
          + " bucketBytes (1 << 31, or 2048 * 1024 * 1024, is %s in int). Fix: write it as a long, such as 1L << 31"
          + " or 2048L * 1024 * 1024."),
  TOO_MANY_BUCKET_FIELDS(RuleId.BAD_BUCKET,
      "@CommPlan(bucketBytes = %s) gives the generated class an enum Field of one constant per field that a"
          + " collective sends, but '%s' sends %s fields, and an enum holds at most %s constants (its initializer"
          + " must fit in the JVM's 64 KB per method). Fix: split the plan into plans of at most %s sent fields"
          + " each, or leave bucketBytes 0 and run the plan whole with execute."),

  // Rule 20: axes and over.
  UNKNOWN_AXIS(RuleId.UNKNOWN_AXIS,
      "%s has over = \"%s\", but that is not an axis of this plan (declared: %s)%s."
          + " Fix: use a declared axis, add \"%s\" to @CommPlan(axes), or leave over empty for the whole"
          + " communicator."),
  OVER_WITHOUT_AXES(RuleId.UNKNOWN_AXIS,
      "%s has over = \"%s\", but @CommPlan declares no axes, so every collective runs over the whole"
          + " communicator. Fix: declare the mesh's axes, such as @CommPlan(axes = {\"%s\"}), and build the plan"
          + " on a Mesh, or remove over."),
  OVER_RESERVED(RuleId.UNKNOWN_AXIS,
      "%s has over = \"%s\", but \"%s\" is no axis: %s, and no axis may be named so. Fix: leave over empty"
          + " (over = \"\") for the whole communicator%s."),
  RESERVED_AXIS(RuleId.BAD_AXIS,
      "axes entry \"%s\" is reserved: %s. Fix: rename the axis, such as \"%s\"."),
  DUPLICATE_AXIS(RuleId.BAD_AXIS, "axes lists \"%s\" twice. Fix: remove the second \"%s\"."),
  DUPLICATE_AXIS_IGNORABLE(RuleId.BAD_AXIS,
      "axes entry \"%s\" is the axis \"%s\" again: Java ignores %s in names. Fix: remove \"%s\", or rename it."),
  INVALID_AXIS(RuleId.BAD_AXIS,
      "axes entry \"%s\" is not a Java identifier (an axis is a size in @Shape and a name in the generated"
          + " code). Fix: rename it, such as \"%s\"."),
  AXIS_IS_DIM(RuleId.BAD_AXIS,
      "axes entry \"%s\" is also a dim: in @Shape, a name is one size, either a dim bound on the builder or an"
          + " axis's size from the mesh. Fix: rename the axis or the dim, such as \"%s\" for the axis."),

  // The generated class's name.
  BAD_NAME(RuleId.BAD_NAME,
      "@CommPlan(name = \"%s\") is not a valid Java class name. Fix: use a simple name such as \"%s\"."),
  NAME_CLASH(RuleId.BAD_NAME,
      "@CommPlan(name = \"%s\") would generate %s, which is the class '%s' itself. Fix: choose another name,"
          + " such as \"%sPlan\", or leave name empty."),

  NAME_IS_BUILDER(RuleId.BAD_NAME,
      "@CommPlan(name = \"%s\") would clash with the generated class's nested Builder. Fix: choose another"
          + " name, such as \"%sPlan\"."),
  NAME_IS_FIELD(RuleId.BAD_NAME,
      "@CommPlan(name = \"%s\") would clash with the generated class's nested enum Field, which a plan with"
          + " bucketBytes has. Fix: choose another name, such as \"%sPlan\"."),

  // Annotations outside a plan.
  NOT_IN_PLAN(RuleId.NOT_IN_PLAN,
      "'%s' carries @%s, but its class '%s' is not annotated @CommPlan, so nothing reads it."
          + " Fix: annotate '%s' with @CommPlan, or remove @%s."),

  // The processor itself.
  UNRESOLVED(RuleId.UNRESOLVED,
      "could not process @CommPlan class '%s' because %s could not be resolved."
          + " Fix: correct the compile errors around it (a missing import or dependency)."),
  WRITE_FAILED(RuleId.WRITE_FAILED, "could not write the generated class %s for '%s': %s"),
  INTERNAL_ERROR(RuleId.INTERNAL_ERROR,
      "the CommPlan processor failed on '%s': %s (at %s). This is a bug in CommPlan; please report it with"
          + " this message and the class it happened on.");

  private final RuleId id;
  private final Diagnostic.Kind kind;
  private final String format;

  Message(RuleId id, String format) {
    this(id, Diagnostic.Kind.ERROR, format);
  }

  Message(RuleId id, Diagnostic.Kind kind, String format) {
    this.id = id;
    this.kind = kind;
    this.format = format;
  }

  /** The stable id, such as {@code GatherSize} (shared with the runtime's checks: {@link RuleId}). */
  public String id() {
    return id.id();
  }

  /** The rule this message reports. */
  public RuleId rule() {
    return id;
  }

  public Diagnostic.Kind kind() {
    return kind;
  }

  public String format() {
    return format;
  }

  /** The text as printed: {@code [CommPlan/Id] } and the formatted message. */
  public String render(Object... args) {
    return id.tag() + " " + String.format(Locale.ROOT, format, args);
  }
}
