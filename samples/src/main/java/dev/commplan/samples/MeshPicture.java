package dev.commplan.samples;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeSet;

/**
 * Draws the {@code 3d} sample's plan on its 2x2x2 mesh as an SVG: the eight ranks as a cube (tp across, dp
 * down, pp in depth), and for each call of the plan the ranks it connects, in its axis's colour, with the
 * plan steps on each edge; under it, {@code describe()} of rank 0's plan, each call in its axis's colour.
 * Nothing is drawn by hand: the plan is built on a local cluster of 8 ranks, and every edge comes from a
 * rank's {@link Schedule} — the axis of each call ({@link Schedule#axisOf}), the members of its group
 * (gathered over that group's own communicator) and, for a send, its peer.
 *
 * <p>{@code java -cp samples/target/commplan-samples.jar dev.commplan.samples.MeshPicture docs/img/mesh-3d.svg}
 */
final class MeshPicture {
  static final String MESH = "pp=2,dp=2,tp=2";
  private static final Map<String, String> COLOURS = Map.of("tp", "#d95f02", "dp", "#1b9e77", "pp", "#7570b3");
  private static final int BOX_W = 128;
  private static final int BOX_H = 44;
  /** describe()'s lines are wrapped to this many characters. */
  private static final int DESCRIBE_COLUMNS = 130;

  private MeshPicture() {}

  /** What one rank's plan does: its schedule's calls, with the world ranks of every group, and its describe(). */
  record RankView(int rank, List<Call> calls, String describe) {}

  /**
   * One call on one rank.
   *
   * @param members the world ranks of the call's group, in their order there
   * @param to for a send, the world rank it sends to (-1: no one on this rank); -1 otherwise
   */
  record Call(int step, String axis, Collective collective, String detail, List<Integer> members, int to) {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: MeshPicture FILE.svg (the 3d sample's plan on the mesh " + MESH + ")");
      System.exit(2);
    }
    List<RankView> views = views();
    Path file = Path.of(args[0]);
    if (file.toAbsolutePath().getParent() != null) {
      Files.createDirectories(file.toAbsolutePath().getParent());
    }
    Files.writeString(file, svg(views), StandardCharsets.UTF_8);
    System.out.print(views.getFirst().describe());
    System.out.println("wrote " + file);
  }

  /** Builds the 3d sample's plan on every rank of a local 2x2x2 mesh and reads back what each rank's plan does. */
  static List<RankView> views() {
    MeshShape shape = MeshShape.parse(MESH, ThreeDSample.AXES, "3d");
    try (Cluster cluster = Backends.cluster("local", shape.ranks())) {
      return cluster.call(world -> {
        try (Mesh mesh = shape.build(world);
            ThreeDStepsPlan plan = ThreeDStepsPlan.builder().batch(4).width(ParallelMlp.WIDTH)
                .cols(ParallelMlp.cols(mesh.size("tp"))).build(mesh)) {
          Schedule schedule = plan.schedule();
          List<List<Integer>> members = new ArrayList<>();
          for (Schedule.Group group : schedule.groups()) {
            members.add(worldRanks(group.communicator(), world.rank()));
          }
          List<Call> calls = new ArrayList<>();
          for (Step step : schedule.steps()) {
            for (CollectiveCall call : step.calls()) {
              List<Integer> group = members.get(call.group());
              int to = call.collective() == Collective.SEND && call.peer() >= 0 ? group.get(call.peer()) : -1;
              calls.add(new Call(step.number(), schedule.axisOf(call), call.collective(),
                  call.op() != null ? call.op().name() : "", group, to));
            }
          }
          return new RankView(world.rank(), calls, plan.describe());
        }
      });
    }
  }

  /** The world ranks of {@code group}'s members, in their order there: an all-gather over the group itself. */
  private static List<Integer> worldRanks(Communicator group, int worldRank) {
    try (I32Buffer mine = I32Buffer.allocate(group, 1); I32Buffer all = I32Buffer.allocate(group, group.size())) {
      mine.set(0, worldRank);
      group.allGather(mine, all, group.stream());
      group.stream().synchronize();
      List<Integer> ranks = new ArrayList<>();
      for (int i = 0; i < group.size(); i++) {
        ranks.add(all.get(i));
      }
      return ranks;
    }
  }

  /** An edge of the picture: the steps of the calls between two ranks over one axis. */
  private record Edge(int from, int to, String axis, boolean directed) {}

