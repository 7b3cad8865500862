package dev.commplan.runtime.plan;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Turns the declared calls, on the memory they use, into the {@link Schedule}: one {@link Step} per
 * step number, ascending; within it, calls with the same (collective, data type, op, root, in place), in
 * declaration order, whose send regions and receive regions both follow on from the previous call's in
 * the same memory block, become one NCCL call if the collective is {@linkplain Collective#elementwise()
 * element-wise} (one call over the concatenation means the separate calls). Adjacent user-bound views of
 * one block are merged too. Each call gets NCCL's count and, in place, NCCL's offsets ({@link
 * Collective#inPlace()}).
 *
 * <p>A step's sends and receives come after its collectives, in the order that pairs them ({@link
 * PointToPointPairs#issueOrder}), one call each, with the peer resolved for this rank (-1: none here).
 */
final class ScheduleBuilder {
  private record CallKey(Collective collective, DataType type, ReduceOp op, int root, boolean inPlace, int group) {}

  private final Declarations declarations;
  private final Buffer[] views;
  private final List<Schedule.Group> groups;
  /** This rank's rank in each group, and each group's size, by group index. */
  private final int[] rank;
  private final int[] ranks;

  private ScheduleBuilder(Declarations declarations, Buffer[] views, List<Schedule.Group> groups) {
    this.declarations = declarations;
    this.views = views;
    this.groups = groups;
    this.rank = groups.stream().mapToInt(g -> g.communicator().rank()).toArray();
    this.ranks = groups.stream().mapToInt(g -> g.communicator().size()).toArray();
  }

  /**
   * The schedule of {@code ordered} (execution order) for this rank: its rank and size in each group are
   * its communicators'; {@code worldRanks} is the plan's communicator's size.
   */
  static Schedule build(String planName, Declarations declarations, List<Declarations.Call> ordered, Buffer[] views,
      int worldRanks, List<Schedule.Group> groups, long bucketBytes, int[] bucketOfCall) {
    return new ScheduleBuilder(declarations, views, groups).schedule(planName, worldRanks, ordered, bucketBytes,
        bucketOfCall);
  }

  private Schedule schedule(String planName, int worldRanks, List<Declarations.Call> ordered, long bucketBytes,
      int[] bucketOfCall) {
    Map<Integer, List<Declarations.Call>> bySteps = new TreeMap<>();
    for (Declarations.Call c : ordered) {
      bySteps.computeIfAbsent(c.step(), s -> new ArrayList<>()).add(c);
    }
    List<Step> steps = new ArrayList<>();
    for (Map.Entry<Integer, List<Declarations.Call>> step : bySteps.entrySet()) {
      steps.add(new Step(step.getKey(), calls(step.getValue())));
    }
    List<Schedule.Bucket> buckets = bucketBytes > 0
        ? Buckets.cut(declarations, bySteps.values(), views, groups, bucketBytes, this::calls, bucketOfCall)
        : List.of();
    return new Schedule(planName, worldRanks, steps, groups, buckets);
  }

  /**
   * The calls of {@code declared}, calls of one step (or of one bucket of it): element-wise calls of one key
   * coalesced where both sides follow on in memory, then the sends and receives in the order that pairs them.
   */
  private List<CollectiveCall> calls(List<Declarations.Call> declared) {
    Map<CallKey, List<Declarations.Call>> byKey = new LinkedHashMap<>();
    for (Declarations.Call c : declared) {
      if (c.collective().pointToPoint()) {
        continue; // after the collectives, in the order that pairs them (below)
      }
      CallKey key = new CallKey(c.collective(), views[c.send()].dataType(), c.op(), c.root(), c.inPlace(), c.group());
      byKey.computeIfAbsent(key, k -> new ArrayList<>()).add(c);
    }
    List<CollectiveCall> out = new ArrayList<>();
    for (List<Declarations.Call> run : byKey.values()) {
      run.sort(Comparator.comparingInt(Declarations.Call::send));
      coalesce(run, out);
    }
    for (Declarations.Call c : PointToPointPairs.issueOrder(declarations, declared)) {
      Buffer buffer = views[c.send()];
      out.add(CollectiveCall.pointToPoint(c.collective(), buffer.dataType(), buffer.memory(), buffer.byteOffset(),
          buffer.length(), c.peer().resolve(rank[c.group()], ranks[c.group()]), c.peer(),
          List.of(declarations.name(c.send())), c.group()));
    }
    return out;
  }

  /** Emits the calls of one key, merging element-wise calls whose both sides follow on in memory. */
  private void coalesce(List<Declarations.Call> run, List<CollectiveCall> out) {
    boolean mergeable = run.getFirst().collective().elementwise();
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
      List<String> fields = run.subList(first, last + 1).stream().map(c -> declarations.name(c.send())).toList();
      out.add(call(run.get(first), count, fields));
      first = last + 1;
    }
  }

  private static boolean followsOn(Buffer previous, Buffer next) {
    return previous.memory() == next.memory()
        && previous.byteOffset() + previous.byteSize() == next.byteOffset();
  }

  /**
   * The NCCL call for {@code c} (the first of a merged run of {@code count} send elements): out of place,
   * NCCL's count from the count rule; in place, the whole buffer is one side and the other is this rank's
   * slice of it.
   */
  private CollectiveCall call(Declarations.Call c, long count, List<String> fields) {
    Buffer send = views[c.send()];
    Buffer recv = views[c.recv()];
    DataType type = send.dataType();
    long sendOffset = send.byteOffset();
    long recvOffset = recv.byteOffset();
    Collective collective = c.collective();
    int size = ranks[c.group()];
    long ncclCount = c.inPlace() ? count : collective.counts().ncclCount(count, recv.length(), size);
    if (c.inPlace() && collective.inPlace().sliced()) {
      ncclCount = count / size;
      long slice = rank[c.group()] * ncclCount * type.byteSize();
      switch (collective.inPlace()) {
        case SEND_IS_RANK_SLICE_OF_RECV -> sendOffset = recvOffset + slice;
        case RECV_IS_RANK_SLICE_OF_SEND -> recvOffset = sendOffset + slice;
        default -> { }
      }
    }
    return new CollectiveCall(collective, type, c.op(), collective.hasRoot() ? c.root() : -1,
        send.memory(), sendOffset, recv.memory(), recvOffset, ncclCount, fields, c.inPlace(), -1, null, c.group());
  }
}
