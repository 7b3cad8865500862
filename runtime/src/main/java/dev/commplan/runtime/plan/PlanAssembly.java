package dev.commplan.runtime.plan;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.agreement.FiniteVerdict;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What {@link PlanBuilder#build()} runs, one stage after another, on what the builder was told: {@link
 * PlanRules} (each declared call, on the size of the group it runs over), {@link BufferLayout}, {@link
 * PlanRules} again on that memory (races and overlaps), {@link ScheduleBuilder}, the {@linkplain
 * FingerprintLines fingerprint} compared across the ranks, the backend's compile, and the {@link Plan}
 * with its {@linkplain GuardTables guard tables} and, where it is on, its {@linkplain FiniteChecks finite check}.
 */
final class PlanAssembly {
  private final String planName;
  private final Communicator comm;
  private final List<Schedule.Group> groups;
  private final Declarations declarations;

  PlanAssembly(String planName, Communicator comm, List<Schedule.Group> groups, Declarations declarations) {
    this.planName = planName;
    this.comm = comm;
    this.groups = groups;
    this.declarations = declarations;
  }

  /** The group index of {@code over} in {@code groups}: 0 for "", else the axis's. */
  static int groupIndex(String planName, List<Schedule.Group> groups, String over) {
    Objects.requireNonNull(over, "over");
    for (int g = 0; g < groups.size(); g++) {
      if (groups.get(g).axis().equals(over)) {
        return g;
      }
    }
    throw new IllegalArgumentException("plan " + planName + ": '" + over + "' is not an axis of this plan; its axes"
        + " are " + groups.stream().skip(1).map(Schedule.Group::axis).toList());
  }

  /** The groups of a plan over {@code mesh}'s {@code axes}: the world first, then each axis's communicator. */
  static List<Schedule.Group> groupsOf(String planName, Mesh mesh, String[] axes) {
    List<String> missing = new ArrayList<>();
    for (String axis : axes) {
      if (!mesh.hasAxis(axis)) {
        missing.add(axis);
      }
    }
    if (!missing.isEmpty()) {
      throw new PlanBuildException("plan " + planName + " runs over the axes " + List.of(axes) + ", but the mesh has "
          + mesh.axisNames() + " (no " + String.join(", ", missing) + "): build it on a mesh with every axis the plan"
          + " names (it may have more)");
    }
    List<Schedule.Group> groups = new ArrayList<>();
    groups.add(new Schedule.Group("", mesh.world()));
    for (String axis : axes) {
      groups.add(new Schedule.Group(axis, mesh.axis(axis)));
    }
    return groups;
  }

  /**
   * What the builder was told besides the declarations.
   *
   * @param orderCheck whether the plan's units are compared across the ranks right after each execute (and each
   *     bucket)
   * @param fingerprintCheck whether the build compares the plan's fingerprint across the ranks
   * @param hostAccessGuard whether execute marks the plan's buffers for the host-access guard
   * @param checkFinite whether each floating-point reduction's send data is searched for NaN and infinity, and the
   *     ranks agree, before it goes out ({@link FiniteChecks})
   * @param bucketBytes {@code > 0}: the plan is bucketed, with buckets of at most that many bytes
   * @param commStream where a bucketed plan's buckets are enqueued; null: a stream the plan makes and closes
   */
  record Options(boolean orderCheck, boolean fingerprintCheck, boolean hostAccessGuard, boolean checkFinite,
      long bucketBytes, Stream commStream) {}

  /** What the build's stages made so far, freed where a later stage fails. */
  private static final class Built {
    BufferLayout layout;
    DeviceMemory owned;
    Buffer[] views;
    Schedule schedule;
    int[] bucketOfCall;
    FiniteVerdict verdict;

    void free() {
      if (verdict != null) {
        verdict.close();
      }
      if (owned != null) {
        owned.close();
      }
    }
  }

