package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.Stream;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

/**
 * A bucketed plan's rules ({@link PlanBuilder#bucketBytes}, {@link PlanBuilder#commStream}) and its buckets,
 * cut once at build ({@link #cut}).
 */
final class Buckets {
  private Buckets() {}

  /**
   * The buckets of a plan: within each step (ascending) and each group, the step's calls in reverse
   * declaration order, a bucket holding consecutive calls whose send fields add up to at most {@code cap}
   * bytes (a larger field is a bucket alone); a step's sends and receives over one group are one bucket
   * whatever their size, since a send and the receive it pairs with must be issued together. Within a step,
   * buckets are ordered by their last-declared call, latest first, so that buckets over different axes
   * interleave in the order a backward pass produces gradients. Each bucket's calls are made as a step's
   * are ({@code calls}: coalesced where the layout allows).
   *
   * @param steps each step's declared calls, ascending by step, each in declaration order
   * @param bucketOfCall filled in: each declared call's bucket, by {@link Declarations.Call#order()}
   */
  static List<Schedule.Bucket> cut(Declarations declarations, Collection<List<Declarations.Call>> steps,
      Buffer[] views, List<Schedule.Group> groups, long cap,
      Function<List<Declarations.Call>, List<CollectiveCall>> calls, int[] bucketOfCall) {
    List<Schedule.Bucket> out = new ArrayList<>();
    for (List<Declarations.Call> step : steps) {
      List<List<Declarations.Call>> cuts = new ArrayList<>();
      Map<Integer, List<Declarations.Call>> open = new LinkedHashMap<>(); // per group, the bucket being filled
      Map<Integer, Long> openBytes = new LinkedHashMap<>();
      Map<Integer, List<Declarations.Call>> transfers = new LinkedHashMap<>(); // per group
      for (Declarations.Call c : step.reversed()) {
        if (c.collective().pointToPoint()) {
          transfers.computeIfAbsent(c.group(), g -> new ArrayList<>()).add(c);
          continue;
        }
        long bytes = views[c.send()].byteSize();
        List<Declarations.Call> bucket = open.get(c.group());
        if (bucket != null && bytes > cap - openBytes.get(c.group())) { // no overflow: the sum so far is <= cap
          cuts.add(bucket);
          bucket = null;
        }
        if (bucket == null) {
          bucket = new ArrayList<>();
          open.put(c.group(), bucket);
          openBytes.put(c.group(), 0L);
        }
        bucket.add(c);
        openBytes.merge(c.group(), bytes, Long::sum);
      }
      cuts.addAll(open.values());
      cuts.addAll(transfers.values());
      cuts.sort(Comparator.comparingInt((List<Declarations.Call> b) -> b.getFirst().order()).reversed());
      for (List<Declarations.Call> bucket : cuts) {
        for (Declarations.Call c : bucket) {
          bucketOfCall[c.order()] = out.size();
        }
        out.add(bucket(out.size(), bucket, declarations, views, groups, calls));
      }
    }
    return out;
  }

  /** Bucket {@code index}, of {@code bucket}'s calls (in reverse declaration order). */
  private static Schedule.Bucket bucket(int index, List<Declarations.Call> bucket, Declarations declarations,
      Buffer[] views, List<Schedule.Group> groups, Function<List<Declarations.Call>, List<CollectiveCall>> calls) {
    Set<String> fields = new LinkedHashSet<>();
    long bytes = 0;
    for (Declarations.Call c : bucket) {
      if (c.collective() != Collective.RECV) { // a receive sends nothing: its buffer is not marked ready
        fields.add(declarations.name(c.send()));
        bytes += views[c.send()].byteSize();
      }
    }
    Declarations.Call first = bucket.getFirst();
    return new Schedule.Bucket(index, first.step(), first.group(), groups.get(first.group()).axis(),
        List.copyOf(fields), bytes, calls.apply(bucket.reversed()));
  }

  /** {@code bytes}, checked: 0 (not bucketed) or more. */
  static long checkBytes(String planName, long bytes) {
    if (bytes < 0) {
      throw new PlanBuildException(RuleId.BAD_BUCKET.tag() + " plan " + planName + ": bucketBytes = " + bytes
          + " is negative; give the most bytes of gradients per bucket (say 25 MiB = 26214400), or 0 for no buckets");
    }
    return bytes;
  }

  /** {@code stream}, checked to be a stream of {@code comm}, the plan's communicator. */
  static Stream checkStream(String planName, Communicator comm, Stream stream) {
    Objects.requireNonNull(stream, "stream");
    if (stream.communicator() != comm) {
      throw new IllegalArgumentException("plan " + planName + ": commStream(" + stream + ") belongs to "
          + stream.communicator() + ", not to the plan's communicator " + comm + " (of a plan over a mesh: the"
          + " mesh's world); make it with newStream() of that communicator");
    }
    return stream;
  }
}
