package dev.commplan.runtime.plan;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DeviceMemory;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * What {@link PlanBuilder#build()} runs, one stage after another, on what the builder was told: {@link
 * PlanRules} (each declared call, on the size of the group it runs over), {@link BufferLayout}, {@link
 * PlanRules} again on that memory (races and overlaps), {@link ScheduleBuilder}, the {@linkplain
 * FingerprintLines fingerprint} compared across the ranks, the backend's compile, and the {@link Plan}
 * with its {@linkplain GuardTables guard tables}.
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
   * Builds the plan; {@code orderCheck}: its units are compared across the ranks right after each execute (and
   * each bucket); {@code bucketBytes > 0} makes it bucketed, its buckets enqueued on {@code commStream} (null: a
   * stream the plan makes and closes).
   */
  Plan assemble(boolean orderCheck, boolean fingerprintCheck, boolean hostAccessGuard, long bucketBytes,
      Stream commStream) {
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
      int[] bucketOfCall = new int[declarations.calls().size()];
      try {
        for (Declarations.Call call : declarations.calls()) {
          PlanRules.checkCall(planName, declarations, call, groups.get(call.group()).communicator().size());
        }
        PeerRules.checkPairs(planName, declarations, ordered);
        layout = BufferLayout.of(declarations, ordered);
        owned = layout.bytes() > 0 ? layout.allocate(planName, comm, declarations) : null;
        views = layout.views(declarations, owned);
        PlanRules.checkNoRaces(planName, declarations, ordered, views);
        schedule = ScheduleBuilder.build(planName, declarations, ordered, views, ranks, groups, bucketBytes,
            bucketOfCall);
      } catch (RuntimeException e) {
        failure = e;
      }
      if (fingerprintCheck && ranks > 1) { // one rank has no one to disagree with: nothing rendered or sent
        try {
          FingerprintLines.render(planName, ranks, orderCheck, declarations, ordered, schedule, failure).check(comm);
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
      List<String> names = declarations.fields().stream().map(Declarations.Field::field).toList();
      boolean[] bound = declarations.boundFlags();
      String description = PlanDescription.describe(schedule, comm, names, bound, views, declarations.intoByField(),
          layout.bytes(), compiled, bucketBytes);
      GuardTables access = GuardTables.of(ordered);
      GuardMarks stepMarks = new GuardMarks(planName, schedule.steps().stream().mapToInt(Step::number).toArray(),
          views, names, access.written(), access.read());
      Plan plan = new Plan(planName, comm, schedule, compiled, views, names, bound, owned, description,
          hostAccessGuard, orderCheck, stepMarks);
      if (bucketBytes > 0) {
        plan.round(round(plan, schedule, views, names, ordered, bucketOfCall, commStream));
      }
      return plan;
    } catch (RuntimeException | Error e) {
      if (owned != null) {
        owned.close();
      }
      throw e;
    }
  }

  /**
   * The rounds of a bucketed plan: its buckets compiled as a schedule of their own (a step per bucket, which
   * the backend labels with the bucket), their guard marks, and the communication stream.
   */
  private BucketRound round(Plan plan, Schedule schedule, Buffer[] views, List<String> names,
      List<Declarations.Call> ordered, int[] bucketOfCall, Stream commStream) {
    List<Schedule.Bucket> buckets = schedule.buckets();
    List<Step> steps = buckets.stream().map(b -> new Step(b.step(), b.calls(), b.index())).toList();
    CompiledSchedule compiled = CompiledSchedule.compile(comm, new Schedule(planName, comm.size(), steps, groups));
    GuardTables access = GuardTables.of(ordered, c -> bucketOfCall[c.order()], buckets.size());
    GuardMarks marks = new GuardMarks(planName, buckets.stream().mapToInt(Schedule.Bucket::step).toArray(), views,
        names, access.written(), access.read());
    boolean owns = commStream == null;
    Stream stream = owns ? comm.newStream() : commStream;
    return new BucketRound(plan, stream, owns, compiled, buckets, names, marks);
  }
}
