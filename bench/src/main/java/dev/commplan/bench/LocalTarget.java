package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/**
 * The local backend's target (issue 24): collectives of one size (64 MiB) on 2 and 4 ranks against a
 * memory copy of the same size, in the same process, in the steady state.
 *
 * <ul>
 *   <li>memcpy: one {@code MemorySegment.copy} of the size between two native segments, on rank 0's
 *       thread while the other ranks wait at a barrier;
 *   <li>a collective call: barrier, issue, {@code synchronize()}, barrier, timed on rank 0, so the time of
 *       the slowest rank;
 *   <li>warm-up, for memcpy and for each case: {@link SteadyState}'s rule, one call a unit (the ranks agree
 *       through {@link RankSync}); the calls and milliseconds it took, and how it ended, are printed;
 *   <li>then {@code rounds} rounds, each timing {@code calls} memcpys and then {@code calls} calls of every
 *       case (medians), so that memcpy and the collectives see the same machine; a case's ratio in a round
 *       is memcpy's time over the call's time, which is its algbw over memcpy's bandwidth (both move S
 *       bytes, nccl-tests' S); busbw's ratio is that times the bus factor. The table shows the medians over
 *       the rounds;
 *   <li>last, every case once more on fresh inputs, checked element by element (#wrong, as {@link Sweep}).
 * </ul>
 */
final class LocalTarget {
  /** What to measure: {@code bytes} is the size S of every case; {@code warmup} ends each warm-up. */
  record Config(long bytes, List<Integer> ranks, List<Coll> colls, DataType type, int rounds, int calls,
      SteadyState.Rule warmup) {}

  /**
   * One case's line: medians over the rounds; {@code ratio} is algbw over memcpy's bandwidth; {@code cpuSeconds}
   * the CPU time of the Java threads per call, and {@code cpuCopies} that over memcpy's.
   */
  record Line(int ranks, Coll coll, boolean inPlace, SteadyState.WarmUp warmup, double seconds, double algbw,
      double busbw,
      double ratio, double cpuSeconds, double cpuCopies, long wrong) {
    double busRatio() {
      return ratio * coll.busFactor(ranks);
    }
  }

  /** One rank count's memcpy (medians over rounds: wall and CPU time) and its cases. */
  record Part(int ranks, SteadyState.WarmUp memcpyWarmup, double memcpySeconds, double memcpyCpuSeconds,
      List<Line> lines) {}

  private record Case(Coll coll, boolean inPlace) {}

  private LocalTarget() {}

  /** Runs the comparison; {@code progress} (null for none) gets a line per finished rank count. */
  static List<Part> run(Config config, PrintStream out, PrintStream progress) {
    long started = System.nanoTime();
    List<Case> cases = new ArrayList<>();
    for (Coll coll : config.colls()) {
      cases.add(new Case(coll, false));
      if (coll.hasInPlace()) {
        cases.add(new Case(coll, true));
      }
    }
    printHeader(config, out);
    List<Part> parts = new ArrayList<>();
    for (int ranks : config.ranks()) {
      Part part = measure(config, ranks, cases);
      parts.add(part);
      printPart(config, part, out);
      if (progress != null) {
        progress.printf(Locale.ROOT, "# progress: %d ranks done (%d/%d), %.1f s%n", ranks, parts.size(),
            config.ranks().size(), (System.nanoTime() - started) / 1e9);
        progress.flush();
      }
    }
    return parts;
  }

