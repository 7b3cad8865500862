package dev.commplan.runtime.plan;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.Mesh;
import java.util.List;
import java.util.Locale;
import java.util.Objects;

/**
 * What a built plan issues: steps in ascending order, each a group of calls (calls that must not wait for
 * each other, issued together: on NCCL, one NCCL group). Backends compile it once ({@link
 * CompiledSchedule.Compiler#compile}); {@code describe()} renders it for people.
 *
 * <p>A bucketed plan ({@link PlanBuilder#bucketBytes}) also lists its {@link #buckets()}: the same calls cut
 * per step and group into buckets, which its ready/finish rounds enqueue one by one; {@code execute} still
 * issues the steps.
 *
 * <p>A plan over a {@link Mesh} runs calls over several communicators: {@link
 * #groups()} lists them (index 0 is the plan's own communicator, the mesh's world; the others are the
 * axes the plan names), and each call says which it runs over ({@link CollectiveCall#group()}). A step's
 * calls over every group are still issued together, in one group of the backend.
 *
 * @param planName the annotated class's qualified name
 * @param ranks the communicator's size the schedule was built for (the world's, for a mesh)
 * @param steps the steps, in ascending order of their numbers
 * @param groups the communicators the calls run over, the plan's own first; empty for a schedule whose
 *     calls all run over the communicator that compiles it
 * @param buckets a bucketed plan's buckets ({@link PlanBuilder#bucketBytes}) in the order every rank
 *     enqueues them; empty for a plan that is not bucketed
 */
public record Schedule(String planName, int ranks, List<Step> steps, List<Group> groups, List<Bucket> buckets) {
  /**
   * A bucket of a bucketed plan: calls of one step over one group, cut in reverse declaration order (the
   * order a backward pass produces gradients), enqueued as a unit once every field it sends was marked ready
   * ({@link Plan#ready}) and every bucket before it was enqueued.
   *
   * @param index its place in the order every rank enqueues the buckets, from 0
   * @param step the step its calls belong to
   * @param group the group its calls run over ({@link #groups()}: 0 for the plan's own communicator)
   * @param axis the mesh axis of {@code group}, or {@code ""} for the plan's own communicator
   * @param fields the fields its calls send, each once, in reverse declaration order: what {@link Plan#ready}
   *     must mark before it is enqueued
   * @param bytes the bytes of those fields (element count times element size), what {@code bucketBytes} caps
   * @param calls its calls, coalesced where the layout allows, as a step's are
   */
  public record Bucket(int index, int step, int group, String axis, List<String> fields, long bytes,
      List<CollectiveCall> calls) {
    /**
     * Copies the lists, so that the bucket is immutable.
     *
     * @param index its place in the order every rank enqueues the buckets, from 0
     * @param step the step its calls belong to
     * @param group the group its calls run over
     * @param axis the mesh axis of {@code group}, or {@code ""}
     * @param fields the fields its calls send, in reverse declaration order
     * @param bytes the bytes of those fields
     * @param calls its calls
     */
    public Bucket {
      Objects.requireNonNull(axis, "axis");
      fields = List.copyOf(fields);
      calls = List.copyOf(calls);
    }
  }

  /**
   * A communicator a schedule's calls run over.
   *
   * @param axis the mesh axis ({@code "tp"}), or {@code ""} for the plan's own communicator
   * @param communicator this rank's communicator of that group
   */
  public record Group(String axis, Communicator communicator) {
    /**
     * Checks that both are given.
     *
     * @param axis the mesh axis, or {@code ""} for the plan's own communicator
     * @param communicator this rank's communicator of that group
     */
    public Group {
      Objects.requireNonNull(axis, "axis");
      Objects.requireNonNull(communicator, "communicator");
    }
  }

  /**
   * Copies the lists, so that the schedule is immutable.
   *
   * @param planName the annotated class's qualified name
   * @param ranks the communicator's size the schedule was built for
   * @param steps the steps, in ascending order of their numbers
   * @param groups the communicators the calls run over, the plan's own first (or none)
   * @param buckets the buckets of a bucketed plan, in enqueue order (or none)
   */
  public Schedule {
    steps = List.copyOf(steps);
    groups = List.copyOf(groups);
    buckets = List.copyOf(buckets);
  }

  /**
   * A schedule without buckets.
   *
   * @param planName the annotated class's qualified name
   * @param ranks the communicator's size the schedule was built for
   * @param steps the steps, in ascending order of their numbers
   * @param groups the communicators the calls run over, the plan's own first (or none)
   */
  public Schedule(String planName, int ranks, List<Step> steps, List<Group> groups) {
    this(planName, ranks, steps, groups, List.of());
  }