  static String svg(List<RankView> views) {
    MeshShape shape = MeshShape.parse(MESH, ThreeDSample.AXES, "3d");
    Map<Edge, TreeSet<Integer>> edges = new LinkedHashMap<>();
    Map<String, TreeSet<Integer>> stepsByAxis = new LinkedHashMap<>();
    Map<String, LinkedHashSet<String>> whatByAxis = new LinkedHashMap<>();
    for (RankView view : views) {
      for (Call call : view.calls()) {
        stepsByAxis.computeIfAbsent(call.axis(), a -> new TreeSet<>()).add(call.step());
        whatByAxis.computeIfAbsent(call.axis(), a -> new LinkedHashSet<>())
            .add(call.collective().label() + (call.detail().isEmpty() ? "" : " " + call.detail()));
        if (call.collective() == Collective.SEND) {
          if (call.to() >= 0) {
            edges.computeIfAbsent(new Edge(view.rank(), call.to(), call.axis(), true), e -> new TreeSet<>())
                .add(call.step());
          }
        } else if (!call.collective().pointToPoint()) {
          List<Integer> m = call.members();
          for (int i = 0; i + 1 < m.size(); i++) {
            Edge edge = new Edge(Math.min(m.get(i), m.get(i + 1)), Math.max(m.get(i), m.get(i + 1)), call.axis(), false);
            edges.computeIfAbsent(edge, e -> new TreeSet<>()).add(call.step());
          }
        }
      }
    }
    List<String> legend = new ArrayList<>();
    for (String axis : shape.names()) {
      legend.add(String.format(Locale.ROOT, "%s: %s, %s %s; groups %s", axis, String.join(", ", whatByAxis.get(axis)),
          stepsByAxis.get(axis).size() == 1 ? "step" : "steps", join(stepsByAxis.get(axis)), shape.groupsText(axis)));
    }
    List<String> describe = views.getFirst().describe().lines().toList();
    List<String> axisOfLine = describeAxes(describe, views.getFirst().calls());
    List<String> shown = new ArrayList<>();
    List<String> shownAxis = new ArrayList<>();
    for (int i = 0; i < describe.size(); i++) {
      for (String part : wrap(describe.get(i), DESCRIBE_COLUMNS)) {
        shown.add(part);
        shownAxis.add(axisOfLine.get(i));
      }
    }
    int width = 1000;
    int top = 430;
    int height = top + 30 + 18 * (legend.size() + 1) + 16 * shown.size() + 20;
    StringBuilder svg = new StringBuilder();
    svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
        .append("<!-- Generated by dev.commplan.samples.MeshPicture from the plans' schedules and describe(); do not edit."
            + " -->\n")
        .append(String.format(Locale.ROOT, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\""
            + " viewBox=\"0 0 %d %d\" font-family=\"Helvetica, Arial, sans-serif\" font-size=\"13\">%n", width, height,
            width, height))
        .append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n")
        .append("<defs>\n");
    for (String axis : shape.names()) {
      svg.append(String.format(Locale.ROOT, "  <marker id=\"arrow-%s\" viewBox=\"0 0 10 10\" refX=\"9\" refY=\"5\""
          + " markerWidth=\"7\" markerHeight=\"7\" orient=\"auto-start-reverse\"><path d=\"M 0 0 L 10 5 L 0 10 z\""
          + " fill=\"%s\"/></marker>%n", axis, COLOURS.get(axis)));
    }
    svg.append("</defs>\n");
    svg.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"26\" font-size=\"16\" font-weight=\"bold\">%s on the mesh"
        + " %s: which call runs over which axis</text>%n", escape(planName(views)), escape(shape.toString())));
    for (Map.Entry<Edge, TreeSet<Integer>> e : edges.entrySet()) {
      svg.append(edge(shape, e.getKey(), e.getValue()));
    }
    for (int r = 0; r < shape.ranks(); r++) {
      double[] at = corner(shape, r);
      svg.append(String.format(Locale.ROOT, "<rect x=\"%.0f\" y=\"%.0f\" width=\"%d\" height=\"%d\" rx=\"6\""
          + " fill=\"white\" stroke=\"#333\"/>%n", at[0], at[1], BOX_W, BOX_H));
      svg.append(String.format(Locale.ROOT, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-weight=\"bold\">rank"
          + " %d</text>%n", at[0] + BOX_W / 2.0, at[1] + 18, r));
      svg.append(String.format(Locale.ROOT, "<text x=\"%.0f\" y=\"%.0f\" text-anchor=\"middle\" font-size=\"11\">%s"
          + "</text>%n", at[0] + BOX_W / 2.0, at[1] + 35, escape(shape.coordinates(r))));
    }
    int y = top + 10;
    svg.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\">Edges: the ranks each call connects, in its axis's"
        + " colour, with the plan's steps (a send is an arrow to its peer):</text>%n", y));
    for (int i = 0; i < legend.size(); i++) {
      y += 18;
      String axis = shape.names().get(i);
      svg.append(String.format(Locale.ROOT, "<text x=\"32\" y=\"%d\" fill=\"%s\">%s</text>%n", y, COLOURS.get(axis),
          escape(legend.get(i))));
    }
    y += 26;
    svg.append(String.format(Locale.ROOT, "<text x=\"20\" y=\"%d\">describe() of rank 0's plan:</text>%n", y));
    for (int i = 0; i < shown.size(); i++) {
      y += 16;
      String colour = shownAxis.get(i) == null ? "#333" : COLOURS.get(shownAxis.get(i));
      svg.append(String.format(Locale.ROOT, "<text x=\"32\" y=\"%d\" font-family=\"Menlo, Consolas, monospace\""
          + " font-size=\"11.5\" fill=\"%s\" xml:space=\"preserve\">%s</text>%n", y, colour, escape(shown.get(i))));
    }
    return svg.append("</svg>\n").toString();
  }

  /** Per line of describe(): the axis of the call it shows (its calls are listed in the schedule's order), or null. */
  static List<String> describeAxes(List<String> describe, List<Call> calls) {
    List<String> axes = new ArrayList<>();
    int next = 0;
    boolean inSteps = false;
    for (String line : describe) {
      if (line.startsWith("  step ")) {
        inSteps = true;
        axes.add(null);
      } else if (inSteps && line.startsWith("    ")) {
        if (next >= calls.size()) {
          throw new IllegalStateException("describe() shows more calls than the schedule has (" + calls.size() + ")");
        }
        axes.add(calls.get(next++).axis());
      } else {
        axes.add(null);
      }
    }
    if (next != calls.size()) {
      throw new IllegalStateException("describe() shows " + next + " calls, the schedule has " + calls.size());
    }
    return axes;
  }

  private static String planName(List<RankView> views) {
    String first = views.getFirst().describe().lines().findFirst().orElse("plan ?");
    String name = first.substring("plan ".length(), first.indexOf(':'));
    return name.substring(name.lastIndexOf('.') + 1);
  }

  /** The top-left corner of rank r's box: tp across, dp down, pp in depth (up and to the right). */
  private static double[] corner(MeshShape shape, int r) {
    int pp = shape.coordinate(r, "pp");
    int dp = shape.coordinate(r, "dp");
    int tp = shape.coordinate(r, "tp");
    return new double[] {40 + 330 * tp + 175 * pp, 170 + 200 * dp - 110 * pp};
  }

  private static String edge(MeshShape shape, Edge edge, TreeSet<Integer> steps) {
    double[] a = corner(shape, edge.from());
    double[] b = corner(shape, edge.to());
    double ax = a[0] + BOX_W / 2.0;
    double ay = a[1] + BOX_H / 2.0;
    double bx = b[0] + BOX_W / 2.0;
    double by = b[1] + BOX_H / 2.0;
    double dx = bx - ax;
    double dy = by - ay;
    double length = Math.hypot(dx, dy);
    double ux = dx / length;
    double uy = dy / length;
    // Leave the boxes where the line crosses their border; a send is drawn beside the opposite one.
    double t = Math.min(dx == 0 ? Double.MAX_VALUE : (BOX_W / 2.0 + 4) / Math.abs(dx),
        dy == 0 ? Double.MAX_VALUE : (BOX_H / 2.0 + 4) / Math.abs(dy)) * length;
    // The two directions of a pair of sends side by side: each offset to its own left.
    double side = edge.directed() ? 5 : 0;
    double ox = uy * side;
    double oy = -ux * side;
    double x1 = ax + ux * t + ox;
    double y1 = ay + uy * t + oy;
    double x2 = bx - ux * t + ox;
    double y2 = by - uy * t + oy;
    String colour = COLOURS.get(edge.axis());
    StringBuilder s = new StringBuilder(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\""
        + " stroke=\"%s\" stroke-width=\"%s\"%s%s/>%n", x1, y1, x2, y2, colour, edge.directed() ? "1.8" : "4",
        edge.directed() && edge.from() > edge.to() ? " stroke-dasharray=\"6 4\"" : "",
        edge.directed() ? " marker-end=\"url(#arrow-" + edge.axis() + ")\"" : ""));
    // Labels a quarter of the way along (clear of the cube's other edges, which cross near the middle); a
    // send's label on its own side of the pair.
    double f = edge.directed() ? 0.5 : 0.25;
    double mx = x1 + (x2 - x1) * f + ox * 3;
    double my = y1 + (y2 - y1) * f + oy * 3 + (dy == 0 ? -8 : 4);
    String anchor = dx == 0 ? "start" : edge.directed() ? (ox < 0 ? "end" : "start") : "middle";
    String label = edge.axis() + " " + (steps.size() == 1 ? "step " : "steps ") + join(steps);
    s.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"11\" fill=\"%s\">%s"
        + "</text>%n", mx + (dx == 0 ? 7 : 0), my, anchor, colour, escape(label)));
    return s.toString();
  }

  /** {@code line} cut after a ", " before {@code columns} characters, the rest indented under its first word. */
  static List<String> wrap(String line, int columns) {
    List<String> parts = new ArrayList<>();
    String indent = " ".repeat(line.length() - line.stripLeading().length() + 4);
    String rest = line;
    while (rest.length() > columns) {
      int cut = rest.lastIndexOf(", ", columns - 1);
      if (cut <= indent.length()) {
        break;
      }
      parts.add(rest.substring(0, cut + 1));
      rest = indent + rest.substring(cut + 2);
    }
    parts.add(rest);
    return parts;
  }

  private static String join(TreeSet<Integer> steps) {
    return String.join(", ", steps.stream().map(String::valueOf).toList());
  }

  private static String escape(String text) {
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;");
  }
}