  private static Part measure(Config config, int ranks, List<Case> cases) {
    int rounds = config.rounds();
    double[][] caseSeconds = new double[cases.size()][rounds];
    double[][] caseCpu = new double[cases.size()][rounds];
    double[] memcpySeconds = new double[rounds];
    double[] memcpyCpu = new double[rounds];
    SteadyState.WarmUp[] warmups = new SteadyState.WarmUp[cases.size() + 1];
    long[] wrong = new long[cases.size()];
    RankSync sync = new RankSync(ranks);
    try (Cluster cluster = Backends.cluster("local", ranks)) {
      cluster.run(comm -> {
        try {
          new Rank(config, comm, sync, cases).run(caseSeconds, caseCpu, memcpySeconds, memcpyCpu, warmups, wrong);
        } catch (Throwable t) {
          sync.fail();
          throw t;
        }
      });
    }
    List<Line> lines = new ArrayList<>();
    int w = config.type().byteSize();
    for (int c = 0; c < cases.size(); c++) {
      Coll coll = cases.get(c).coll();
      long p = coll.paramCount(config.bytes() / w, w, ranks);
      double[] ratios = new double[rounds];
      double[] cpuCopies = new double[rounds];
      for (int r = 0; r < rounds; r++) {
        ratios[r] = memcpySeconds[r] / caseSeconds[c][r];
        cpuCopies[r] = caseCpu[c][r] / memcpyCpu[r];
      }
      double seconds = median(caseSeconds[c]);
      double algbw = coll.algbw(p, w, ranks, seconds);
      lines.add(new Line(ranks, coll, cases.get(c).inPlace(), warmups[c + 1], seconds, algbw,
          algbw * coll.busFactor(ranks), median(ratios), median(caseCpu[c]), median(cpuCopies), wrong[c]));
    }
    return new Part(ranks, warmups[0], median(memcpySeconds), median(memcpyCpu), lines);
  }

  /** One rank's side of one rank count's measurement. */
  private static final class Rank {
    final Config config;
    final Communicator comm;
    final RankSync sync;
    final List<Case> cases;
    final int rank;

    Rank(Config config, Communicator comm, RankSync sync, List<Case> cases) {
      this.config = config;
      this.comm = comm;
      this.sync = sync;
      this.cases = cases;
      this.rank = comm.rank();
    }

    /**
     * Fills (rank 0) {@code caseSeconds[case][round]} and {@code memcpySeconds[round]}, median wall time per
     * call, {@code caseCpu} and {@code memcpyCpu}, the Java threads' CPU time per call, {@code warmups} and
     * {@code wrong}.
     */
    void run(double[][] caseSeconds, double[][] caseCpu, double[] memcpySeconds, double[] memcpyCpu,
        SteadyState.WarmUp[] warmups, long[] wrong) {
      DataType type = config.type();
      long count = config.bytes() / type.byteSize();
      try (Arena arena = Arena.ofConfined();
          Buffer sendAll = Buffer.allocate(type, comm, count);
          Buffer recvAll = Buffer.allocate(type, comm, count);
          HostStage stage = new HostStage(count * type.byteSize())) {
        MemorySegment src = null;
        MemorySegment dst = null;
        if (rank == 0) {
          src = arena.allocate(config.bytes(), 64);
          dst = arena.allocate(config.bytes(), 64);
          src.fill((byte) 1); // touch every page before timing
          dst.fill((byte) 0);
        }
        Copy memcpy = new Copy(src, dst, config.bytes());
        List<Sweep.Call> calls = new ArrayList<>();
        for (Case c : cases) {
          Sweep.Call call = call(c, sendAll, recvAll);
          init(call, c.inPlace(), stage);
          calls.add(call);
        }
        if (rank == 0) {
          warmups[0] = new SteadyState(SteadyState.Consensus.ALONE).warmUp(config.warmup(), 1, memcpy::seconds);
        }
        SteadyState steady = new SteadyState(sync.consensus(rank));
        for (int c = 0; c < calls.size(); c++) {
          Sweep.Call call = calls.get(c);
          SteadyState.WarmUp w = steady.warmUp(config.warmup(), 1, () -> seconds(call));
          if (rank == 0) {
            warmups[c + 1] = w;
          }
        }
        double[] times = new double[config.calls()];
        for (int round = 0; round < config.rounds(); round++) {
          sync.await();
          if (rank == 0) {
            long cpu = processCpuNanos();
            for (int i = 0; i < times.length; i++) {
              times[i] = memcpy.seconds();
            }
            memcpyCpu[round] = (processCpuNanos() - cpu) / 1e9 / times.length;
            memcpySeconds[round] = median(times);
          }
          for (int c = 0; c < calls.size(); c++) {
            long cpu = processCpuNanos(); // the other ranks wait at the first call's barrier, parked
            for (int i = 0; i < times.length; i++) {
              times[i] = seconds(calls.get(c));
            }
            if (rank == 0) {
              caseCpu[c][round] = (processCpuNanos() - cpu) / 1e9 / times.length;
              caseSeconds[c][round] = median(times);
            }
          }
        }
        for (int c = 0; c < calls.size(); c++) {
          Sweep.Call call = calls.get(c);
          init(call, cases.get(c).inPlace(), stage);
          call.issue();
          comm.stream().synchronize();
          long mine = check(call, stage);
          long all = (long) sync.sum(rank, mine);
          if (rank == 0) {
            wrong[c] = all;
          }
        }
      }
    }