  /**
   * A schedule whose calls all run over the communicator that compiles it.
   *
   * @param planName the annotated class's qualified name
   * @param ranks the communicator's size the schedule was built for
   * @param steps the steps, in ascending order of their numbers
   */
  public Schedule(String planName, int ranks, List<Step> steps) {
    this(planName, ranks, steps, List.of());
  }

  /**
   * The communicator {@code call} runs over: {@code own} (the communicator compiling the schedule) for group
   * 0, else that group's. Backends call it when they compile.
   *
   * @param call a call of this schedule
   * @param own the communicator compiling the schedule
   * @return the communicator to issue {@code call} on
   * @throws IllegalArgumentException if the call names a group the schedule does not have
   */
  public Communicator communicatorOf(CollectiveCall call, Communicator own) {
    int group = call.group();
    if (group == 0) {
      return own;
    }
    if (group >= groups.size()) {
      throw new IllegalArgumentException(planName + ": a call runs over group " + group + ", but the schedule has "
          + groups.size() + " groups");
    }
    return groups.get(group).communicator();
  }

  /**
   * {@return the mesh axis {@code call} runs over, or {@code ""} for the plan's own communicator}
   *
   * @param call a call of this schedule
   */
  public String axisOf(CollectiveCall call) {
    return call.group() == 0 || call.group() >= groups.size() ? "" : groups.get(call.group()).axis();
  }

  /**
   * {@return the size of the group {@code call} runs over: {@link #ranks()} for the plan's own communicator}
   *
   * @param call a call of this schedule
   */
  public int sizeOf(CollectiveCall call) {
    return call.group() == 0 || call.group() >= groups.size() ? ranks : groups.get(call.group()).communicator().size();
  }

  /**
   * The schedule as a Graphviz DOT graph, for docs: one box per step (one group), one node per call with
   * its collective, type, op or root, count, bytes sent per rank and the fields it covers; edges give the
   * order steps run in. Render with {@code dot -Tsvg}.
   *
   * @return the DOT source, one graph
   */
  public String toDot() {
    StringBuilder dot = new StringBuilder();
    dot.append("digraph \"").append(escape(planName)).append("\" {\n")
        .append("  label=\"").append(escape(planName)).append(" on ").append(ranks)
        .append(ranks == 1 ? " rank" : " ranks")
        .append("\"; labelloc=t; fontname=Helvetica; compound=true;\n")
        .append("  node [shape=box, style=rounded, fontname=Helvetica, fontsize=10];\n");
    String previousLast = null;
    for (int s = 0; s < steps.size(); s++) {
      Step step = steps.get(s);
      dot.append("  subgraph cluster_").append(s).append(" {\n")
          .append("    label=\"step ").append(step.number()).append(": ").append(step.calls().size())
          .append(step.calls().size() == 1 ? " call" : " calls").append(" in one group\"; style=dashed;\n");
      String first = null;
      String last = null;
      for (int c = 0; c < step.calls().size(); c++) {
        CollectiveCall call = step.calls().get(c);
        String node = "s" + s + "c" + c;
        dot.append("    ").append(node).append(" [label=\"").append(escape(label(call))).append("\"];\n");
        if (first == null) {
          first = node;
        }
        last = node;
      }
      dot.append("  }\n");
      if (previousLast != null && first != null) {
        dot.append("  ").append(previousLast).append(" -> ").append(first)
            .append(" [ltail=cluster_").append(s - 1).append(", lhead=cluster_").append(s).append("];\n");
      }
      if (last != null) {
        previousLast = last;
      }
    }
    return dot.append("}\n").toString();
  }

  private String label(CollectiveCall call) {
    String detail = (call.op() != null ? " " + call.op() : "")
        + (call.collective().hasRoot() ? " root " + call.root() : "")
        + (call.collective().pointToPoint() ? (call.collective() == Collective.SEND ? " to " : " from ")
            + (call.peer() < 0 ? "no one" : "rank " + call.peer()) : "");
    String axis = axisOf(call);
    return String.format(Locale.ROOT, "%s %s%s%s%s\ncount %,d, %,d B per rank\n%s",
        call.collective().label(), call.dataType(), detail, call.inPlace() ? " (in place)" : "",
        axis.isEmpty() ? "" : "\nover " + axis,
        call.count(), call.sendBytes(sizeOf(call)), String.join(", ", call.fields()));
  }

  private static String escape(String text) {
    return text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
