package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.guard.HostAccessGuard;
import java.util.List;
import java.util.Objects;

/**
 * Builds a {@link Plan}; what generated plan classes call. Declare every buffer field ({@link #buffer}),
 * then every collective ({@link #allReduce}, {@link #broadcast}, {@link #allGather}, {@link
 * #reduceScatter}, or any of them through {@link #collective}), then {@link #build()}.
 *
 * <p>The processor has proved what it could symbolically; {@code build()} re-checks every relation with
 * the bound dims and the real communicator, because a plan can be built with any dims and on any communicator size (and because a hand-written
 * caller gets the same checks).
 *
 * <p>{@code build()} runs the stages in order: the checks of each declared call, {@link BufferLayout}
 * (plan-owned buffers grouped by step, collective, data type, op, root and in-place-ness, contiguous in
 * declaration order, in blocks aligned to {@value #BLOCK_ALIGNMENT} bytes of one allocation), the checks
 * of that memory (races and overlaps), {@link ScheduleBuilder} (steps, NCCL counts and
 * offsets, and coalescing of adjacent element-wise calls, user-bound views of one block included), the
 * {@linkplain FingerprintLines fingerprint} compared across the ranks, and the {@linkplain GuardTables
 * guard tables} of the {@link Plan}. All is decided once, here.
 *
 * <p>A builder is used once, by one thread.
 */
public final class PlanBuilder {
  /** Alignment of each plan-owned block, in bytes (what {@code cudaMalloc} guarantees). */
  public static final int BLOCK_ALIGNMENT = BufferLayout.ALIGNMENT;

  /**
   * The system property that sets the default of {@link #hostAccessGuard(boolean)}: {@code true} (the
   * default when unset) or {@code false}. Read when a builder is made.
   */
  public static final String HOST_ACCESS_GUARD_PROPERTY = HostAccessGuard.PROPERTY;

  private final String planName;
  private final Communicator comm;
  private final Declarations declarations = new Declarations();
  private boolean built;
  private boolean hostAccessGuard = defaultHostAccessGuard();
  private boolean fingerprintCheck = !"false".equalsIgnoreCase(System.getProperty(PlanFingerprint.PROPERTY));

  /**
   * Starts a plan for {@code comm}.
   *
   * @param planName the annotated class's qualified name, used in messages and {@link Plan#describe()}
   * @param fixedRanks {@code @CommPlan(ranks)}: 0 for any size, else the size the plan needs
   * @throws PlanBuildException if {@code fixedRanks > 0} and {@code comm.size() != fixedRanks}
   */
  public PlanBuilder(String planName, Communicator comm, int fixedRanks) {
    this.planName = Objects.requireNonNull(planName, "planName");
    this.comm = Objects.requireNonNull(comm, "comm");
    if (fixedRanks < 0) {
      throw new IllegalArgumentException("plan " + planName + ": fixedRanks must be >= 0, was " + fixedRanks);
    }
    if (comm.isClosed()) {
      throw new PlanBuildException("plan " + planName + ": the communicator (rank " + comm.rank() + ") is closed");
    }
    if (fixedRanks > 0 && comm.size() != fixedRanks) {
      throw new PlanBuildException(
          "plan " + planName + " is declared with @CommPlan(ranks = " + fixedRanks
              + ") but the communicator has " + comm.size() + " ranks: run it on a " + fixedRanks
              + "-rank communicator, or declare ranks = 0 to accept any size");
    }
  }

  /**
   * Turns the plan's host-access guard on or off (default: the system property {@value
   * #HOST_ACCESS_GUARD_PROPERTY}, else on). With it on, a host read of a buffer that work the plan enqueued
   * writes, or a host write to one that such work reads or writes, throws {@link
   * dev.commplan.runtime.BufferInFlightException} until the stream has been synchronized; see {@link Plan}.
   * Off, execute marks nothing and host access is never checked against this plan's work.
   *
   * @return this builder
   */
  public PlanBuilder hostAccessGuard(boolean enabled) {
    checkNotBuilt();
    this.hostAccessGuard = enabled;
    return this;
  }