    /** One call, timed from a barrier before it to a barrier after every rank's synchronize. */
    double seconds(Sweep.Call call) {
      sync.await();
      long t0 = System.nanoTime();
      call.issue();
      comm.stream().synchronize();
      sync.await();
      return (System.nanoTime() - t0) / 1e9;
    }

    /** The buffers of a case, as {@link Sweep}'s (NCCL's in-place forms). */
    Sweep.Call call(Case c, Buffer sendAll, Buffer recvAll) {
      int n = comm.size();
      DataType t = config.type();
      long p = c.coll().paramCount(config.bytes() / t.byteSize(), t.byteSize(), n);
      long sendCount = c.coll().sendCount(p, n);
      long recvCount = c.coll().recvCount(p, n);
      Buffer send;
      Buffer recv;
      if (!c.inPlace()) {
        send = Buffer.view(t, sendAll.memory(), sendAll.byteOffset(), sendCount);
        recv = Buffer.view(t, recvAll.memory(), recvAll.byteOffset(), recvCount);
      } else {
        long slice = recvAll.byteOffset() + rank * p * t.byteSize();
        switch (c.coll().collective.inPlace()) {
          case SAME_BUFFER -> recv = send = Buffer.view(t, recvAll.memory(), recvAll.byteOffset(), p);
          case SEND_IS_RANK_SLICE_OF_RECV -> {
            recv = Buffer.view(t, recvAll.memory(), recvAll.byteOffset(), recvCount);
            send = Buffer.view(t, recvAll.memory(), slice, p);
          }
          case RECV_IS_RANK_SLICE_OF_SEND -> {
            send = Buffer.view(t, recvAll.memory(), recvAll.byteOffset(), sendCount);
            recv = Buffer.view(t, recvAll.memory(), slice, p);
          }
          default -> throw new AssertionError(c.coll() + " has no in-place form");
        }
      }
      return new Sweep.Call(comm, c.coll(), send, recv, ReduceOp.SUM, 0);
    }

    /** Fresh inputs ({@link Pattern}) and a zeroed output. */
    void init(Sweep.Call call, boolean inPlace, HostStage stage) {
      boolean gathers = call.coll().collective.inPlace() == dev.commplan.model.InPlace.SEND_IS_RANK_SLICE_OF_RECV;
      if (!inPlace || gathers) {
        stage.zero(call.recv());
      }
      Pattern.fill(stage.host, config.type(), call.send().length(), call.coll().reduces() ? ReduceOp.SUM : null,
          rank, 0);
      stage.upload(call.send());
    }

    /** This rank's #wrong for the collectives this tool runs. */
    long check(Sweep.Call call, HostStage stage) {
      DataType t = config.type();
      int n = comm.size();
      stage.download(call.recv());
      long p = call.coll().collective == dev.commplan.model.Collective.ALL_GATHER ? call.send().length()
          : call.recv().length();
      Pattern.Expected expected = switch (call.coll().collective) {
        case ALL_REDUCE -> i -> Pattern.expectedReduction(t, ReduceOp.SUM, n, i);
        case REDUCE_SCATTER -> i -> Pattern.expectedReduction(t, ReduceOp.SUM, n, rank * p + i);
        case BROADCAST -> i -> Pattern.input(null, 0, i);
        case ALL_GATHER -> i -> Pattern.input(null, (int) (i / p), i % p);
        default -> throw new AssertionError(call.coll() + " is not checked here");
      };
      return Pattern.countWrong(stage.host, t, call.recv().length(), expected);
    }
  }

