package dev.commplan.bench.jmh;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.bench.plans.Many200Plan;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
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
 * The host cost of one step of 200 all-reduces of {@code count} floats, in place, per step: the
 * generated {@code Many200Plan}'s {@code execute}, against 200 direct calls, the same in one group,
 * and one call over all the bytes. (In place, so that on one GPU, where NCCL does an in-place
 * collective of one rank as nothing, only the host's work is left to measure.) Run with {@code -prof gc}: {@code gc.alloc.rate.norm} is the bytes
 * allocated per step ({@code execute} should allocate none).
 *
 * <p>{@code execute} only enqueues; so that the queue stays bounded, each invocation enqueues {@link
 * #BATCH} steps and then synchronizes once, and the time is per step: the enqueue cost plus a
 * {@code 1/BATCH} share of one synchronize, and, because a stream runs only one step at a time, at
 * least the device's time per step. On the local backend the device is the stream's worker thread, so
 * the figure includes its queueing (a lock and a wake-up per enqueued item) and the copies themselves;
 * on one GPU it is the host's launch cost wherever that exceeds the GPU's time per step.
 *
 * <p>One rank: the cluster's one communicator is taken out of {@code Cluster.call} and driven from
 * JMH's thread, which is then the only thread that uses it.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.MICROSECONDS)
@Warmup(iterations = Steady.WARMUP_ITERATIONS, time = Steady.WARMUP_SECONDS)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public abstract class ExecuteBench {
  /** Steps enqueued per synchronize. */
  public static final int BATCH = 16;
  static final int K = 200;

  /** Elements per buffer. */
  @Param({"256"})
  public int count;

  private Cluster cluster;
  private Communicator comm;
  private Stream stream;
  private Many200Plan plan;
  private Buffer[] buffers;
  private Buffer flat;

  /** The backend's name, {@code local} or {@code nccl}. */
  protected abstract String backend();

  @Setup(Level.Trial)
  public void setUp() {
    cluster = Backends.cluster(backend(), 1);
    comm = cluster.call(c -> c).get(0);
    stream = comm.stream();
    plan = Many200Plan.builder().n(count).build(comm);
    buffers = new Buffer[K];
    for (int i = 0; i < K; i++) {
      buffers[i] = Buffer.allocate(DataType.F32, comm, count);
    }
    flat = Buffer.allocate(DataType.F32, comm, (long) K * count);
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    stream.synchronize();
    plan.close();
    for (Buffer b : buffers) {
      b.close();
    }
    flat.close();
    cluster.close();
  }

  /** One {@code execute} of the generated 200-buffer plan. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void planExecute() {
    for (int b = 0; b < BATCH; b++) {
      plan.execute(stream);
    }
    stream.synchronize();
  }

  /** 200 direct {@code allReduce} calls. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void separateCalls() {
    for (int b = 0; b < BATCH; b++) {
      for (int i = 0; i < K; i++) {
        comm.allReduce(buffers[i], buffers[i], ReduceOp.SUM, stream);
      }
    }
    stream.synchronize();
  }

  /** 200 direct calls inside one {@code groupStart()}/{@code groupEnd()}. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void groupedCalls() {
    for (int b = 0; b < BATCH; b++) {
      comm.groupStart();
      for (int i = 0; i < K; i++) {
        comm.allReduce(buffers[i], buffers[i], ReduceOp.SUM, stream);
      }
      comm.groupEnd();
    }
    stream.synchronize();
  }

  /** One call over the same 200 x count floats: the floor. */
  @Benchmark
  @OperationsPerInvocation(BATCH)
  public void flatCall() {
    for (int b = 0; b < BATCH; b++) {
      comm.allReduce(flat, flat, ReduceOp.SUM, stream);
    }
    stream.synchronize();
  }
}
