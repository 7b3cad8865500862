package dev.commplan.runtime;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.stream.IntStream;

/**
 * Host writes and reads around collectives, the way users fail (issue 15), for any backend: each cycle
 * writes fresh values from the host, executes at once, synchronizes, reads back at once and checks every
 * element against a reference. Randomized over every collective (issue 17's included: Reduce and Gather
 * also check that the ranks but the root keep their poison; Send and Recv as a wrapped ring, one group),
 * in place and out of place (AllToAll and the ring: out of place only), direct calls
 * and plans (plan-owned buffers, zeroed at build, and bound ones), the backend's streams and buffer pools
 * ({@link Resources}: on NCCL its own and wrapped streams, allocated and wrapped device pointers), F32
 * and U8 (byte-granular sizes), and sizes from 4 B to {@link Config#maxBytes()} with many just below
 * and above multiples of {@link Config#chunkBytes()} (the NCCL backend's host-copy chunk).
 *
 * <p>The values change every cycle, so a stale read or a write that had not landed shows as wrong
 * elements, whatever the timing. Every rank draws the same choices (one seed).
 */
public final class OrderingStress {
  /**
   * @param hugeCycles at most this many cycles above 32 MiB (each moves and checks hundreds of MiB)
   */
  public record Config(int cycles, long seed, long maxBytes, long chunkBytes, int hugeCycles) {}

  /** A stream cycles may run on, by name. */
  public record NamedStream(String name, Stream stream) {}

  /**
   * Where direct calls and bound plans take their buffers from: per data type ({@code [0]} F32, {@code
   * [1]} U8) a send block of at least {@code maxBytes + }{@value #MAX_SLACK} bytes and a receive block of
   * {@code ranks} times that.
   */
  public record Pool(String name, Buffer[] send, Buffer[] recv) {}

  /** The backend's streams and pools for one rank. */
  public interface Resources {
    List<NamedStream> streams();

    List<Pool> pools();
  }

  /** How far into its pool a cycle's buffers may start. */
  public static final long MAX_SLACK = 1024;

  private static final float F32_POISON = -7777f;
  private static final byte U8_POISON = (byte) 0xA5;

  enum Op { ALL_REDUCE, BROADCAST, ALL_GATHER, REDUCE_SCATTER, REDUCE, GATHER, SCATTER, ALL_TO_ALL, SEND_RECV }

  /** What {@link #expected} returns where the receive side must keep its poison (Reduce, Gather off the root). */
  private static final int UNTOUCHED = Integer.MIN_VALUE;

  enum Way { DIRECT, PLAN_OWNED, PLAN_BOUND }

  private final Communicator comm;
  private final Resources resources;
  private final Config config;
  private final int n;
  private final int rank;
  private float[] f32Scratch = new float[0];
  private byte[] u8Scratch = new byte[0];
  private long wrongElements;
  private final TreeMap<String, long[]> tally = new TreeMap<>();
  /** Nanoseconds per phase of the cycles: set-up (plan build, views), host writes, execute and synchronize, read and check, plan close. */
  private final long[] phaseNanos = new long[5];
  private static final String[] PHASES = {"set-up", "write", "execute+sync", "read+check", "close"};

  public OrderingStress(Communicator comm, Resources resources, Config config) {
    this.comm = comm;
    this.resources = resources;
    this.config = config;
    this.n = comm.size();
    this.rank = comm.rank();
  }

  /** The wrong elements this rank saw in the cycles run so far. */
  public long wrongElements() {
    return wrongElements;
  }

