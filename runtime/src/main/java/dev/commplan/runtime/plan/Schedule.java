package dev.commplan.runtime.plan;

import java.util.List;
import java.util.Locale;

/**
 * What a built plan issues: steps in ascending order, each a group of NCCL calls. Backends compile it
 * once ({@code Communicator#compile}); {@code describe()} renders it for people.
 *
 * @param planName the annotated class's qualified name
 * @param ranks the communicator's size the schedule was built for
 * @param steps the steps, in ascending order of their numbers
 */
public record Schedule(String planName, int ranks, List<Step> steps) {
  /**
   * Copies {@code steps}, so that the schedule is immutable.
   *
   * @param planName the annotated class's qualified name
   * @param ranks the communicator's size the schedule was built for
   * @param steps the steps, in ascending order of their numbers
   */
  public Schedule {
    steps = List.copyOf(steps);
  }

  /**
   * The schedule as a Graphviz DOT graph, for docs: one box per step (one NCCL group), one node per NCCL
   * call with its collective, type, op or root, count, bytes sent per rank and the fields it covers;
   * edges give the order steps run in. Render with {@code dot -Tsvg}.
   *
   * @return the DOT source, one graph
   */
  public String toDot() {
    StringBuilder dot = new StringBuilder();
    dot.append("digraph \"").append(escape(planName)).append("\" {\n")
        .append("  label=\"").append(escape(planName)).append(" on ").append(ranks).append(ranks == 1 ? " rank" : " ranks")
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
        + (call.collective().pointToPoint() ? (call.collective() == dev.commplan.model.Collective.SEND ? " to " : " from ")
            + (call.peer() < 0 ? "no one" : "rank " + call.peer()) : "");
    return String.format(Locale.ROOT, "%s %s%s%s\ncount %,d, %,d B per rank\n%s",
        call.collective().label(), call.dataType(), detail, call.inPlace() ? " (in place)" : "",
        call.count(), call.sendBytes(ranks), String.join(", ", call.fields()));
  }

  private static String escape(String text) {
    return text.replace("\\", "\\\\").replace("\"", "\\\"").replace("\n", "\\n");
  }
}