  /**
   * The default of {@link #hostAccessGuard(boolean)}: the system property {@value
   * #HOST_ACCESS_GUARD_PROPERTY}, {@code true} when unset.
   *
   * @throws IllegalArgumentException if the property is set to something other than true or false
   */
  public static boolean defaultHostAccessGuard() {
    String value = System.getProperty(HOST_ACCESS_GUARD_PROPERTY);
    if (value == null || value.isBlank()) {
      return true;
    }
    return switch (value.strip().toLowerCase(java.util.Locale.ROOT)) {
      case "true" -> true;
      case "false" -> false;
      default -> throw new IllegalArgumentException(
          "system property " + HOST_ACCESS_GUARD_PROPERTY + " is '" + value + "'; set it to true or false");
    };
  }

  /**
   * The value of a dimension, checked.
   *
   * @param name the dimension, as in {@code @CommPlan(dims)}; the builder's setter has the same name
   * @param set whether the setter was called
   * @throws PlanBuildException if unset or {@code value <= 0}, naming the dim and the setter to call
   */
  public static long requireDim(String name, long value, boolean set) {
    if (!set) {
      throw new PlanBuildException(
          "dimension '" + name + "' is not set: call " + name + "(long) on the plan's builder before build");
    }
    if (value <= 0) {
      throw new PlanBuildException(
          "dimension '" + name + "' must be > 0, was " + value + ": call " + name + "(long) with a positive value");
    }
    return value;
  }

  /**
   * A field's element count, the product of its shape's factors (the dims' values, the ranks, literal
   * numbers), for generated builders: multiplied exactly, so that dims too large for a {@code long}
   * fail with a message naming the field and its shape instead of wrapping around.
   *
   * @throws PlanBuildException if the product does not fit in a {@code long}
   */
  public static long count(String field, String shapeAsWritten, long... factors) {
    long count = 1;
    for (long factor : factors) {
      try {
        count = Math.multiplyExact(count, factor);
      } catch (ArithmeticException overflow) {
        java.math.BigInteger exact = java.math.BigInteger.ONE;
        StringBuilder product = new StringBuilder();
        for (long f : factors) {
          exact = exact.multiply(java.math.BigInteger.valueOf(f));
          product.append(product.isEmpty() ? "" : " × ").append(f);
        }
        throw new PlanBuildException("field '" + field + "' @Shape(" + shapeAsWritten + "): " + product + " = " + exact
            + " elements does not fit in a long (at most " + Long.MAX_VALUE + "); use smaller dims");
      }
    }
    return count;
  }

  /**
   * Declares a buffer field.
   *
   * @param count the element count, from the shape with the dims bound
   * @param shapeAsWritten the {@code @Shape} as in the source, for messages (e.g. {@code {"4", "hidden"}})
   * @param bound a buffer the user owns, or null for the plan to allocate one
   * @return the handle to name this buffer by in the collective methods and {@link Plan#buffer}
   * @throws BufferBindingException if {@code bound} is closed, of another data type, of another
   *     communicator or of another count
   */
  public int buffer(String field, DataType type, long count, String shapeAsWritten, Buffer bound) {
    checkNotBuilt();
    Objects.requireNonNull(field, "field");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(shapeAsWritten, "shapeAsWritten");
    if (declarations.hasField(field)) {
      throw new IllegalArgumentException("plan " + planName + ": field '" + field + "' is declared twice");
    }
    if (count <= 0) {
      throw new PlanBuildException(
          "plan " + planName + ": field '" + field + "' has shape " + shapeAsWritten + " = " + count
              + " elements; every buffer needs at least one element");
    }
    Declarations.Field declared = declarations.next(field, type, count, shapeAsWritten, bound);
    if (bound != null) {
      checkBound(field, type, count, shapeAsWritten, bound);
    }
    return declarations.add(declared);
  }

