package dev.commplan.bench.jmh;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.CapturedPlan;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OperationsPerInvocation;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host cost of a captured plan's {@code launch()} (issue 18), against {@code execute} of the same
 * plan and one direct call over the same bytes, per step; run with {@code -prof gc}, whose {@code
 * gc.alloc.rate.norm} must be 0 B/op for {@code launch} and {@code execute}.
 *
 * <p>Two plans ({@link #plan}), both 200 buffers of {@link #count} elements, out of place:
 * <ul>
 *   <li>{@code coalesced}: 200 float SUM all-reduces, which the builder lays out contiguously and issues
 *       as one call (target (a): a launch at most 0.75× one raw flat call);
 *   <li>{@code mixed}: 200 all-reduces over 4 data types (float, half, int32, double) and 2 ops (SUM,
 *       MAX), 25 buffers each, which cannot coalesce into one call: 8 calls in one group (target (b): a
 *       launch at most 1.5× one raw flat call over the same bytes).
 * </ul>
 *
 * <p>As {@link ExecuteBench}: each invocation enqueues {@link #BATCH} steps then synchronizes once, so
 * the figure is the enqueue cost plus a share of one wait, and at least the device's time per step. On
 * the local backend {@code launch()} executes the plan (no CUDA graphs), so {@code launch} and {@code
 * execute} should agree there. One rank, driven from JMH's thread.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = Steady.WARMUP_ITERATIONS, time = Steady.WARMUP_SECONDS)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public abstract class LaunchBench {
  /** Steps enqueued per synchronize. */
  public static final int BATCH = 16;
  static final int K = 200;
  static final DataType[] MIXED_TYPES = {DataType.F32, DataType.F16, DataType.I32, DataType.F64};
  static final ReduceOp[] MIXED_OPS = {ReduceOp.SUM, ReduceOp.MAX};

  /** {@code coalesced} (one call) or {@code mixed} (4 types × 2 ops: 8 calls). */
  @Param({"coalesced", "mixed"})
  public String plan;

  /** Elements per buffer. */
  @Param({"256"})
  public int count;

  private Cluster cluster;
  private Stream stream;
  private Communicator comm;
  private Plan built;
  private CapturedPlan captured;
  private Buffer flatSend;
  private Buffer flatRecv;

  /** The backend's name, {@code local} or {@code nccl}. */
  protected abstract String backend();

  /** The plan of {@code kind} ({@code coalesced} or {@code mixed}) on {@code comm}; also used by probes. */
  public static Plan build(Communicator comm, String kind, int count) {
    PlanBuilder b = new PlanBuilder("bench.Launch." + kind, comm, 0);
    int[] send = new int[K];
    int[] recv = new int[K];
    String shape = "{\"" + count + "\"}";
    for (int i = 0; i < K; i++) {
      DataType type = kind.equals("mixed") ? MIXED_TYPES[i % MIXED_TYPES.length] : DataType.F32;
      send[i] = b.buffer("s" + i, type, count, shape, null);
      recv[i] = b.buffer("r" + i, type, count, shape, null);
    }
    for (int i = 0; i < K; i++) {
      ReduceOp op = kind.equals("mixed") ? MIXED_OPS[(i / MIXED_TYPES.length) % MIXED_OPS.length] : ReduceOp.SUM;
      b.allReduce(0, send[i], recv[i], op);
    }
    return b.build();
  }

  /** The plan's bytes per rank (send side): what one flat call moves. */
  public static long bytes(String kind, int count) {
    long total = 0;
    for (int i = 0; i < K; i++) {
      DataType type = kind.equals("mixed") ? MIXED_TYPES[i % MIXED_TYPES.length] : DataType.F32;
      total += (long) count * type.byteSize();
    }
    return total;
  }

  @Setup(Level.Trial)
  public void setUp() {
    cluster = Backends.cluster(backend(), 1);
    comm = cluster.call(c -> c).get(0);
    stream = comm.stream();
    built = build(comm, plan, count);
    captured = built.capture(stream);
    long floats = bytes(plan, count) / 4;
    flatSend = Buffer.allocate(DataType.F32, comm, floats);
    flatRecv = Buffer.allocate(DataType.F32, comm, floats);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    stream.synchronize();
    captured.close();
    built.close();
    flatSend.close();
    flatRecv.close();
    cluster.close();
  }

  /** One {@code launch()} of the captured plan (a CUDA graph launch on NCCL). */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void launch() {
    for (int b = 0; b < BATCH; b++) {
      captured.launch();
    }
    stream.synchronize();
  }

  /** One {@code execute} of the same plan. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void execute() {
    for (int b = 0; b < BATCH; b++) {
      built.execute(stream);
    }
    stream.synchronize();
  }

  /** One direct float all-reduce over the plan's bytes, out of place: the floor of the targets. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void flatCall() {
    for (int b = 0; b < BATCH; b++) {
      comm.allReduce(flatSend, flatRecv, ReduceOp.SUM, stream);
    }
    stream.synchronize();
  }
}