  /** Runs the cycles; returns a summary (the figures line, then cycles and wrong elements per kind). */
  public String run() {
    List<NamedStream> streams = resources.streams();
    List<Pool> pools = resources.pools();
    SplittableRandom random = new SplittableRandom(config.seed()); // the same on every rank: same choices
    int huge = 0;
    long bytesMoved = 0;
    long t0 = System.nanoTime();
    for (int cycle = 0; cycle < config.cycles(); cycle++) {
      Op op = Op.values()[random.nextInt(Op.values().length)];
      DataType type = random.nextInt(3) == 0 ? DataType.U8 : DataType.F32;
      boolean inPlace = random.nextBoolean() && op != Op.ALL_TO_ALL && op != Op.SEND_RECV;
      Way way = Way.values()[random.nextInt(Way.values().length)];
      NamedStream stream = streams.get(random.nextInt(streams.size()));
      Pool pool = pools.get(random.nextInt(pools.size()));
      long bytes = size(random, huge < config.hugeCycles());
      if (bytes > (32L << 20) + 64) { // beyond two chunks' boundary sizes
        huge++;
      }
      long count = Math.max(1, bytes / type.byteSize());
      if (op == Op.REDUCE_SCATTER || op == Op.ALL_GATHER || op == Op.GATHER || op == Op.SCATTER
          || op == Op.ALL_TO_ALL) {
        count = Math.max(1, count / n); // the per-rank slice; the whole is n times that
      }
      int root = random.nextInt(n);
      long slack = random.nextInt((int) (MAX_SLACK / 64)) * 64L; // aligned, not always at the pool's start
      int writeHow = random.nextInt(3);
      int readHow = random.nextInt(3);
      long wrongBefore = wrongElements;
      bytesMoved += cycle(cycle, op, type, inPlace, way, stream.stream(), pool, count, root, slack, writeHow, readHow);
      String key = String.format(Locale.ROOT, "%-14s %-3s %-12s %-10s %-22s %s", op, type,
          inPlace ? "in place" : "out of place", way, stream.name(), way == Way.PLAN_OWNED ? "plan-owned" : pool.name());
      long[] t = tally.computeIfAbsent(key, k -> new long[2]);
      t[0]++;
      t[1] += wrongElements - wrongBefore;
      if (rank == 0 && config.cycles() >= 10_000 && (cycle + 1) % (config.cycles() / 10) == 0) {
        System.out.printf(Locale.ROOT, "[progress] %d of %d cycles, %.0f s, wrong elements so far %d%n", cycle + 1,
            config.cycles(), (System.nanoTime() - t0) / 1e9, wrongElements);
        System.out.flush(); // a run cut short by its time limit still shows how far it got
      }
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    StringBuilder out = new StringBuilder(String.format(Locale.ROOT,
        "[figures] ordering stress on %s: %d cycles on %d rank(s), seed %d, %.2f GiB written and read, %d cycles over"
            + " 32 MiB, %.1f s; wrong elements on rank %d: %d%n", comm.backendName(), config.cycles(), n,
        config.seed(), bytesMoved / (double) (1L << 30), huge, seconds, rank, wrongElements));
    out.append("  time per phase:");
    for (int i = 0; i < PHASES.length; i++) {
      out.append(String.format(Locale.ROOT, " %s %.1f s", PHASES[i], phaseNanos[i] / 1e9));
    }
    out.append(String.format(Locale.ROOT, "%n"));
    tally.forEach((k, v) -> out.append(String.format(Locale.ROOT, "  %s  cycles %6d  wrong %d%n", k, v[0], v[1])));
    return out.toString();
  }

  /**
   * Bytes of one side: mostly small (4 B .. 64 KiB), many medium (up to 1 MiB, then 1 .. 8 MiB, where
   * the H200 lost writes most often before issue 15), 3% within 64 bytes of one or two times {@link
   * Config#chunkBytes()}, and a few large ones (8 .. 32 MiB, or up to {@link Config#maxBytes()} while
   * {@code hugeAllowed}).
   */
  private long size(SplittableRandom random, boolean hugeAllowed) {
    int pick = random.nextInt(100);
    long bytes;
    if (pick < 64) {
      bytes = 4L << random.nextInt(15); // 4 B .. 64 KiB, powers of two ...
      bytes += random.nextInt(3) == 0 ? random.nextLong(bytes) : 0; // ... and between them
    } else if (pick < 91) {
      bytes = (64L << 10) + random.nextLong(1L << 20);
    } else if (pick < 96) {
      bytes = (1L << 20) + random.nextLong(7L << 20);
    } else if (pick < 99) {
      long k = random.nextInt(4) == 0 ? 2 : 1;
      bytes = k * config.chunkBytes() + random.nextInt(129) - 64;
    } else if (hugeAllowed && random.nextInt(4) == 0) {
      bytes = (32L << 20) + random.nextLong(Math.max(1, config.maxBytes() - (32L << 20) + 1));
    } else {
      bytes = (8L << 20) + random.nextLong(24L << 20);
    }
    return Math.max(4, Math.min(bytes, config.maxBytes()));
  }

  /** One cycle; returns the bytes written and read back by the host. */
  private long cycle(int cycle, Op op, DataType type, boolean inPlace, Way way, Stream stream, Pool pool,
      long count, int root, long slack, int writeHow, int readHow) {
    int t = type == DataType.F32 ? 0 : 1;
    long sendCount = op == Op.REDUCE_SCATTER || op == Op.SCATTER || op == Op.ALL_TO_ALL ? count * n : count;
    long recvCount = op == Op.ALL_GATHER || op == Op.GATHER || op == Op.ALL_TO_ALL ? count * n : count;
    long t0 = System.nanoTime();
    Plan plan = null;
    Buffer send;
    Buffer recv;
    Buffer whole; // in place: the one buffer a plan is given
    if (way == Way.PLAN_OWNED) {
      PlanBuilder b = new PlanBuilder("stress.Cycle" + cycle, comm, 0);
      int s = b.buffer("send", type, inPlace ? Math.max(sendCount, recvCount) : sendCount, "{\"stress\"}", null);
      int r = inPlace ? s : b.buffer("recv", type, recvCount, "{\"stress\"}", null);
      declare(b, op, s, r, root);
      plan = b.build();
      whole = plan.buffer(s);
      send = inPlace ? sliceForSend(op, whole, count) : whole;
      recv = inPlace ? sliceForRecv(op, whole, count) : plan.buffer(r);
    } else {
      Buffer sendPool = pool.send()[t];
      Buffer recvPool = pool.recv()[t];
      long offset = sendPool.byteOffset() + slack;
      if (inPlace) {
        whole = Buffer.view(type, recvPool.memory(), recvPool.byteOffset() + slack, Math.max(sendCount, recvCount));
        send = sliceForSend(op, whole, count);
        recv = sliceForRecv(op, whole, count);
      } else {
        whole = null;
        send = Buffer.view(type, sendPool.memory(), offset, sendCount);
        recv = Buffer.view(type, recvPool.memory(), recvPool.byteOffset() + slack, recvCount);
      }
      if (way == Way.PLAN_BOUND) {
        PlanBuilder b = new PlanBuilder("stress.Cycle" + cycle, comm, 0);
        int s = b.buffer("send", type, inPlace ? whole.length() : sendCount, "{\"stress\"}", inPlace ? whole : send);
        int r = inPlace ? s : b.buffer("recv", type, recvCount, "{\"stress\"}", recv);
        declare(b, op, s, r, root);
        plan = b.build();
        if (inPlace) {
          whole = plan.buffer(s); // the plan's handle on it is the bound buffer itself
        }
      }
    }
    long t1 = System.nanoTime();
    phaseNanos[0] += t1 - t0;
    try {
      // 1. host writes: poison what the collective must overwrite, then this cycle's inputs
      if (!inPlace || op == Op.ALL_GATHER || op == Op.GATHER) {
        fill(inPlace ? whole : recv, writeHow);
      }
      write(send, cycle, rank, writeHow);
      long t2 = System.nanoTime();
      phaseNanos[1] += t2 - t1;
      // 2. at once: the collective
      if (plan != null) {
        plan.execute(stream);
      } else {
        direct(op, send, recv, root, stream);
      }
      // 3. synchronize that stream, then read at once and check
      stream.synchronize();
      long t3 = System.nanoTime();
      phaseNanos[2] += t3 - t2;
      wrongElements += check(op, recv, cycle, count, root, readHow, inPlace);
      phaseNanos[3] += System.nanoTime() - t3;
      return send.byteSize() + recv.byteSize();
    } finally {
      long t4 = System.nanoTime();
      if (plan != null) {
        plan.close();
      }
      phaseNanos[4] += System.nanoTime() - t4;
    }
  }

  private static void declare(PlanBuilder b, Op op, int s, int r, int root) {
    switch (op) {
      case ALL_REDUCE -> b.allReduce(0, s, r, ReduceOp.SUM);
      case BROADCAST -> b.broadcast(0, s, r, root);
      case ALL_GATHER -> b.allGather(0, s, r);
      case REDUCE_SCATTER -> b.reduceScatter(0, s, r, ReduceOp.SUM);
      case REDUCE -> b.collective(0, Collective.REDUCE, s, r, ReduceOp.SUM, root);
      case GATHER -> b.collective(0, Collective.GATHER, s, r, null, root);
      case SCATTER -> b.collective(0, Collective.SCATTER, s, r, null, root);
      case ALL_TO_ALL -> b.collective(0, Collective.ALL_TO_ALL, s, r, null, -1);
      case SEND_RECV -> {
        b.send(0, s, "(rank + 1) % ranks");
        b.recv(0, r, "(rank - 1) % ranks");
      }
    }
  }

  private void direct(Op op, Buffer send, Buffer recv, int root, Stream stream) {
    switch (op) {
      case ALL_REDUCE -> comm.allReduce(send, recv, ReduceOp.SUM, stream);
      case BROADCAST -> comm.broadcast(send, recv, root, stream);
      case ALL_GATHER -> comm.allGather(send, recv, stream);
      case REDUCE_SCATTER -> comm.reduceScatter(send, recv, ReduceOp.SUM, stream);
      case REDUCE -> comm.reduce(send, recv, ReduceOp.SUM, root, stream);
      case GATHER -> comm.gather(send, recv, root, stream);
      case SCATTER -> comm.scatter(send, recv, root, stream);
      case ALL_TO_ALL -> comm.allToAll(send, recv, stream);
      case SEND_RECV -> {
        comm.groupStart();
        comm.send(send, (rank + 1) % n, stream);
        comm.recv(recv, (rank - 1 + n) % n, stream);
        comm.groupEnd();
      }
    }
  }

  /** In place, NCCL's arrangement: AllGather and Gather send the rank-th slice; the others the whole buffer. */
  private Buffer sliceForSend(Op op, Buffer whole, long count) {
    return op == Op.ALL_GATHER || op == Op.GATHER ? slice(whole, rank * count, count) : whole;
  }

  /** In place: ReduceScatter's and Scatter's result is the rank-th slice; the others write the whole buffer. */
  private Buffer sliceForRecv(Op op, Buffer whole, long count) {
    return op == Op.REDUCE_SCATTER || op == Op.SCATTER ? slice(whole, rank * count, count) : whole;
  }

  private static Buffer slice(Buffer b, long from, long length) {
    return Buffer.view(b.dataType(), b.memory(), b.byteOffset() + from * b.dataType().byteSize(), length);
  }

  /** This rank's input, element i of cycle c: small integers, so that F32 sums are exact. */
  private static int value(int cycle, int rank, long i) {
    return (int) ((cycle * 31L + i * 7 + rank * 13) % 61) - 30;
  }

  private void fill(Buffer b, int how) {
    if (b instanceof F32Buffer f) {
      if (how == 0) {
        f.fill(F32_POISON);
      } else {
        float[] a = f32(b.length());
        java.util.Arrays.fill(a, 0, (int) b.length(), F32_POISON);
        f.copyFrom(0, a, 0, (int) b.length());
      }
    } else {
      ((U8Buffer) b).fill(U8_POISON);
    }
  }

  /** Writes this rank's inputs of the cycle: whole-array copyFrom, partial copyFrom, or set per element. */
  private void write(Buffer b, int cycle, int r, int how) {
    int len = (int) b.length();
    boolean small = len <= 64;
    if (b instanceof F32Buffer f) {
      if (how == 0 && small) {
        for (int i = 0; i < len; i++) {
          f.set(i, value(cycle, r, i));
        }
        return;
      }
      float[] a = how == 1 ? new float[len] : f32(len);
      indices(len).forEach(i -> a[i] = value(cycle, r, i));
      if (how == 1) {
        f.copyFrom(a);
      } else {
        f.copyFrom(0, a, 0, len);
      }
    } else {
      U8Buffer u = (U8Buffer) b;
      if (how == 0 && small) {
        for (int i = 0; i < len; i++) {
          u.set(i, (byte) value(cycle, r, i));
        }
        return;
      }
      byte[] a = how == 1 ? new byte[len] : u8(len);
      indices(len).forEach(i -> a[i] = (byte) value(cycle, r, i));
      if (how == 1) {
        u.copyFrom(a);
      } else {
        u.copyFrom(0, a, 0, len);
      }
    }
  }

  /** 0 .. len-1, in parallel when long (the host's loops would otherwise dominate the large cycles). */
  private static IntStream indices(int len) {
    IntStream range = IntStream.range(0, len);
    return len >= (1 << 20) ? range.parallel() : range;
  }

  /**
   * The expected element i of the receive side, as an int (U8 compares its low byte), or {@link
   * #UNTOUCHED} where the poison must still be there.
   */
  private int expected(Op op, int cycle, long count, int root, long i, boolean inPlace) {
    return switch (op) {
      case ALL_REDUCE -> sum(cycle, i);
      case BROADCAST -> value(cycle, root, i);
      case ALL_GATHER -> value(cycle, (int) (i / count), i % count);
      case REDUCE_SCATTER -> sum(cycle, rank * count + i);
      case REDUCE -> rank == root ? sum(cycle, i) : inPlace ? value(cycle, rank, i) : UNTOUCHED;
      case GATHER -> rank == root ? value(cycle, (int) (i / count), i % count)
          : inPlace && i / count == rank ? value(cycle, rank, i % count) : UNTOUCHED;
      case SCATTER -> value(cycle, root, rank * count + i);
      case ALL_TO_ALL -> value(cycle, (int) (i / count), rank * count + i % count);
      case SEND_RECV -> value(cycle, (rank - 1 + n) % n, i);
    };
  }

  private int sum(int cycle, long i) {
    int s = 0;
    for (int r = 0; r < n; r++) {
      s += value(cycle, r, i);
    }
    return s;
  }

  /** Reads the receive side back (toArray, partial copyTo, or get per element) and counts wrong elements. */
  private long check(Op op, Buffer recv, int cycle, long count, int root, int how, boolean inPlace) {
    int len = (int) recv.length();
    if (recv instanceof F32Buffer f) {
      float[] got;
      if (how == 0 && len <= 64) {
        got = new float[len];
        for (int i = 0; i < len; i++) {
          got[i] = f.get(i);
        }
      } else if (how == 1) {
        got = f.toArray();
      } else {
        got = f32(len);
        f.copyTo(0, got, 0, len);
      }
      return indices(len).filter(i -> {
        int want = expected(op, cycle, count, root, i, inPlace);
        return got[i] != (want == UNTOUCHED ? F32_POISON : want);
      }).count();
    }
    U8Buffer u = (U8Buffer) recv;
    byte[] got;
    if (how == 0 && len <= 64) {
      got = new byte[len];
      for (int i = 0; i < len; i++) {
        got[i] = u.get(i);
      }
    } else if (how == 1) {
      got = u.toArray();
    } else {
      got = u8(len);
      u.copyTo(0, got, 0, len);
    }
    return indices(len).filter(i -> {
      int want = expected(op, cycle, count, root, i, inPlace);
      return got[i] != (want == UNTOUCHED ? U8_POISON : (byte) want);
    }).count();
  }

  private float[] f32(long length) {
    if (f32Scratch.length < length) {
      f32Scratch = new float[(int) length];
    }
    return f32Scratch;
  }

  private byte[] u8(long length) {
    if (u8Scratch.length < length) {
      u8Scratch = new byte[(int) length];
    }
    return u8Scratch;
  }
}
