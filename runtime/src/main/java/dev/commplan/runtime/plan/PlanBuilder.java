package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.Peer;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.BufferInFlightException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.DisagreementException;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.PlanMismatchException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.HostAccessGuard;
import java.util.List;
import java.util.Objects;

/**
 * Builds a {@link Plan}; what generated plan classes call. Declare every buffer field ({@link #buffer}),
 * then every collective ({@link #allReduce}, {@link #broadcast}, {@link #allGather}, {@link
 * #reduceScatter}, or any of them, Reduce, Gather, Scatter and AllToAll included, through {@link
 * #collective}) and every point-to-point transfer ({@link #send}, {@link #recv}), then {@link #build()}.
 *
 * <p>The processor has proved what it could symbolically; {@code build()} re-checks every relation with
 * the bound dims and the real communicator ({@link PlanRules}, the same rules and ids as the processor's),
 * because a plan can be built with any dims and on any communicator size (and because a hand-written
 * caller gets the same checks).
 *
 * <p>{@code build()} runs the stages in order: {@link PlanRules} (each declared call), {@link BufferLayout}
 * (plan-owned buffers grouped by step, collective, data type, op, root and in-place-ness, contiguous in
 * declaration order, in blocks aligned to {@value #BLOCK_ALIGNMENT} bytes of one allocation), {@link
 * PlanRules} again on that memory (races and overlaps), {@link ScheduleBuilder} (steps, NCCL counts and
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

  /**
   * The system property that sets the default of {@link #orderCheck(boolean)}: {@code true}, or {@code
   * false} (the default when unset).
   */
  public static final String ORDER_CHECK_PROPERTY = "commplan.orderCheck";

  /**
   * The system property that sets the default of {@link #fingerprintCheck(boolean)}: {@code false} turns it
   * off for every plan built in this JVM (generated plans included); any other value, or none, leaves it on.
   */
  public static final String FINGERPRINT_CHECK_PROPERTY = "commplan.plan.fingerprint";

  private final String planName;
  private final Communicator comm;
  /** The communicators the plan's calls run over, by group index: the plan's own first, then its axes'. */
  private final List<Schedule.Group> groups;
  private final Declarations declarations;
  private boolean built;
  private boolean hostAccessGuard = defaultHostAccessGuard();
  private boolean fingerprintCheck = !"false".equalsIgnoreCase(System.getProperty(FINGERPRINT_CHECK_PROPERTY));
  private boolean orderCheck = "true".equalsIgnoreCase(System.getProperty(ORDER_CHECK_PROPERTY));
  private long bucketBytes;
  private Stream commStream;

  /**
   * Starts a plan for {@code comm}.
   *
   * @param planName the annotated class's qualified name, used in messages and {@link Plan#describe()}
   * @param comm the communicator the plan runs on; its backend allocates the plan's memory and compiles it
   * @param fixedRanks {@code @CommPlan(ranks)}: 0 for any size, else the size the plan needs
   * @throws PlanBuildException if {@code fixedRanks > 0} and {@code comm.size() != fixedRanks}
   * @throws IllegalStateException if {@code comm} is closed or aborted (the message says which, and why)
   */
  public PlanBuilder(String planName, Communicator comm, int fixedRanks) {
    this(planName, comm, fixedRanks, List.of(new Schedule.Group("", Objects.requireNonNull(comm, "comm"))));
  }

  /**
   * Starts a plan over a mesh ({@code @CommPlan(axes)}): the plan runs on {@code mesh.world()}, and each
   * call declared {@code over} one of {@code axes} runs over that axis's communicator.
   *
   * @param planName the annotated class's qualified name, used in messages and {@link Plan#describe()}
   * @param mesh the mesh; its world allocates the plan's memory and compiles it
   * @param fixedRanks {@code @CommPlan(ranks)}: 0 for any size, else the world size the plan needs
   * @param axes the axes the plan's calls run over ({@code @CommPlan(axes)}), each an axis of {@code mesh}
   * @throws PlanBuildException if the mesh lacks one of {@code axes} (naming the plan's axes and the mesh's),
   *     or {@code fixedRanks > 0} and the world's size differs
   * @throws IllegalStateException if the mesh's world is closed or aborted
   */
  public PlanBuilder(String planName, Mesh mesh, int fixedRanks, String... axes) {
    this(planName, Objects.requireNonNull(mesh, "mesh").world(), fixedRanks,
        PlanAssembly.groupsOf(planName, mesh, axes));
  }

  private PlanBuilder(String planName, Communicator comm, int fixedRanks, List<Schedule.Group> groups) {
    this.planName = Objects.requireNonNull(planName, "planName");
    this.comm = Objects.requireNonNull(comm, "comm");
    this.groups = List.copyOf(groups);
    this.declarations = new Declarations(this.groups.stream().map(Schedule.Group::axis).toList());
    if (fixedRanks < 0) {
      throw new IllegalArgumentException("plan " + planName + ": fixedRanks must be >= 0, was " + fixedRanks);
    }
    if (comm.isClosed()) {
      throw Plan.unusable(planName, comm);
    }
    if (fixedRanks > 0 && comm.size() != fixedRanks) {
      throw new PlanBuildException(
          "plan " + planName + " is declared with @CommPlan(ranks = " + fixedRanks
              + ") but the communicator has " + comm.size() + " ranks: run it on a " + fixedRanks
              + "-rank communicator, or declare ranks = 0 to accept any size");
    }
  }

  /**
   * The size of an axis the plan runs over: what an axis name means in a {@code @Shape}.
   *
   * @param axis one of the axes given to {@link #PlanBuilder(String, Mesh, int, String...)}
   * @return the number of ranks along it
   * @throws IllegalArgumentException if the plan has no such axis
   */
  public long axisSize(String axis) {
    return groups.get(group(axis)).communicator().size();
  }

  /**
   * Turns the plan's host-access guard on or off (default: the system property {@value
   * #HOST_ACCESS_GUARD_PROPERTY}, else on). With it on, a host read of a buffer that work the plan enqueued
   * writes, or a host write to one that such work reads or writes, throws {@link BufferInFlightException}
   * until the stream has been synchronized; see {@link Plan}.
   * Off, execute marks nothing and host access is never checked against this plan's work.
   *
   * @param enabled whether this plan's execute marks its buffers and host access checks them
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
   * @return the default, read from the property on each call
   * @throws IllegalArgumentException if the property is set to something other than true or false
   */
  public static boolean defaultHostAccessGuard() {
    return HostAccessGuard.defaultEnabled();
  }

  /**
   * Makes the plan bucketed ({@code @CommPlan(bucketBytes)}): within each step and each group (axis), its
   * calls are cut into buckets in reverse declaration order, each holding consecutive calls whose send
   * fields add up to at most {@code bytes} (a larger field is a bucket alone), to be enqueued one by one as
   * their fields are marked ready ({@link Plan#ready}, {@link Plan#finish}). 0 (the default): not bucketed.
   *
   * @param bytes the most bytes of send fields per bucket, or 0
   * @return this builder
   * @throws PlanBuildException {@code [CommPlan/BadBucket]} if {@code bytes < 0}
   */
  public PlanBuilder bucketBytes(long bytes) {
    checkNotBuilt();
    this.bucketBytes = Buckets.checkBytes(planName, bytes);
    return this;
  }

  /**
   * The stream a bucketed plan enqueues its buckets on; without it, {@link #build()} makes one with {@code
   * newStream()} of the plan's communicator and {@link Plan#close()} closes it. Ignored by plans that are
   * not bucketed.
   *
   * @param stream a stream of the plan's communicator (of a mesh plan: the mesh's world)
   * @return this builder
   * @throws IllegalArgumentException if {@code stream} belongs to another communicator
   */
  public PlanBuilder commStream(Stream stream) {
    checkNotBuilt();
    this.commStream = Buckets.checkStream(planName, comm, stream);
    return this;
  }

  /**
   * The value of a dimension, checked.
   *
   * @param name the dimension, as in {@code @CommPlan(dims)}; the builder's setter has the same name
   * @param value the value the setter was given, in elements of the dimension
   * @param set whether the setter was called
   * @return {@code value}, once checked
   * @throws PlanBuildException if unset or {@code value <= 0}, naming the dim and the setter to call
   */
  public static long requireDim(String name, long value, boolean set) {
    return ShapeValues.requireDim(name, value, set);
  }

  /**
   * A field's element count, the product of its shape's factors (the dims' values, the ranks, literal
   * numbers), for generated builders: multiplied exactly, so that dims too large for a {@code long}
   * fail with a message naming the field and its shape instead of wrapping around.
   *
   * @param field the field's name, for the message
   * @param shapeAsWritten the {@code @Shape} as in the source, for the message
   * @param factors the shape's factors with the dims bound, each positive
   * @return the product of the factors
   * @throws PlanBuildException if the product does not fit in a {@code long}
   */
  public static long count(String field, String shapeAsWritten, long... factors) {
    return ShapeValues.count(field, shapeAsWritten, factors);
  }

  /**
   * Declares a buffer field.
   *
   * @param field the field's name, unique in the plan; messages and {@link Plan#buffer} use it
   * @param type the element type
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
    ShapeValues.checkBufferCount(planName, field, type, count, shapeAsWritten);
    Declarations.Field declared = declarations.next(field, type, count, shapeAsWritten, bound);
    if (bound != null) {
      PlanRules.checkBinding(planName, comm, declared);
      declarations.checkBoundOnce(planName, declared);
    }
    return declarations.add(declared);
  }

  /**
   * Declares an AllReduce in {@code step}; {@code send == recv} means in place.
   *
   * @param step the step the call belongs to; calls of one step are issued in one NCCL group
   * @param send the handle of the buffer to reduce, from {@link #buffer}
   * @param recv the handle of the buffer that receives the result
   * @param op how elements are combined
   */
  public void allReduce(int step, int send, int recv, ReduceOp op) {
    collective(step, Collective.ALL_REDUCE, send, recv, op, -1);
  }

  /**
   * Declares a Broadcast from {@code root} in {@code step}; the root is checked against the size at build.
   *
   * @param step the step the call belongs to; calls of one step are issued in one NCCL group
   * @param send the handle of the buffer that {@code root} broadcasts
   * @param recv the handle of the buffer every rank receives into
   * @param root the broadcasting rank
   */
  public void broadcast(int step, int send, int recv, int root) {
    collective(step, Collective.BROADCAST, send, recv, null, root);
  }

  /**
   * Declares an AllGather in {@code step}. In place ({@code send == recv}) the buffer holds the whole
   * result and its rank-th slice is this rank's contribution; its count must divide by the ranks (checked
   * at build).
   *
   * @param step the step the call belongs to; calls of one step are issued in one NCCL group
   * @param send the handle of this rank's slice
   * @param recv the handle of the buffer that receives every rank's slice
   */
  public void allGather(int step, int send, int recv) {
    collective(step, Collective.ALL_GATHER, send, recv, null, -1);
  }

  /**
   * Declares a ReduceScatter in {@code step}. In place ({@code send == recv}) the buffer holds the whole
   * input and the result lands in its rank-th slice; its count must divide by the ranks (checked at build).
   *
   * @param step the step the call belongs to; calls of one step are issued in one NCCL group
   * @param send the handle of the buffer holding one slice per rank
   * @param recv the handle of the buffer that receives this rank's reduced slice
   * @param op how elements are combined
   */
  public void reduceScatter(int step, int send, int recv, ReduceOp op) {
    collective(step, Collective.REDUCE_SCATTER, send, recv, op, -1);
  }

  /**
   * Declares any collective in {@code step}: what the named methods above call. {@code send == recv}
   * means in place, with the collective's {@linkplain Collective#inPlace() in-place meaning}; its counts,
   * root and in-place slicing are checked at build by {@link PlanRules}.
   *
   * @param step the step the call belongs to; calls of one step are issued in one NCCL group
   * @param collective which collective; not {@link Collective#SEND} or {@link Collective#RECV} (use
   *     {@link #send} and {@link #recv})
   * @param send the handle of the send buffer
   * @param recv the handle of the receive buffer; {@code send} for in place
   * @param op the reduction if the collective takes one ({@link Collective#hasOp()}), else null
   * @param root the root rank if the collective takes one ({@link Collective#hasRoot()}), else -1
   * @throws NullPointerException if the collective takes an op and {@code op} is null
   * @throws IllegalArgumentException for an unknown handle, an op or a root the collective does not take
   */
  public void collective(int step, Collective collective, int send, int recv, ReduceOp op, int root) {
    collective(step, collective, send, recv, op, root, "");
  }

  /**
   * {@link #collective(int, Collective, int, int, ReduceOp, int)} over a mesh axis ({@code over} in the
   * annotation): sizes, the root and slice indices are along that axis.
   *
   * @param step the step the call belongs to; calls of one step are issued in one NCCL group
   * @param collective which collective; not {@link Collective#SEND} or {@link Collective#RECV}
   * @param send the handle of the send buffer
   * @param recv the handle of the receive buffer; {@code send} for in place
   * @param op the reduction if the collective takes one ({@link Collective#hasOp()}), else null
   * @param root the root, a coordinate along {@code over}, if the collective takes one, else -1
   * @param over an axis of the plan, or {@code ""} for the plan's whole communicator
   * @throws IllegalArgumentException for an unknown handle or axis, an op or a root the collective does not take
   */
  public void collective(int step, Collective collective, int send, int recv, ReduceOp op, int root, String over) {
    Declarations.checkArguments(planName, collective, op, root);
    checkNotBuilt();
    checkHandle(send);
    checkHandle(recv);
    declarations.addCall(step, collective, send, recv, op, root, null, group(over));
  }

  /**
   * Declares a send of the whole of {@code buffer} in {@code step} to the peer {@code to}, written as in
   * {@code @Send(to = ...)}: {@code "rank + 1"}, {@code "(rank - 1) % ranks"} ({@link Peer}). Unwrapped, a
   * peer outside the ranks means this rank sends nothing there. At build, every send of a step must be
   * matched by a receive ({@link #recv}) of the same data type and count from the inverse peer, one to one
   * ({@code [CommPlan/UnmatchedPeer]}); a step's sends and receives are issued together, in one group.
   *
   * @param step the step the send belongs to
   * @param buffer the handle of the buffer to send, whole
   * @param to the peer expression, as written in {@code @Send(to)}
   * @throws PlanBuildException {@code [CommPlan/BadPeer]} if {@code to} does not parse as a peer
   */
  public void send(int step, int buffer, String to) {
    send(step, buffer, parsePeer(Collective.SEND, buffer, step, to));
  }

  /**
   * {@link #send(int, int, String)} with the peer already parsed.
   *
   * @param step the step the send belongs to
   * @param buffer the handle of the buffer to send, whole
   * @param to the receiving peer, relative to this rank
   */
  public void send(int step, int buffer, Peer to) {
    pointToPoint(step, Collective.SEND, buffer, to, 0);
  }

  /**
   * {@link #send(int, int, String)} along a mesh axis ({@code over}): {@code rank} and {@code ranks} in the
   * peer are this rank's coordinate along the axis and its size, and the send pairs only with a receive
   * over the same axis.
   *
   * @param step the step the send belongs to
   * @param buffer the handle of the buffer to send, whole
   * @param to the peer expression, as written in {@code @Send(to)}
   * @param over an axis of the plan, or {@code ""} for the plan's whole communicator
   * @throws PlanBuildException {@code [CommPlan/BadPeer]} if {@code to} does not parse as a peer
   */
  public void send(int step, int buffer, String to, String over) {
    pointToPoint(step, Collective.SEND, buffer, parsePeer(Collective.SEND, buffer, step, to), group(over));
  }

  /**
   * Declares a receive into the whole of {@code buffer} in {@code step} from the peer {@code from}, written
   * as in {@code @Recv(from = ...)}; see {@link #send(int, int, String)}.
   *
   * @param step the step the receive belongs to
   * @param buffer the handle of the buffer to receive into, whole
   * @param from the peer expression, as written in {@code @Recv(from)}
   * @throws PlanBuildException {@code [CommPlan/BadPeer]} if {@code from} does not parse as a peer
   */
  public void recv(int step, int buffer, String from) {
    recv(step, buffer, parsePeer(Collective.RECV, buffer, step, from));
  }

  /**
   * {@link #recv(int, int, String)} with the peer already parsed.
   *
   * @param step the step the receive belongs to
   * @param buffer the handle of the buffer to receive into, whole
   * @param from the sending peer, relative to this rank
   */
  public void recv(int step, int buffer, Peer from) {
    pointToPoint(step, Collective.RECV, buffer, from, 0);
  }

  /**
   * {@link #recv(int, int, String)} along a mesh axis ({@code over}); see {@link #send(int, int, String,
   * String)}.
   *
   * @param step the step the receive belongs to
   * @param buffer the handle of the buffer to receive into, whole
   * @param from the peer expression, as written in {@code @Recv(from)}
   * @param over an axis of the plan, or {@code ""} for the plan's whole communicator
   * @throws PlanBuildException {@code [CommPlan/BadPeer]} if {@code from} does not parse as a peer
   */
  public void recv(int step, int buffer, String from, String over) {
    pointToPoint(step, Collective.RECV, buffer, parsePeer(Collective.RECV, buffer, step, from), group(over));
  }

  private void pointToPoint(int step, Collective collective, int buffer, Peer peer, int group) {
    Objects.requireNonNull(peer, "peer");
    checkNotBuilt();
    checkHandle(buffer);
    declarations.addCall(step, collective, buffer, buffer, null, -1, peer, group);
  }

  /** The group index of {@code over}: 0 for "", else the axis's. */
  private int group(String over) {
    return PlanAssembly.groupIndex(planName, groups, over);
  }

  private Peer parsePeer(Collective collective, int buffer, int step, String text) {
    checkHandle(buffer);
    return PeerRules.parsePeer(planName, collective, declarations.name(buffer), step, text);
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
   * Whether the agreement check compares the ranks' calls right after each execute, step or launch of this
   * plan (the default: the system property {@value #ORDER_CHECK_PROPERTY}, else off), also where the
   * communicator's check is off: where another rank ran another plan there (or another instance of this plan
   * class, or a direct call), the synchronize that covers it throws {@link DisagreementException} on every
   * rank, naming both. It costs one comparison per execute (docs/reliability/execute-order.md); the
   * setting is part of the plan's fingerprint.
   *
   * @param check true to compare the ranks' calls after every execute of this plan
   * @return this builder
   */
  public PlanBuilder orderCheck(boolean check) {
    checkNotBuilt();
    this.orderCheck = check;
    return this;
  }

  /**
   * Whether {@link #build()} compares this plan's fingerprint (its schedule as canonical text,
   * docs/reliability/fingerprint.md) across the ranks (one small all-gather; a second only if they differ)
   * and, if any rank's differs, fails on every rank with a {@link PlanMismatchException}. On by default; the
   * system property {@value #FINGERPRINT_CHECK_PROPERTY}{@code =false} changes the default for the JVM
   * (generated plans included). Turn it off only where not every rank builds the plan (for example, a test
   * that builds on one rank of several), since the check is a collective: with it on, every rank must build.
   *
   * @param check false to skip the comparison (only where not every rank builds)
   * @return this builder
   */
  public PlanBuilder fingerprintCheck(boolean check) {
    checkNotBuilt();
    this.fingerprintCheck = check;
    return this;
  }

  /**
   * Checks every relation ({@link PlanRules}), lays out and allocates the plan-owned buffers ({@link
   * BufferLayout}), builds the schedule, coalescing where the layout allows ({@link ScheduleBuilder}),
   * compares the plan's fingerprint across the ranks (see {@link #fingerprintCheck}) and compiles it for
   * the communicator's backend.
   *
   * @return the plan, owning the memory it allocated; the caller closes it
   * @throws PlanMismatchException on every rank, if the ranks built different plans
   * @throws PlanBuildException naming the field, the counts, the ranks and the fix
   */
  public Plan build() {
    checkNotBuilt();
    built = true;
    return new PlanAssembly(planName, comm, groups, declarations).assemble(orderCheck, fingerprintCheck,
        hostAccessGuard, bucketBytes, commStream);
  }
}