  private void checkBound(String field, DataType type, long count, String shape, Buffer bound) {
    String wanted = "field '" + field + "' needs a " + type + " buffer of " + count + " elements (shape "
        + shape + ")";
    if (bound.isClosed()) {
      throw new BufferBindingException("plan " + planName + ": " + wanted + ", but the bound " + bound + " is closed");
    }
    if (bound.dataType() != type) {
      throw new BufferBindingException(
          "plan " + planName + ": " + wanted + ", but the bound buffer is a " + bound.dataType() + " buffer of "
              + bound.length() + " elements (" + bound.getClass().getSimpleName() + ")");
    }
    if (bound.communicator() != comm) {
      Communicator other = bound.communicator();
      String whose = !other.backendName().equals(comm.backendName())
          ? "the " + other.backendName() + " backend (rank " + other.rank() + ")"
          : other.rank() == comm.rank()
              ? "another " + other.backendName() + " communicator of rank " + other.rank() + " (another cluster's)"
              : "another communicator (" + other.backendName() + " rank " + other.rank() + ")";
      throw new BufferBindingException(
          "plan " + planName + ": " + wanted + ", but the bound buffer of " + bound.length()
              + " elements belongs to " + whose + ", not to this plan's (" + comm.backendName() + " rank "
              + comm.rank() + "); allocate it on the communicator the plan is built for");
    }
    if (bound.length() != count) {
      throw new BufferBindingException(
          "plan " + planName + ": " + wanted + ", but the bound buffer has " + bound.length() + " elements");
    }
  }

  /** Declares an AllReduce in {@code step}; {@code send == recv} means in place. */
  public void allReduce(int step, int send, int recv, ReduceOp op) {
    collective(step, Collective.ALL_REDUCE, send, recv, op, -1);
  }

  /** Declares a Broadcast from {@code root} in {@code step}; the root is checked against the size at build. */
  public void broadcast(int step, int send, int recv, int root) {
    collective(step, Collective.BROADCAST, send, recv, null, root);
  }

  /**
   * Declares an AllGather in {@code step}. In place ({@code send == recv}) the buffer holds the whole
   * result and its rank-th slice is this rank's contribution; its count must divide by the ranks (checked
   * at build).
   */
  public void allGather(int step, int send, int recv) {
    collective(step, Collective.ALL_GATHER, send, recv, null, -1);
  }

  /**
   * Declares a ReduceScatter in {@code step}. In place ({@code send == recv}) the buffer holds the whole
   * input and the result lands in its rank-th slice; its count must divide by the ranks (checked at build).
   */
  public void reduceScatter(int step, int send, int recv, ReduceOp op) {
    collective(step, Collective.REDUCE_SCATTER, send, recv, op, -1);
  }

  /**
   * Declares any collective in {@code step}: what the named methods above call. {@code send == recv}
   * means in place, with the collective's {@linkplain Collective#inPlace() in-place meaning}; its counts,
   * root and in-place slicing are checked at build.
   *
   * @param op the reduction if the collective takes one ({@link Collective#hasOp()}), else null
   * @param root the root rank if the collective takes one ({@link Collective#hasRoot()}), else -1
   * @throws NullPointerException if the collective takes an op and {@code op} is null
   * @throws IllegalArgumentException for an unknown handle, an op or a root the collective does not take
   */
  public void collective(int step, Collective collective, int send, int recv, ReduceOp op, int root) {
    Objects.requireNonNull(collective, "collective");
    if (collective.hasOp()) {
      Objects.requireNonNull(op, "op");
    } else if (op != null) {
      throw new IllegalArgumentException("plan " + planName + ": " + collective.label() + " takes no op, got " + op);
    }
    if (!collective.hasRoot() && root != -1) {
      throw new IllegalArgumentException(
          "plan " + planName + ": " + collective.label() + " takes no root (pass -1), got " + root);
    }
    checkNotBuilt();
    checkHandle(send);
    checkHandle(recv);
    declarations.addCall(step, collective, send, recv, op, root);
  }

  private void checkHandle(int handle) {
    int fields = declarations.fields().size();
    if (handle < 0 || handle >= fields) {
      throw new IllegalArgumentException(
          "plan " + planName + ": unknown buffer handle " + handle + "; handles are what buffer(...) returned (0.."
              + (fields - 1) + ")");
    }
  }

  private void checkNotBuilt() {
    if (built) {
      throw new IllegalStateException("plan " + planName + ": this builder has already built its plan");
    }
  }

