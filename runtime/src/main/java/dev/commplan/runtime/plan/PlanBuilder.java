package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.BufferBindingException;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.guard.HostAccessGuard;
import dev.commplan.runtime.DeviceMemory;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;

/**
 * Builds a {@link Plan}; what generated plan classes call. Declare every buffer field ({@link #buffer}),
 * then every collective ({@link #allReduce}, {@link #broadcast}, {@link #allGather}, {@link
 * #reduceScatter}), then {@link #build()}.
 *
 * <p>The processor has proved what it could symbolically; {@code build()} re-checks every relation with
 * the bound dims and the real communicator, because a plan can be built with any dims and on any
 * communicator size (and because a hand-written caller gets the same checks).
 *
 * <p><b>Layout of plan-owned buffers.</b> Calls are taken in ascending step order, then declaration
 * order, and put in layout groups by (step, collective, data type, op, root, in place). Each group gets a
 * send block and, out of place, a receive block; each block starts at a multiple of {@value #BLOCK_ALIGNMENT}
 * bytes and holds the group's buffers back to back in declaration order. A buffer used by several
 * collectives is placed with its first use; buffers used by none come last, one block each. All blocks
 * share one allocation.
 *
 * <p><b>Coalescing.</b> Within a step, calls with the same (collective, data type, op, root, in place),
 * in declaration order, whose send regions and receive regions both follow on from the previous call's in
 * the same memory block, become one NCCL call for AllReduce and Broadcast (the element-wise meaning of
 * one call over the concatenation is that of the separate calls). AllGather and ReduceScatter are never
 * merged: their concatenated result is rank-major, not field-major. User-bound buffers that happen to be
 * adjacent views of one block are merged too. Decided once, here.
 *
 * <p>A builder is used once, by one thread.
 */
public final class PlanBuilder {
  /** Alignment of each plan-owned block, in bytes (what {@code cudaMalloc} guarantees). */
  public static final int BLOCK_ALIGNMENT = 256;

  /**
   * The system property that sets the default of {@link #hostAccessGuard(boolean)}: {@code true} (the
   * default when unset) or {@code false}. Read when a builder is made.
   */
  public static final String HOST_ACCESS_GUARD_PROPERTY = HostAccessGuard.PROPERTY;

  private final String planName;
  private final Communicator comm;
  private final List<Declared> buffers = new ArrayList<>();
  private final Map<String, Integer> handlesByField = new HashMap<>();
  private final List<Call> calls = new ArrayList<>();
  private boolean built;
  private boolean hostAccessGuard = defaultHostAccessGuard();
  private boolean fingerprintCheck = !"false".equalsIgnoreCase(System.getProperty(PlanFingerprint.PROPERTY));

  /** A declared buffer field; {@code bound} is null when the plan allocates it. */
  private record Declared(int handle, String field, DataType type, long count, String shape, Buffer bound) {}

