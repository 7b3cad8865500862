package dev.commplan.bench;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.timing.SteadyState;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * nccl-tests' sweep ({@code all_reduce_perf -b 8 -e 1G -f 2}), on our direct collectives, in the steady
 * state. The timed unit is nccl-tests': a batch of {@code iters} calls back to back and one synchronize of
 * the stream, wall time divided by {@code iters}. For each size, out of place and then in place: batches
 * until the per-call time is steady ({@link SteadyState}: the warm-up, reported with the row), then
 * {@code batches} timed batches, each averaged over ranks, and their median is the time column; then
 * {@code check} runs on fresh inputs, each compared element by element with the expected result
 * (#wrong, summed over ranks).
 */
final class Sweep {
  /**
   * What to sweep. {@code factor} is nccl-tests' {@code -f}, {@code iters} its {@code -n} (calls per batch);
   * {@code batches} timed batches per row (fewer where {@code measureMaxS} passes first); {@code warmup} is
   * the rule of each collective's first size (where the JIT compiles its call path), and the later sizes,
   * which take the same path, warm up at least {@code nextMinS} instead of the rule's minimum; sizes above
   * {@code checkMaxBytes} are not checked; after {@code timeLimitS} (0: none) no new size starts (the first
   * always runs).
   */
  record Config(
      String backend,
      int ranks,
      List<Coll> colls,
      DataType type,
      ReduceOp op,
      int root,
      long minBytes,
      long maxBytes,
      int factor,
      int iters,
      int batches,
      SteadyState.Rule warmup,
      double nextMinS,
      double measureMaxS,
      int check,
      long checkMaxBytes,
      double timeLimitS,
      boolean quiet) {}

  /**
   * One placement's columns: time (µs, the median per call), algbw and busbw (GB/s), #wrong (-1 when not
   * checked), and the warm-up before it (null where not run).
   */
  record Result(double timeUs, double algbw, double busbw, long wrong, SteadyState.WarmUp warmup, int batches) {}

  /** The in-place columns of a collective without an in-place form (AllToAll, sendrecv): N/A. */
  static final Result NO_IN_PLACE = new Result(Double.NaN, Double.NaN, Double.NaN, -1, null, 0);

  /**
   * One line of the table. {@code op} is null but for the reductions; {@code root} is -1 but for the rooted
   * collectives; {@code inPlace} has a NaN time and -1 wrong where the collective has no in-place form.
   */
  record Row(
      Coll coll,
      String backend,
      int ranks,
      long sizeBytes,
      long count,
      DataType type,
      ReduceOp op,
      int root,
      Result outOfPlace,
      Result inPlace) {}

  static final String CSV_HEADER =
      "collective,backend,ranks,size_bytes,count,type,redop,root,"
          + "oop_time_us,oop_algbw_gbs,oop_busbw_gbs,oop_wrong,ip_time_us,ip_algbw_gbs,ip_busbw_gbs,ip_wrong,"
          + "oop_warmup_calls,oop_warmup_ms,oop_warmup_end,ip_warmup_calls,ip_warmup_ms,ip_warmup_end,"
          + "oop_batches,ip_batches";

  private final Config config;
  private final SweepOutput output;
  private final PrintStream progress;
  private final Csv csv;
  private final List<Row> rows = Collections.synchronizedList(new ArrayList<>());

  private Sweep(Config config, PrintStream out, PrintStream progress, Csv csv) {
    this.config = config;
    this.output = new SweepOutput(config, out);
    this.progress = progress;
    this.csv = csv;
  }

  /** Runs the sweep, printing the table to {@code out} as it goes and the rows to {@code csv} (may be null). */
  static List<Row> run(Config config, PrintStream out, PrintStream progress, Csv csv) {
    Sweep sweep = new Sweep(config, out, progress, csv);
    if (csv != null) {
      csv.header(CSV_HEADER);
    }
    RankSync sync = new RankSync(config.ranks());
    try (Cluster cluster = Backends.cluster(config.backend(), config.ranks())) {
      cluster.run(comm -> {
        try {
          sweep.runRank(comm, sync);
        } catch (Throwable t) {
          sync.fail();
          throw t;
        }
      });
    }
    return List.copyOf(sweep.rows);
  }

  /** The sizes of the sweep, nccl-tests' loop: {@code min, min*f, ...} up to {@code max}. */
  static List<Long> sizes(long min, long max, int factor) {
    List<Long> sizes = new ArrayList<>();
    for (long s = min; s <= max; s = s * factor) {
      sizes.add(s);
      if (s > Long.MAX_VALUE / factor) {
        break;
      }
    }
    return sizes;
  }

  private void runRank(Communicator comm, RankSync sync) {
    int rank = comm.rank();
    int n = comm.size();
    DataType type = config.type();
    int w = type.byteSize();
    long maxCount = config.maxBytes() / w;
    List<Long> sizes = sizes(config.minBytes(), config.maxBytes(), config.factor());
    long started = System.nanoTime();
    int done = 0;
    int total = sizes.size() * config.colls().size();
    try (Buffer sendAll = Buffer.allocate(type, comm, maxCount);
        Buffer recvAll = Buffer.allocate(type, comm, maxCount);
        HostStage stage = new HostStage(maxCount * w)) {
      Rank r = new Rank(comm, sync, sendAll, recvAll, stage);
      for (Coll coll : config.colls()) {
        if (rank == 0) {
          output.header(coll, n);
        }
        double busbwSum = 0;
        int busbwCount = 0;
        boolean first = true;
        for (long size : sizes) {
          if (config.timeLimitS() > 0 && done > 0
              && sync.average(rank, (System.nanoTime() - started) / 1e9) > config.timeLimitS()) {
            if (rank == 0) {
              output.stopped(coll, size, done, total);
            }
            return;
          }
          long p = coll.paramCount(size / w, w, n);
          done++;
          if (p == 0) {
            continue; // fewer elements than ranks: nothing to send (nccl-tests prints a row of zeros)
          }
          boolean check = config.check() > 0 && size <= config.checkMaxBytes();
          SteadyState.Rule rule = first || config.warmup().isFixed() ? config.warmup()
              : config.warmup().withTimes(config.nextMinS(), -1);
          first = false;
          Result oop = r.bench(coll, p, false, check, rule);
          Result ip = coll.hasInPlace() ? r.bench(coll, p, true, check, rule) : NO_IN_PLACE;
          if (rank == 0) {
            long sizeBytes = Math.max(coll.sendCount(p, n), coll.recvCount(p, n)) * w;
            Row row = new Row(coll, config.backend(), n, sizeBytes, p, type, coll.reduces() ? config.op() : null,
                coll.rooted() ? config.root() : -1, oop, ip);
            rows.add(row);
            output.row(row);
            if (csv != null) {
              csv.row(SweepOutput.csvRow(row));
            }
            busbwSum += oop.busbw() + (coll.hasInPlace() ? ip.busbw() : 0);
            busbwCount += coll.hasInPlace() ? 2 : 1;
            double elapsed = (System.nanoTime() - started) / 1e9;
            if (!config.quiet() && elapsed > 2) {
              progress.printf(Locale.ROOT, "# progress: %s %s done (%d/%d), %.1f s%n",
                  coll.label, Names.bytes(size), done, total, elapsed);
            }
          }
        }
        if (rank == 0) {
          output.average(busbwCount == 0 ? 0 : busbwSum / busbwCount);
        }
      }
    }
  }

  /** One rank's buffers, for all sizes: the send and receive blocks of the largest size, and its staging. */
  private final class Rank {
    final Communicator comm;
    final RankSync sync;
    final Buffer sendAll;
    final Buffer recvAll;
    final HostStage stage;

    Rank(Communicator comm, RankSync sync, Buffer sendAll, Buffer recvAll, HostStage stage) {
      this.comm = comm;
      this.sync = sync;
      this.sendAll = sendAll;
      this.recvAll = recvAll;
      this.stage = stage;
    }

    /**
     * The buffers of one call with NCCL's count {@code p}. In place follows NCCL: AllReduce, Broadcast and
     * Reduce use one buffer; AllGather's and Gather's input is the rank-th slice of the output;
     * ReduceScatter's and Scatter's output is the rank-th slice of the input.
     */
    Call call(Coll coll, long p, boolean inPlace) {
      int n = comm.size();
      long sendCount = coll.sendCount(p, n);
      long recvCount = coll.recvCount(p, n);
      DataType t = config.type();
      Buffer send;
      Buffer recv;
      if (!inPlace) {
        send = view(sendAll, 0, sendCount);
        recv = view(recvAll, 0, recvCount);
      } else {
        long slice = comm.rank() * p * t.byteSize();
        switch (coll.collective.inPlace()) {
          case SAME_BUFFER -> {
            send = view(recvAll, 0, p);
            recv = send;
          }
          case SEND_IS_RANK_SLICE_OF_RECV -> {
            recv = view(recvAll, 0, recvCount);
            send = view(recvAll, slice, p);
          }
          case RECV_IS_RANK_SLICE_OF_SEND -> {
            send = view(recvAll, 0, sendCount);
            recv = view(recvAll, slice, p);
          }
          default -> throw new AssertionError(coll + " has no in-place form");
        }
      }
      return new Call(comm, coll, send, recv, config.op(), config.root());
    }

    /**
     * One placement of one size: warm-up to the steady state, then {@code batches} timed batches of
     * {@code iters} calls and one synchronize (median per call), then the checked runs.
     */
    Result bench(Coll coll, long p, boolean inPlace, boolean check, SteadyState.Rule rule) {
      int n = comm.size();
      Stream stream = comm.stream();
      Call call = call(coll, p, inPlace);
      if (check) {
        init(call, inPlace);
      }
      int iters = config.iters();
      SteadyState.Unit batch = () -> {
        for (int i = 0; i < iters; i++) {
          call.issue();
        }
        stream.synchronize();
      };
      SteadyState steady = new SteadyState(sync.consensus(comm.rank()));
      SteadyState.WarmUp warm = steady.warmUp(rule, iters, batch);
      SteadyState.Samples timed = steady.measure(iters, config.batches(), (long) (config.measureMaxS() * 1e9), batch);
      double seconds = timed.median() / 1e9;
      long wrong = -1;
      if (check) {
        wrong = 0;
        for (int c = 0; c < config.check() && wrong == 0; c++) {
          init(call, inPlace);
          call.issue();
          stream.synchronize();
          wrong = (long) sync.sum(comm.rank(), check(call));
        }
      }
      double algbw = coll.algbw(p, config.type().byteSize(), n, seconds);
      return new Result(seconds * 1e6, algbw, algbw * coll.busFactor(n), wrong, warm, timed.count());
    }

    /** Fresh inputs (see {@link Pattern}) and a zeroed output, as nccl-tests' {@code InitData}. */
    private void init(Call call, boolean inPlace) {
      DataType t = config.type();
      int rank = comm.rank();
      ReduceOp op = call.coll.reduces() ? config.op() : null;
      boolean gathers = call.coll.collective.inPlace() == dev.commplan.model.InPlace.SEND_IS_RANK_SLICE_OF_RECV;
      if (!inPlace || gathers) {
        stage.zero(call.recv); // in-place AllGather and Gather: zero the whole output, then write this rank's slice
      }
      Pattern.fill(stage.host, t, call.send.length(), op, rank, 0);
      stage.upload(call.send);
    }

    /** This rank's #wrong: elements of the output that differ from the expected result. */
    private long check(Call call) {
      DataType t = config.type();
      int n = comm.size();
      int rank = comm.rank();
      ReduceOp op = config.op();
      stage.download(call.recv);
      long p = switch (call.coll.collective) { // NCCL's count: the slice per rank where there are slices
        case ALL_GATHER, GATHER -> call.send.length();
        case ALL_TO_ALL -> call.recv.length() / n;
        default -> call.recv.length();
      };
      int root = config.root();
      boolean isRoot = rank == root;
      boolean inPlace = call.send.memory() == call.recv.memory();
      ReduceOp fillOp = call.coll.reduces() ? op : null;
      Pattern.Expected expected = switch (call.coll.collective) {
        case ALL_REDUCE -> i -> Pattern.expectedReduction(t, op, n, i);
        case REDUCE_SCATTER -> i -> Pattern.expectedReduction(t, op, n, rank * p + i);
        case BROADCAST -> i -> Pattern.input(null, root, i);
        case ALL_GATHER -> i -> Pattern.input(null, (int) (i / p), i % p);
        // only the root's output is written; elsewhere it stays zero, or in place keeps the rank's input
        case REDUCE -> i -> isRoot ? Pattern.expectedReduction(t, op, n, i) : inPlace ? Pattern.input(fillOp, rank, i) : 0;
        case GATHER -> i -> isRoot ? Pattern.input(null, (int) (i / p), i % p)
            : inPlace && i / p == rank ? Pattern.input(null, rank, i % p) : 0;
        case SCATTER -> i -> Pattern.input(null, root, rank * p + i);
        case ALL_TO_ALL -> i -> Pattern.input(null, (int) (i / p), rank * p + i % p);
        case SEND, RECV -> i -> Pattern.input(null, (rank - 1 + n) % n, i);
      };
      return Pattern.countWrong(stage.host, t, call.recv.length(), expected);
    }

    private Buffer view(Buffer block, long byteOffset, long length) {
      return Buffer.view(config.type(), block.memory(), block.byteOffset() + byteOffset, length);
    }
  }

  /** One collective call with its buffers, ready to be issued again and again. */
  record Call(Communicator comm, Coll coll, Buffer send, Buffer recv, ReduceOp op, int root) {
    void issue() {
      Stream s = comm.stream();
      switch (coll.collective) {
        case ALL_REDUCE -> comm.allReduce(send, recv, op, s);
        case ALL_GATHER -> comm.allGather(send, recv, s);
        case REDUCE_SCATTER -> comm.reduceScatter(send, recv, op, s);
        case BROADCAST -> comm.broadcast(send, recv, root, s);
        case REDUCE -> comm.reduce(send, recv, op, root, s);
        case GATHER -> comm.gather(send, recv, root, s);
        case SCATTER -> comm.scatter(send, recv, root, s);
        case ALL_TO_ALL -> comm.allToAll(send, recv, s);
        case SEND, RECV -> { // nccl-tests' sendrecv: a ring, in one group
          int n = comm.size();
          comm.groupStart();
          comm.send(send, (comm.rank() + 1) % n, s);
          comm.recv(recv, (comm.rank() - 1 + n) % n, s);
          comm.groupEnd();
        }
      }
    }
  }
}