  /**
   * Whether {@link #build()} compares this plan's {@link PlanFingerprint} across the ranks (one small
   * all-gather; a second only if they differ) and, if any rank's differs, fails on every rank with a
   * {@link dev.commplan.runtime.PlanMismatchException}. On by default; the system property {@value
   * PlanFingerprint#PROPERTY}{@code =false} changes the default for the JVM (generated plans included).
   * Turn it off only where not every rank builds the plan (for example, a test that builds on one rank
   * of several), since the check is a collective: with it on, every rank must build.
   *
   * @return this builder
   */
  public PlanBuilder fingerprintCheck(boolean check) {
    checkNotBuilt();
    this.fingerprintCheck = check;
    return this;
  }

  /**
   * Checks every relation, lays out and allocates the plan-owned buffers ({@link
   * BufferLayout}), builds the schedule, coalescing where the layout allows ({@link ScheduleBuilder}),
   * compares the plan's fingerprint across the ranks (see {@link #fingerprintCheck}) and compiles it for
   * the communicator's backend.
   *
   * @throws dev.commplan.runtime.PlanMismatchException on every rank, if the ranks built different plans
   * @throws PlanBuildException naming the field, the counts, the ranks and the fix
   */
  public Plan build() {
    checkNotBuilt();
    built = true;
    int ranks = comm.size();
    List<Declarations.Call> ordered = declarations.ordered();

    DeviceMemory owned = null;
    try {
      // A failure here is held until the fingerprint has been exchanged: the exchange is collective, so a
      // rank that failed alone and left would leave the others waiting in it.
      RuntimeException failure = null;
      BufferLayout layout = null;
      Buffer[] views = null;
      Schedule schedule = null;
      try {
        for (Declarations.Call call : declarations.calls()) {
          checkCall(call, ranks);
        }
        layout = BufferLayout.of(declarations, ordered);
        owned = layout.bytes() > 0 ? DeviceMemory.allocate(comm, layout.bytes()) : null;
        views = layout.views(declarations, owned);
        checkNoRaces(ordered, views);
        schedule = ScheduleBuilder.build(planName, declarations, ordered, views, comm.rank(), ranks);
      } catch (RuntimeException e) {
        failure = e;
      }
      if (fingerprintCheck && ranks > 1) { // one rank has no one to disagree with: nothing rendered or sent
        try {
          FingerprintLines.render(planName, ranks, declarations, ordered, schedule, failure).check(comm);
        } catch (RuntimeException e) {
          if (failure != null) {
            e.addSuppressed(failure);
          }
          throw e;
        }
      }
      if (failure != null) {
        throw failure;
      }
      CompiledSchedule compiled = CompiledSchedule.compile(comm, schedule);
      List<Declarations.Field> fields = declarations.fields();
      List<String> names = fields.stream().map(Declarations.Field::field).toList();
      boolean[] bound = new boolean[fields.size()];
      for (Declarations.Field f : fields) {
        bound[f.handle()] = f.bound() != null;
      }
      String description =
          Plan.describe(schedule, comm, names, bound, views, declarations.intoByField(), layout.bytes());
      GuardTables access = GuardTables.of(ordered);
      return new Plan(planName, comm, schedule, compiled, views, names, bound, owned, description,
          hostAccessGuard, access.written(), access.read());
    } catch (RuntimeException | Error e) {
      if (owned != null) {
        owned.close();
      }
      throw e;
    }
  }

  // ---- Checks -------------------------------------------------------------------------------------