  /** memcpy: one copy of {@code bytes} from {@code src} to {@code dst}. */
  private record Copy(MemorySegment src, MemorySegment dst, long bytes) {
    double seconds() {
      long t0 = System.nanoTime();
      MemorySegment.copy(src, 0, dst, 0, bytes);
      return (System.nanoTime() - t0) / 1e9;
    }
  }

  /**
   * The CPU time of every live Java thread of this JVM so far (the ranks' and their streams' workers; not the
   * JIT's and GC's), in nanoseconds: the sum of the threads' clocks, which count in nanoseconds where the
   * process's clock counts in scheduler ticks.
   */
  static long processCpuNanos() {
    com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();
    long total = 0;
    for (long t : threads.getThreadCpuTime(threads.getAllThreadIds())) {
      total += Math.max(t, 0); // -1: the thread ended meanwhile
    }
    return total;
  }

  static double median(double[] values) {
    double[] s = values.clone();
    Arrays.sort(s);
    int m = s.length / 2;
    return s.length % 2 == 1 ? s[m] : (s[m - 1] + s[m]) / 2;
  }

  private static void printHeader(Config config, PrintStream out) {
    double load = ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
    out.printf(Locale.ROOT, "# local-target: %s %s (sum), ranks %s, on %d processors, load average %.2f at the start%n",
        Names.bytes(config.bytes()), Names.of(config.type()), config.ranks(),
        Runtime.getRuntime().availableProcessors(), load);
    out.println("# " + config.warmup().describe("call (memcpy: one copy)", "call"));
    out.printf(Locale.ROOT, "# then %d rounds of %d memcpys and %d calls of every case, medians%n", config.rounds(),
        config.calls(), config.calls());
    out.println("# memcpy: MemorySegment.copy between two native segments; a call: barrier, issue, synchronize,"
        + " barrier (the slowest rank)");
    out.println("# algbw/memcpy: memcpy's time over the call's in the same round (median over rounds);"
        + " busbw/memcpy: that times the bus factor");
    out.println("# cpu: CPU time per call, summed over the Java threads; cpu/memcpy: how many memcpys of CPU time"
        + " one call costs (a collective that reads and writes n times S bytes costs about n)");
    out.flush();
  }

  private static void printPart(Config config, Part part, PrintStream out) {
    double copyGBs = config.bytes() / 1e9 / part.memcpySeconds();
    out.printf(Locale.ROOT, "# %d ranks: memcpy %s: warm-up %s; median %.1f us = %.2f GB/s, cpu %.1f us%n",
        part.ranks(), Names.bytes(config.bytes()), part.memcpyWarmup().summary("copies"), part.memcpySeconds() * 1e6, copyGBs,
        part.memcpyCpuSeconds() * 1e6);
    out.printf("# %5s  %-14s  %5s  %-28s  %10s  %7s  %7s  %12s  %12s  %10s  %10s  %6s%n", "ranks", "collective",
        "place", "warm-up", "time (us)", "algbw", "busbw", "algbw/memcpy", "busbw/memcpy", "cpu (us)", "cpu/memcpy",
        "#wrong");
    for (Line l : part.lines()) {
      out.printf(Locale.ROOT, "  %5d  %-14s  %5s  %-28s  %10.1f  %7.2f  %7.2f  %12.2f  %12.2f  %10.1f  %10.2f  %6d%n",
          l.ranks(), l.coll().label, l.inPlace() ? "in" : "out", l.warmup().summary("calls"), l.seconds() * 1e6, l.algbw(),
          l.busbw(), l.ratio(), l.busRatio(), l.cpuSeconds() * 1e6, l.cpuCopies(), l.wrong());
    }
    out.flush();
  }

  /** The collectives this tool measures (and checks): those that share the reduction and copy kernels. */
  static final List<Coll> COLLS = List.of(Coll.ALL_REDUCE, Coll.ALL_GATHER, Coll.REDUCE_SCATTER, Coll.BROADCAST);
}