  /** A declared collective, in declaration order. */
  private record Call(int order, int step, Collective collective, int send, int recv, ReduceOp op, int root) {
    boolean inPlace() {
      return send == recv;
    }
  }

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
    if (handlesByField.containsKey(field)) {
      throw new IllegalArgumentException("plan " + planName + ": field '" + field + "' is declared twice");
    }
    if (count <= 0) {
      throw new PlanBuildException(
          "plan " + planName + ": field '" + field + "' has shape " + shapeAsWritten + " = " + count
              + " elements; every buffer needs at least one element");
    }
    if (bound != null) {
      checkBound(field, type, count, shapeAsWritten, bound);
    }
    int handle = buffers.size();
    buffers.add(new Declared(handle, field, type, count, shapeAsWritten, bound));
    handlesByField.put(field, handle);
    return handle;
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
    addCall(step, Collective.ALL_REDUCE, send, recv, Objects.requireNonNull(op, "op"), -1);
  }

  /** Declares a Broadcast from {@code root} in {@code step}; the root is checked against the size at build. */
  public void broadcast(int step, int send, int recv, int root) {
    addCall(step, Collective.BROADCAST, send, recv, null, root);
  }

  /**
   * Declares an AllGather in {@code step}. In place ({@code send == recv}) the buffer holds the whole
   * result and its rank-th slice is this rank's contribution; its count must divide by the ranks (checked
   * at build).
   */
  public void allGather(int step, int send, int recv) {
    addCall(step, Collective.ALL_GATHER, send, recv, null, -1);
  }

  /**
   * Declares a ReduceScatter in {@code step}. In place ({@code send == recv}) the buffer holds the whole
   * input and the result lands in its rank-th slice; its count must divide by the ranks (checked at build).
   */
  public void reduceScatter(int step, int send, int recv, ReduceOp op) {
    addCall(step, Collective.REDUCE_SCATTER, send, recv, Objects.requireNonNull(op, "op"), -1);
  }

  private void addCall(int step, Collective collective, int send, int recv, ReduceOp op, int root) {
    checkNotBuilt();
    checkHandle(send);
    checkHandle(recv);
    calls.add(new Call(calls.size(), step, collective, send, recv, op, root));
  }

  private void checkHandle(int handle) {
    if (handle < 0 || handle >= buffers.size()) {
      throw new IllegalArgumentException(
          "plan " + planName + ": unknown buffer handle " + handle + "; handles are what buffer(...) returned (0.."
              + (buffers.size() - 1) + ")");
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
   * Checks every relation, lays out and allocates the plan-owned buffers, builds the schedule
   * (coalescing where the layout allows), compares the plan's fingerprint across the ranks (see {@link
   * #fingerprintCheck}) and compiles it for the communicator's backend.
   *
   * @throws dev.commplan.runtime.PlanMismatchException on every rank, if the ranks built different plans
   * @throws PlanBuildException naming the field, the counts, the ranks and the fix
   */
  public Plan build() {
    checkNotBuilt();
    built = true;
    int ranks = comm.size();
    List<Call> ordered = new ArrayList<>(calls);
    ordered.sort(Comparator.comparingInt(Call::step).thenComparingInt(Call::order));

    DeviceMemory owned = null;
    try {
      // A failure here is held until the fingerprint has been exchanged: the exchange is collective, so a
      // rank that failed alone and left would leave the others waiting in it.
      RuntimeException failure = null;
      long ownedBytes = 0;
      Buffer[] views = new Buffer[buffers.size()];
      Schedule schedule = null;
      try {
        for (Call call : calls) {
          checkCall(call, ranks);
        }
        long[] offsets = layOut(ordered);
        for (Declared d : buffers) {
          if (d.bound() == null) {
            ownedBytes = Math.max(ownedBytes, offsets[d.handle()] + d.count() * d.type().byteSize());
          }
        }
        owned = ownedBytes > 0 ? DeviceMemory.allocate(comm, ownedBytes) : null;
        for (Declared d : buffers) {
          views[d.handle()] =
              d.bound() != null ? d.bound() : Buffer.view(d.type(), owned, offsets[d.handle()], d.count());
        }
        checkNoRaces(ordered, views);
        schedule = schedule(ordered, views, ranks);
      } catch (RuntimeException e) {
        failure = e;
      }
      if (fingerprintCheck && ranks > 1) { // one rank has no one to disagree with: nothing rendered or sent
        try {
          fingerprint(ordered, schedule, failure).check(comm);
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
      List<String> fields = buffers.stream().map(Declared::field).toList();
      boolean[] bound = new boolean[buffers.size()];
      for (Declared d : buffers) {
        bound[d.handle()] = d.bound() != null;
      }
      String description = Plan.describe(schedule, comm, fields, bound, views, intoByField(), ownedBytes);
      int[][][] access = accessByStep(ordered);
      return new Plan(planName, comm, schedule, compiled, views, fields, bound, owned, description,
          hostAccessGuard, access[0], access[1]);
    } catch (RuntimeException | Error e) {
      if (owned != null) {
        owned.close();
      }
      throw e;
    }
  }

  /**
   * For the host-access guard, per step in ascending order (the schedule's): {@code [0][step]} the handles
   * the step writes (receive sides, in-place buffers), {@code [1][step]} those it only reads.
   */
  private int[][][] accessByStep(List<Call> ordered) {
    Map<Integer, Set<Integer>> written = new TreeMap<>();
    Map<Integer, Set<Integer>> read = new TreeMap<>();
    for (Call c : ordered) {
      written.computeIfAbsent(c.step(), s -> new java.util.TreeSet<>()).add(c.recv());
      read.computeIfAbsent(c.step(), s -> new java.util.TreeSet<>()).add(c.send());
    }
    int steps = written.size();
    int[][][] out = new int[2][steps][];
    int i = 0;
    for (int step : written.keySet()) {
      Set<Integer> w = written.get(step);
      out[0][i] = w.stream().mapToInt(Integer::intValue).toArray();
      out[1][i] = read.get(step).stream().filter(h -> !w.contains(h)).mapToInt(Integer::intValue).toArray();
      i++;
    }
    return out;
  }

  /**
   * The canonical rendering compared across ranks: a header, each declared collective in execution
   * order, each NCCL call of the schedule (if this rank got that far), and this rank's build failure.
   */
  private PlanFingerprint fingerprint(List<Call> ordered, Schedule schedule, RuntimeException failure) {
    List<String> lines = new ArrayList<>();
    lines.add("plan " + planName + " on " + comm.size() + " ranks");
    for (int i = 0; i < ordered.size(); i++) {
      Call c = ordered.get(i);
      Declared send = buffers.get(c.send());
      StringBuilder line = new StringBuilder(PlanFingerprint.OP_PREFIX).append(i + 1).append(": step ")
          .append(c.step()).append(' ').append(annotationName(c));
      if (c.op() != null) {
        line.append("(op = ").append(c.op()).append(')');
      } else if (c.collective() == Collective.BROADCAST) {
        line.append("(root = ").append(c.root()).append(')');
      }
      line.append(' ').append(send.field()).append(' ').append(send.type()).append('[').append(send.count()).append(']');
      if (!c.inPlace()) {
        Declared recv = buffers.get(c.recv());
        line.append(" -> ").append(recv.field()).append(' ').append(recv.type()).append('[').append(recv.count())
            .append(']');
      }
      lines.add(line.toString());
    }
    if (schedule != null) {
      int k = 0;
      for (Step step : schedule.steps()) {
        for (CollectiveCall call : step.calls()) {
          lines.add(PlanFingerprint.CALL_PREFIX + ++k + ": step " + step.number() + " " + call.collective().label()
              + " " + call.dataType() + (call.op() != null ? " " + call.op() : "")
              + (call.collective() == Collective.BROADCAST ? " root " + call.root() : "") + ", count "
              + call.count() + (call.inPlace() ? ", in place: " : ", out of place: ")
              + String.join(", ", call.fields()));
        }
      }
    }
    if (failure != null) {
      String message = String.valueOf(failure.getMessage());
      int newline = message.indexOf('\n');
      lines.add(PlanFingerprint.FAILED_PREFIX + failure.getClass().getSimpleName() + ": "
          + (newline < 0 ? message : message.substring(0, newline)));
    }
    return new PlanFingerprint(planName, lines);
  }

  // ---- Checks -------------------------------------------------------------------------------------

  private void checkCall(Call call, int ranks) {
    Declared send = buffers.get(call.send());
    Declared recv = buffers.get(call.recv());
    String where = "plan " + planName + ": " + annotation(call) + " on field '" + send.field() + "'";
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
  private void checkNoRaces(List<Call> ordered, Buffer[] views) {
    for (int i = 0; i < ordered.size(); i++) {
      Call a = ordered.get(i);
      if (!a.inPlace() && overlaps(views[a.send()], views[a.recv()])) {
        throw new PlanBuildException(
            "plan " + planName + ": " + annotation(a) + " on field '" + field(a.send()) + "': the buffers bound to '"
                + field(a.send()) + "' and '" + field(a.recv()) + "' overlap; out of place, they must be disjoint"
                + " (or the same buffer, for in place)");
      }
      for (int j = 0; j < ordered.size(); j++) {
        Call b = ordered.get(j);
        if (i == j || a.step() != b.step()) {
          continue;
        }
        boolean writesWhatBReads = overlaps(views[a.recv()], views[b.send()]);
        boolean bothWrite = j > i && overlaps(views[a.recv()], views[b.recv()]);
        if (writesWhatBReads || bothWrite) {
          throw new PlanBuildException(
              "plan " + planName + ", step " + a.step() + ": " + annotation(a) + " on field '" + field(a.send())
                  + "' writes '" + field(a.recv()) + "', which overlaps '"
                  + field(writesWhatBReads ? b.send() : b.recv()) + "', which " + annotation(b) + " on field '"
                  + field(b.send()) + "' " + (writesWhatBReads ? "reads" : "writes")
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

  // ---- Layout -------------------------------------------------------------------------------------

  private record LayoutKey(int step, Collective collective, DataType type, ReduceOp op, int root, boolean inPlace) {
    static LayoutKey of(Call c, DataType type) {
      return new LayoutKey(c.step(), c.collective(), type, c.op(), c.root(), c.inPlace());
    }
  }

  /** Byte offsets of the plan-owned buffers in the plan's one allocation, indexed by handle. */
  private long[] layOut(List<Call> ordered) {
    Map<LayoutKey, List<Call>> groups = new LinkedHashMap<>();
    for (Call c : ordered) {
      groups.computeIfAbsent(LayoutKey.of(c, buffers.get(c.send()).type()), k -> new ArrayList<>()).add(c);
    }
    long[] offsets = new long[buffers.size()];
    Set<Integer> placed = new HashSet<>();
    long end = 0;
    for (List<Call> group : groups.values()) {
      group.sort(Comparator.comparingInt(Call::send));
      end = placeBlock(group.stream().map(Call::send).toList(), offsets, placed, end);
      if (!group.getFirst().inPlace()) {
        end = placeBlock(group.stream().map(Call::recv).toList(), offsets, placed, end);
      }
    }
    for (Declared d : buffers) {
      end = placeBlock(List.of(d.handle()), offsets, placed, end);
    }
    return offsets;
  }

  /** Places the not yet placed plan-owned buffers of {@code handles} back to back in a new aligned block. */
  private long placeBlock(List<Integer> handles, long[] offsets, Set<Integer> placed, long end) {
    long cursor = alignUp(end);
    boolean any = false;
    for (int handle : handles) {
      Declared d = buffers.get(handle);
      if (d.bound() != null || !placed.add(handle)) {
        continue;
      }
      offsets[handle] = cursor;
      cursor = Math.addExact(cursor, Math.multiplyExact(d.count(), (long) d.type().byteSize()));
      any = true;
    }
    return any ? cursor : end;
  }

  private static long alignUp(long offset) {
    return (offset + BLOCK_ALIGNMENT - 1) / BLOCK_ALIGNMENT * BLOCK_ALIGNMENT;
  }

  // ---- Schedule -----------------------------------------------------------------------------------

  private record CallKey(Collective collective, DataType type, ReduceOp op, int root, boolean inPlace) {}

  private Schedule schedule(List<Call> ordered, Buffer[] views, int ranks) {
    Map<Integer, List<Call>> bySteps = new TreeMap<>();
    for (Call c : ordered) {
      bySteps.computeIfAbsent(c.step(), s -> new ArrayList<>()).add(c);
    }
    List<Step> steps = new ArrayList<>();
    for (Map.Entry<Integer, List<Call>> step : bySteps.entrySet()) {
      Map<CallKey, List<Call>> byKey = new LinkedHashMap<>();
      for (Call c : step.getValue()) {
        CallKey key = new CallKey(c.collective(), views[c.send()].dataType(), c.op(), c.root(), c.inPlace());
        byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(c);
      }
      List<CollectiveCall> out = new ArrayList<>();
      for (List<Call> run : byKey.values()) {
        run.sort(Comparator.comparingInt(Call::send));
        coalesce(run, views, ranks, out);
      }
      steps.add(new Step(step.getKey(), out));
    }
    return new Schedule(planName, ranks, steps);
  }

  /** Emits the calls of one key, merging AllReduce/Broadcast calls whose both sides follow on in memory. */
  private void coalesce(List<Call> run, Buffer[] views, int ranks, List<CollectiveCall> out) {
    boolean mergeable = run.getFirst().collective() == Collective.ALL_REDUCE
        || run.getFirst().collective() == Collective.BROADCAST;
    int first = 0;
    while (first < run.size()) {
      int last = first;
      long count = views[run.get(first).send()].length();
      while (mergeable && last + 1 < run.size()
          && followsOn(views[run.get(last).send()], views[run.get(last + 1).send()])
          && followsOn(views[run.get(last).recv()], views[run.get(last + 1).recv()])) {
        last++;
        count += views[run.get(last).send()].length();
      }
      List<String> fields = run.subList(first, last + 1).stream().map(c -> field(c.send())).toList();
      out.add(call(run.get(first), views, ranks, count, fields));
      first = last + 1;
    }
  }

  private static boolean followsOn(Buffer previous, Buffer next) {
    return previous.memory() == next.memory()
        && previous.byteOffset() + previous.byteSize() == next.byteOffset();
  }

  /** The NCCL call for {@code c} (the first of a merged run), with NCCL's count and in-place offsets. */
  private CollectiveCall call(Call c, Buffer[] views, int ranks, long count, List<String> fields) {
    Buffer send = views[c.send()];
    Buffer recv = views[c.recv()];
    DataType type = send.dataType();
    long sendOffset = send.byteOffset();
    long recvOffset = recv.byteOffset();
    long ncclCount = count;
    int rank = comm.rank();
    switch (c.collective()) {
      case ALL_GATHER -> {
        if (c.inPlace()) {
          ncclCount = count / ranks;
          sendOffset = recvOffset + rank * ncclCount * type.byteSize();
        }
      }
      case REDUCE_SCATTER -> {
        ncclCount = c.inPlace() ? count / ranks : recv.length();
        if (c.inPlace()) {
          recvOffset = sendOffset + rank * ncclCount * type.byteSize();
        }
      }
      case ALL_REDUCE, BROADCAST -> {}
    }
    return new CollectiveCall(c.collective(), type, c.op(), c.collective() == Collective.BROADCAST ? c.root() : -1,
        send.memory(), sendOffset, recv.memory(), recvOffset, ncclCount, fields, c.inPlace());
  }

  private Map<String, String> intoByField() {
    Map<String, String> into = new HashMap<>();
    for (Call c : calls) {
      if (!c.inPlace()) {
        into.put(field(c.send()) + "@" + c.step(), field(c.recv()));
      }
    }
    return into;
  }

  private String field(int handle) {
    return buffers.get(handle).field();
  }

  private static String annotationName(Call c) {
    return switch (c.collective()) {
      case ALL_REDUCE -> "@AllReduce";
      case BROADCAST -> "@Broadcast";
      case ALL_GATHER -> "@AllGather";
      case REDUCE_SCATTER -> "@ReduceScatter";
    };
  }

  private String annotation(Call c) {
    String name = annotationName(c);
    List<String> attributes = new ArrayList<>();
    if (c.op() != null) {
      attributes.add("op = " + c.op());
    }
    if (c.collective() == Collective.BROADCAST) {
      attributes.add("root = " + c.root());
    }
    if (!c.inPlace()) {
      attributes.add("into = \"" + field(c.recv()) + "\"");
    }
    if (c.step() != 0) {
      attributes.add("step = " + c.step());
    }
    return attributes.isEmpty() ? name : name + "(" + String.join(", ", attributes) + ")";
  }
}