  /** Builds the plan, as {@code options} say. */
  Plan assemble(Options options) {
    int ranks = comm.size();
    List<Declarations.Call> ordered = declarations.ordered();
    Built built = new Built();
    try {
      // A failure here is held until the fingerprint has been exchanged: the exchange is collective, so a
      // rank that failed alone and left would leave the others waiting in it.
      RuntimeException failure = stages(ordered, options.bucketBytes(), built);
      if (options.fingerprintCheck() && ranks > 1) { // one rank has no one to disagree with: nothing rendered or sent
        try {
          FingerprintLines.render(planName, ranks, options.orderCheck(), options.checkFinite(), declarations, ordered,
              built.schedule, failure).check(comm);
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
      return plan(options, ordered, built);
    } catch (RuntimeException | Error e) {
      built.free();
      throw e;
    }
  }

  /**
   * The stages before the fingerprint: the rules, the layout and its allocation, the races, the schedule.
   *
   * @return what failed on this rank, or null
   */
  private RuntimeException stages(List<Declarations.Call> ordered, long bucketBytes, Built built) {
    built.bucketOfCall = new int[declarations.calls().size()];
    try {
      for (Declarations.Call call : declarations.calls()) {
        PlanRules.checkCall(planName, declarations, call, groups.get(call.group()).communicator().size());
      }
      PeerRules.checkPairs(planName, declarations, ordered);
      built.layout = BufferLayout.of(declarations, ordered);
      built.owned = built.layout.bytes() > 0 ? built.layout.allocate(planName, comm, declarations) : null;
      built.views = built.layout.views(declarations, built.owned);
      PlanRules.checkNoRaces(planName, declarations, ordered, built.views);
      built.schedule = ScheduleBuilder.build(planName, declarations, ordered, built.views, comm.size(), groups,
          bucketBytes, built.bucketOfCall);
      return null;
    } catch (RuntimeException e) {
      return e;
    }
  }

  /** Once the ranks agree: the backend's compile, the description, the guard's marks, the finite check, the plan. */
  private Plan plan(Options options, List<Declarations.Call> ordered, Built built) {
    Schedule schedule = built.schedule;
    Buffer[] views = built.views;
    CompiledSchedule compiled = CompiledSchedule.compile(comm, schedule);
    List<String> names = declarations.fields().stream().map(Declarations.Field::field).toList();
    boolean[] bound = declarations.boundFlags();
    FiniteChecks finite = null;
    int[][] bucketChecks = null;
    if (options.checkFinite()) {
      int[][] stepChecks = FiniteChecks.handles(schedule.steps(), names);
      bucketChecks = FiniteChecks.handles(bucketSteps(schedule.buckets()), names);
      int most = Math.max(FiniteChecks.most(stepChecks), FiniteChecks.most(bucketChecks));
      built.verdict = most > 0 ? FiniteVerdict.of(planName, comm, most) : null;
      finite = new FiniteChecks(planName, compiled, schedule.steps(), stepChecks, views, names, built.verdict);
    }
    String description = PlanDescription.describe(schedule, comm, names, bound, views, declarations.intoByField(),
        built.layout.bytes(), compiled, options.bucketBytes()) + (finite != null ? finite.describe() : "");
    GuardTables access = GuardTables.of(ordered);
    GuardMarks stepMarks = new GuardMarks(planName, schedule.steps().stream().mapToInt(Step::number).toArray(),
        views, names, access.written(), access.read());
    Plan plan = new Plan(planName, comm, schedule, compiled, views, names, bound, built.owned, description,
        options.hostAccessGuard(), options.orderCheck(), stepMarks, finite, built.verdict);
    if (options.bucketBytes() > 0) {
      plan.round(round(plan, schedule.buckets(), views, names, ordered, built.bucketOfCall, options.commStream(),
          bucketChecks, built.verdict));
    }
    return plan;
  }

  /**
   * The rounds of a bucketed plan: its buckets compiled as a schedule of their own (a step per bucket, which
   * the backend labels with the bucket), their guard marks, their finite checks ({@code checks} null: none), and
   * the communication stream.
   */
  private BucketRound round(Plan plan, List<Schedule.Bucket> buckets, Buffer[] views, List<String> names,
      List<Declarations.Call> ordered, int[] bucketOfCall, Stream commStream, int[][] checks, FiniteVerdict verdict) {
    List<Step> steps = bucketSteps(buckets);
    CompiledSchedule compiled = CompiledSchedule.compile(comm, new Schedule(planName, comm.size(), steps, groups));
    GuardTables access = GuardTables.of(ordered, c -> bucketOfCall[c.order()], steps.size());
    GuardMarks marks = new GuardMarks(planName, steps.stream().mapToInt(Step::number).toArray(), views,
        names, access.written(), access.read());
    FiniteChecks finite = checks == null ? null
        : new FiniteChecks(planName, compiled, steps, checks, views, names, verdict);
    boolean owns = commStream == null;
    Stream stream = owns ? comm.newStream() : commStream;
    return new BucketRound(plan, stream, owns, compiled, buckets, names, marks,
        finite != null && finite.any() ? finite : null);
  }

  /** A bucketed plan's buckets as steps, one each, labelled with the bucket: what its rounds' schedule compiles. */
  private static List<Step> bucketSteps(List<Schedule.Bucket> buckets) {
    return buckets.stream().map(b -> new Step(b.step(), b.calls(), b.index())).toList();
  }
}
