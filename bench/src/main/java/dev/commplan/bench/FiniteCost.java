package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * What the finite check costs (issue 43, item 3; docs/dsl.md, "Finite checks"): one all-reduce of S bytes, out of
 * place (or in place), issued three ways on the same communicator and buffers' shape: as a direct call ({@code
 * comm.allReduce}), as a plan built with the check off, and as the same plan built with it on.
 *
 * <ul>
 *   <li>the unit: one call (a barrier where there are several ranks, the execute or call, {@code synchronize()},
 *       a barrier), timed on rank 0, so the slowest rank's time;
 *   <li>warm-up, for each way: {@link SteadyState}'s rule, one call a unit; the calls, milliseconds and how it ended
 *       are printed;
 *   <li>then {@code rounds} rounds, each timing {@code calls} calls of every way in turn (medians), so that every
 *       way sees the same machine; the table shows each way's median over the rounds, and the ratios on/off and
 *       off/direct, each the median of the rounds' ratios;
 *   <li>the send data is finite ({@link Pattern}'s input of a sum), so the check never refuses; last, the plan with
 *       the check is executed once more with a NaN in its send data, which must be refused on every rank.
 * </ul>
 */
final class FiniteCost {
  /** What to measure. */
  record Config(String backend, int ranks, long bytes, DataType type, boolean inPlace, int rounds, int calls,
      SteadyState.Rule warmup) {}

  /** The ways, in the order they are timed. */
  static final List<String> WAYS = List.of("direct call", "plan, check off", "plan, check on");

  /** One way's line: its warm-up and its median time per call over the rounds. */
  record Line(String way, SteadyState.WarmUp warmup, double seconds) {}

  /** The lines, and the medians of the rounds' ratios: on over off, off over direct. */
  record Result(List<Line> lines, double onOverOff, double offOverDirect) {}

  private FiniteCost() {}

  static Result run(Config config, PrintStream out) {
    int ways = WAYS.size();
    double[][] seconds = new double[ways][config.rounds()];
    SteadyState.WarmUp[] warmups = new SteadyState.WarmUp[ways];
    RankSync sync = new RankSync(config.ranks());
    try (Cluster cluster = Backends.cluster(config.backend(), config.ranks())) {
      cluster.run(comm -> {
        try {
          new Rank(config, comm, sync).run(seconds, warmups);
        } catch (Throwable t) {
          sync.fail();
          throw t;
        }
      });
    }
    List<Line> lines = new ArrayList<>();
    for (int w = 0; w < ways; w++) {
      lines.add(new Line(WAYS.get(w), warmups[w], LocalTarget.median(seconds[w])));
    }
    double[] onOff = new double[config.rounds()];
    double[] offDirect = new double[config.rounds()];
    for (int r = 0; r < config.rounds(); r++) {
      onOff[r] = seconds[2][r] / seconds[1][r];
      offDirect[r] = seconds[1][r] / seconds[0][r];
    }
    Result result = new Result(lines, LocalTarget.median(onOff), LocalTarget.median(offDirect));
    print(config, result, out);
    return result;
  }

  private static void print(Config config, Result result, PrintStream out) {
    double load = java.lang.management.ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    out.printf(Locale.ROOT, "# finite-cost: all-reduce of %s (%s, %s), %s backend, %d rank%s; %d rounds of %d"
            + " calls per way; on %d processors, load average %.2f at the end%n", Names.bytes(config.bytes()),
        Names.of(config.type()), config.inPlace() ? "in place" : "out of place", config.backend(), config.ranks(),
        config.ranks() == 1 ? "" : "s", config.rounds(), config.calls(), Runtime.getRuntime().availableProcessors(),
        load);
    out.println("# " + config.warmup().describe("call: the execute or call and one synchronize", "call"));
    out.printf(Locale.ROOT, "# %-16s %14s   %s%n", "way", "median (us)", "warm-up");
    for (Line l : result.lines()) {
      out.printf(Locale.ROOT, "  %-16s %14.1f   %s%n", l.way(), l.seconds() * 1e6, l.warmup().summary("calls"));
    }
    out.printf(Locale.ROOT, "# check on / check off: %.3f (median of the rounds' ratios)%n", result.onOverOff());
    out.printf(Locale.ROOT, "# check off / direct call: %.3f%n", result.offOverDirect());
  }

  /** One rank's side. */
  private static final class Rank {
    final Config config;
    final Communicator comm;
    final RankSync sync;
    final int rank;

    Rank(Config config, Communicator comm, RankSync sync) {
      this.config = config;
      this.comm = comm;
      this.sync = sync;
      this.rank = comm.rank();
    }

    void run(double[][] seconds, SteadyState.WarmUp[] warmups) {
      DataType type = config.type();
      long count = config.bytes() / type.byteSize();
      try (Buffer send = Buffer.allocate(type, comm, count);
          Buffer recv = config.inPlace() ? null : Buffer.allocate(type, comm, count);
          Plan off = plan(false, send, recv);
          Plan on = plan(true, send, recv);
          HostStage stage = new HostStage(count * type.byteSize())) {
        Pattern.fill(stage.host, type, count, ReduceOp.SUM, rank, 0);
        stage.upload(send);
        Buffer into = recv == null ? send : recv;
        Runnable[] ways = {
            () -> comm.allReduce(send, into, ReduceOp.SUM, comm.stream()),
            () -> off.execute(comm.stream()),
            () -> on.execute(comm.stream())};
        SteadyState steady = new SteadyState(sync.consensus(rank));
        for (int w = 0; w < ways.length; w++) {
          Runnable way = ways[w];
          SteadyState.WarmUp warm = steady.warmUp(config.warmup(), 1, () -> seconds(way));
          if (rank == 0) {
            warmups[w] = warm;
          }
        }
        double[] times = new double[config.calls()];
        for (int round = 0; round < config.rounds(); round++) {
          for (int w = 0; w < ways.length; w++) {
            for (int i = 0; i < times.length; i++) {
              times[i] = seconds(ways[w]);
            }
            if (rank == 0) {
              seconds[w][round] = LocalTarget.median(times);
            }
          }
        }
        refused(on, send, stage); // last: the NaN stays in send
      }
    }

    /** The all-reduce of {@code send} (into {@code recv}, or in place where it is null) as a plan. */
    Plan plan(boolean check, Buffer send, Buffer recv) {
      PlanBuilder b = new PlanBuilder("bench.Finite" + (check ? "On" : "Off"), comm, 0).checkFinite(check);
      String shape = "{\"" + send.length() + "\"}";
      int s = b.buffer("send", send.dataType(), send.length(), shape, send);
      int r = recv == null ? s : b.buffer("recv", recv.dataType(), recv.length(), shape, recv);
      b.allReduce(0, s, r, ReduceOp.SUM);
      return b.build();
    }

    /** A NaN in rank 0's send data: the plan with the check must refuse on every rank. */
    void refused(Plan on, Buffer send, HostStage stage) {
      comm.stream().synchronize();
      if (rank == 0) {
        int width = config.type().byteSize(); // all ones: a NaN in every floating-point type
        stage.host.asSlice(send.length() / 2 * width, width).fill((byte) 0xFF);
        stage.upload(send);
      }
      sync.await();
      try {
        on.execute(comm.stream());
        comm.stream().synchronize();
        throw new IllegalStateException("rank " + rank + ": the plan with the check did not refuse a NaN");
      } catch (dev.commplan.runtime.NonFiniteException expected) {
        // as it should
      }
    }

    /** One call, from a barrier before it to a barrier after every rank's synchronize. */
    double seconds(Runnable way) {
      sync.await();
      long t0 = System.nanoTime();
      way.run();
      comm.stream().synchronize();
      sync.await();
      return (System.nanoTime() - t0) / 1e9;
    }
  }
}