  private void checkCall(Declarations.Call call, int ranks) {
    Declarations.Field send = declarations.field(call.send());
    Declarations.Field recv = declarations.field(call.recv());
    String where = "plan " + planName + ": " + declarations.annotation(call) + " on field '" + send.field() + "'";
    if (send.type() != recv.type()) {
      throw new PlanBuildException(
          where + ": '" + send.field() + "' is " + send.type() + " but '" + recv.field() + "' is " + recv.type()
              + "; both sides of a collective must have the same data type");
    }
    if (call.collective() == Collective.BROADCAST && (call.root() < 0 || call.root() >= ranks)) {
      throw new PlanBuildException(
          where + ": root " + call.root() + " is not a rank of this " + ranks + "-rank communicator; it must be in [0, "
              + ranks + ")");
    }
    if (call.inPlace()) {
      if ((call.collective() == Collective.ALL_GATHER || call.collective() == Collective.REDUCE_SCATTER)
          && send.count() % ranks != 0) {
        String holds = call.collective() == Collective.ALL_GATHER ? "the whole gathered result" : "the whole input";
        throw new PlanBuildException(
            where + ": in place, the field holds " + holds + ", one slice per rank, but its count " + send.count()
                + " (shape " + send.shape() + ") is not divisible by ranks = " + ranks
                + "; make the count a multiple of the ranks (e.g. a shape with \"ranks\" in it) or use a separate"
                + " field with into");
      }
      return;
    }
    String sizes = "count(" + send.field() + ") = " + send.count() + " (shape " + send.shape() + "), count("
        + recv.field() + ") = " + recv.count() + " (shape " + recv.shape() + "), ranks = " + ranks;
    switch (call.collective()) {
      case ALL_REDUCE, BROADCAST -> {
        if (send.count() != recv.count()) {
          throw new PlanBuildException(where + ": count(" + recv.field() + ") must equal count(" + send.field()
              + "); " + sizes);
        }
      }
      case ALL_GATHER -> {
        if (recv.count() != ranks * send.count()) {
          throw new PlanBuildException(where + ": count(" + recv.field() + ") must be ranks × count(" + send.field()
              + ") = " + ranks + " × " + send.count() + " = " + ranks * send.count() + "; " + sizes);
        }
      }
      case REDUCE_SCATTER -> {
        if (send.count() != ranks * recv.count()) {
          throw new PlanBuildException(where + ": count(" + send.field() + ") must be ranks × count(" + recv.field()
              + ") = " + ranks + " × " + recv.count() + " = " + ranks * recv.count() + "; " + sizes);
        }
      }
    }
  }

  /**
   * Within one step, no call may write memory another call of that step reads or writes, and an
   * out-of-place call's sides must not overlap: NCCL leaves both undefined. The processor proves this for
   * fields; here it is re-checked on memory, which also covers user-bound buffers that share memory.
   */
  private void checkNoRaces(List<Declarations.Call> ordered, Buffer[] views) {
    for (int i = 0; i < ordered.size(); i++) {
      Declarations.Call a = ordered.get(i);
      if (!a.inPlace() && overlaps(views[a.send()], views[a.recv()])) {
        String send = declarations.name(a.send());
        throw new PlanBuildException(
            "plan " + planName + ": " + declarations.annotation(a) + " on field '" + send + "': the buffers bound to '"
                + send + "' and '" + declarations.name(a.recv()) + "' overlap; out of place, they must be disjoint"
                + " (or the same buffer, for in place)");
      }
      for (int j = 0; j < ordered.size(); j++) {
        Declarations.Call b = ordered.get(j);
        if (i == j || a.step() != b.step()) {
          continue;
        }
        boolean writesWhatBReads = overlaps(views[a.recv()], views[b.send()]);
        boolean bothWrite = j > i && overlaps(views[a.recv()], views[b.recv()]);
        if (writesWhatBReads || bothWrite) {
          throw new PlanBuildException(
              "plan " + planName + ", step " + a.step() + ": " + declarations.annotation(a) + " on field '"
                  + declarations.name(a.send()) + "' writes '" + declarations.name(a.recv()) + "', which overlaps '"
                  + declarations.name(writesWhatBReads ? b.send() : b.recv()) + "', which "
                  + declarations.annotation(b) + " on field '" + declarations.name(b.send()) + "' "
                  + (writesWhatBReads ? "reads" : "writes")
                  + " in the same step; collectives of one group must not race: move one to another step");
        }
      }
    }
  }

  private static boolean overlaps(Buffer x, Buffer y) {
    if (x.memory() != y.memory()) {
      return false;
    }
    return x.byteOffset() < y.byteOffset() + y.byteSize() && y.byteOffset() < x.byteOffset() + x.byteSize();
  }
}
