package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.bench.ManyBuffers.Case;
import dev.commplan.model.Collective;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Mesh;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.CollectiveCall;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.runtime.plan.Schedule;
import dev.commplan.runtime.plan.Step;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The many-buffers ways over a mesh's axes: each buffer is all-reduced over one of the A axes of {@code
 * over}, alternately (buffer {@code i} over {@code over[i mod A]}: fields of the axes declared in turn) or in
 * blocks (the first K/A buffers over the first axis, and so on: each axis's fields declared together), so
 * that one step of the plan holds calls over every axis.
 *
 * <ul>
 *   <li>{@code separate}: one direct call per buffer, on its axis's communicator, in buffer order;
 *   <li>{@code group}: the same calls, one {@code groupStart()}/{@code groupEnd()} per axis, axis after axis;
 *   <li>{@code plan}: one {@code execute} of a plan over the axes ({@link PlanBuilder} with {@code over}),
 *       all calls in step 0, on the world's stream: the backend issues every axis's calls of the step
 *       together (on NCCL one group spanning the axes' communicators);
 *   <li>{@code flat}: the ideal, one call per axis over one buffer of that axis's total size;
 *   <li>{@code graph}: the plan captured once and launched.
 * </ul>
 *
 * A step waits for every stream it enqueued on. One instance per rank, built on that rank's mesh.
 */
final class MeshWays {
  private final ManyBuffers.Config config;
  private final Mesh mesh;
  /** Per axis of {@code over}: this rank's group and its index (the inputs' seed). */
  private final List<Communicator> groups = new ArrayList<>();
  private final List<Long> seeds = new ArrayList<>();
  private String planDescription = "";
  private String graphDescription = "";

  MeshWays(ManyBuffers.Config config, Mesh mesh) {
    this.config = config;
    this.mesh = mesh;
    for (String axis : config.over()) {
      groups.add(MeshSpec.axisGroup(mesh, axis));
      seeds.add((long) MeshSpec.groupIndex(mesh, axis));
    }
  }

  /** The axis buffer {@code i} of {@code k} runs over: its index in {@code over}'s {@code axes}. */
  static int axisOf(int buffer, int k, int axes, boolean blocks) {
    return blocks ? (int) ((long) buffer * axes / k) : buffer % axes;
  }

  private int axisOf(int buffer) {
    return axisOf(buffer, config.theCase().counts().length, groups.size(), config.axisBlocks());
  }

  String planDescription() {
    return planDescription;
  }

  String graphDescription() {
    return graphDescription;
  }

  ManyWay prepare(String mode) {
    return switch (mode) {
      case "separate", "group" -> direct(mode);
      case "flat" -> flat();
      case "plan" -> plan();
      case "graph" -> graph();
      default -> throw new IllegalArgumentException(mode);
    };
  }

  private List<Stream> axisStreams() {
    return groups.stream().map(Communicator::stream).toList();
  }

  private ManyWay direct(String mode) {
    Case c = config.theCase();
    DataType type = config.type();
    ReduceOp op = config.op();
    int k = c.counts().length;
    int axes = groups.size();
    Buffer[] send = new Buffer[k];
    Buffer[] recv = new Buffer[k];
    List<ManyPiece> pieces = new ArrayList<>(k);
    for (int i = 0; i < k; i++) {
      int a = axisOf(i);
      send[i] = Buffer.allocate(type, groups.get(a), c.counts()[i]);
      recv[i] = config.inPlace() ? send[i] : Buffer.allocate(type, groups.get(a), c.counts()[i]);
      pieces.add(ManyPiece.of(send[i], recv[i], groups.get(a), seeds.get(a)));
    }
    Runnable issue;
    if (mode.equals("separate")) {
      issue = () -> {
        for (int i = 0; i < k; i++) {
          Communicator g = groups.get(axisOf(i));
          g.allReduce(send[i], recv[i], op, g.stream());
        }
      };
    } else {
      issue = () -> {
        for (int a = 0; a < axes; a++) {
          Communicator g = groups.get(a);
          g.groupStart();
          for (int i = 0; i < k; i++) {
            if (axisOf(i) == a) {
              g.allReduce(send[i], recv[i], op, g.stream());
            }
          }
          g.groupEnd();
        }
      };
    }
    AutoCloseable free = () -> {
      for (int i = 0; i < k; i++) {
        send[i].close();
        if (recv[i] != send[i]) {
          recv[i].close();
        }
      }
    };
    return new ManyWay(mode, k, issue, axisStreams(), pieces, free);
  }

  private ManyWay flat() {
    Case c = config.theCase();
    int axes = groups.size();
    long[] totals = new long[axes];
    for (int i = 0; i < c.counts().length; i++) {
      totals[axisOf(i)] += c.counts()[i];
    }
    List<Buffer> send = new ArrayList<>();
    List<Buffer> recv = new ArrayList<>();
    List<ManyPiece> pieces = new ArrayList<>();
    for (int a = 0; a < axes; a++) {
      if (totals[a] == 0) {
        continue; // fewer buffers than axes: this axis has none
      }
      Buffer s = Buffer.allocate(config.type(), groups.get(a), totals[a]);
      Buffer r = config.inPlace() ? s : Buffer.allocate(config.type(), groups.get(a), totals[a]);
      send.add(s);
      recv.add(r);
      pieces.add(ManyPiece.of(s, r, groups.get(a), seeds.get(a)));
    }
    List<Communicator> used = new ArrayList<>();
    for (int a = 0; a < axes; a++) {
      if (totals[a] > 0) {
        used.add(groups.get(a));
      }
    }
    Runnable issue = () -> {
      for (int j = 0; j < used.size(); j++) {
        used.get(j).allReduce(send.get(j), recv.get(j), config.op(), used.get(j).stream());
      }
    };
    AutoCloseable free = () -> {
      for (int j = 0; j < send.size(); j++) {
        send.get(j).close();
        if (recv.get(j) != send.get(j)) {
          recv.get(j).close();
        }
      }
    };
    return new ManyWay("flat", used.size(), issue, axisStreams(), pieces, free);
  }

  /** The plan a generated class with {@code @CommPlan(axes)} and {@code over} on each field would build. */
  private Plan buildPlan() {
    Case c = config.theCase();
    List<String> over = config.over();
    PlanBuilder b = new PlanBuilder("dev.commplan.bench.MeshWays[" + c.name() + " over " + String.join(",", over) + "]",
        mesh, 0, over.toArray(String[]::new));
    int k = c.counts().length;
    int[] send = new int[k];
    int[] recv = new int[k];
    for (int i = 0; i < k; i++) {
      String shape = "{\"" + c.counts()[i] + "\"}";
      send[i] = b.buffer(c.fields().get(i), config.type(), c.counts()[i], shape, null);
      recv[i] = config.inPlace() ? send[i] : b.buffer(c.fields().get(i) + "_out", config.type(), c.counts()[i], shape, null);
    }
    for (int i = 0; i < k; i++) {
      b.collective(0, Collective.ALL_REDUCE, send[i], recv[i], config.op(), -1, over.get(axisOf(i)));
    }
    return b.build();
  }

  /** The plan's calls as pieces, each with its group (from the schedule) and that axis's seed. */
  private List<ManyPiece> pieces(Schedule schedule, Map<String, Integer> callsPerAxis) {
    List<ManyPiece> pieces = new ArrayList<>();
    for (Step step : schedule.steps()) {
      for (CollectiveCall call : step.calls()) {
        if (call.collective() != Collective.ALL_REDUCE) {
          throw new IllegalStateException("the many-buffers plan issued a " + call.collective().label());
        }
        String axis = schedule.axisOf(call);
        int a = config.over().indexOf(axis);
        if (a < 0) {
          throw new IllegalStateException("the many-buffers plan issued a call over '" + axis + "', not one of "
              + config.over());
        }
        pieces.add(ManyPiece.of(call, schedule.communicatorOf(call, mesh.world()), seeds.get(a)));
        callsPerAxis.merge(axis, 1, Integer::sum);
      }
    }
    return pieces;
  }

  private static String perAxis(Map<String, Integer> callsPerAxis) {
    List<String> parts = new ArrayList<>();
    callsPerAxis.forEach((axis, n) -> parts.add("over " + axis + ": " + n));
    return String.join(", ", parts);
  }

  private ManyWay plan() {
    Plan p = buildPlan();
    Map<String, Integer> callsPerAxis = new LinkedHashMap<>();
    List<ManyPiece> pieces;
    try {
      pieces = pieces(p.schedule(), callsPerAxis);
    } catch (RuntimeException e) {
      p.close();
      throw e;
    }
    int steps = p.schedule().steps().size();
    planDescription = "PlanBuilder over mesh " + config.mesh().describe() + ", axes " + String.join(", ", config.over())
        + ": " + steps + (steps == 1 ? " step, " : " steps, ") + pieces.size() + (pieces.size() == 1 ? " call" : " calls")
        + " (" + perAxis(callsPerAxis) + ")";
    Stream stream = mesh.world().stream();
    return new ManyWay("plan", pieces.size(), () -> p.execute(stream), List.of(stream), pieces, p);
  }

  private ManyWay graph() {
    Plan p = buildPlan();
    CapturedPlan captured;
    List<ManyPiece> pieces;
    try {
      captured = p.capture(mesh.world().stream());
      pieces = pieces(p.schedule(), new LinkedHashMap<>());
    } catch (RuntimeException e) {
      p.close();
      throw e;
    }
    graphDescription = captured.isGraph()
        ? "one CUDA graph of the plan's " + pieces.size() + (pieces.size() == 1 ? " call" : " calls")
            + " over " + String.join(", ", config.over()) + ", launched with cudaGraphLaunch"
        : "the " + config.backend() + " backend has no CUDA graphs: launch() executes the plan (this row measures"
            + " that fallback, not a graph)";
    AutoCloseable close = () -> {
      captured.close();
      p.close();
    };
    return new ManyWay("graph", pieces.size(), captured::launch, List.of(mesh.world().stream()), pieces, close);
  }
}
