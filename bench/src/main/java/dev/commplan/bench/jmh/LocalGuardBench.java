package dev.commplan.bench.jmh;

import dev.commplan.bench.plans.Many200Plan;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.Stream;
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
 * What the host-access guard costs, on the local backend, one rank: the generated 200-buffer plan
 * ({@code Many200Plan}, 200 in-place all-reduces of {@code count} floats, one step) built with the guard
 * on and off (the system property {@code commplan.hostAccessGuard}, the switch generated plans have).
 *
 * <ul>
 *   <li>{@code executeBatch}: {@value ExecuteBench#BATCH} executes, then one synchronize, per invocation;
 *       time per execute (as {@link ExecuteBench#planExecute}). With the guard on, each execute marks the
 *       200 buffers (two field writes each) and takes a ticket; each synchronize records one.
 *   <li>{@code executeSynchronize}: one execute and one synchronize.
 *   <li>{@code get}: element reads of a buffer the plan writes, after the synchronize (the guard then
 *       checks and lets them through); time per element.
 * </ul>
 *
 * Run {@code java -jar bench/target/commplan-bench.jar jmh LocalGuardBench -prof gc}: {@code
 * gc.alloc.rate.norm} of the execute benchmarks is the heap allocated per execute.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = Steady.WARMUP_ITERATIONS, time = Steady.WARMUP_SECONDS)
@Measurement(iterations = 7, time = 1)
@Fork(value = 1, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class LocalGuardBench {
  /** Elements read per {@code get} invocation. */
  static final int READS = 256;

  /** Whether the plan is built with the host-access guard. */
  @Param({"true", "false"})
  public boolean guard;

  /** Elements per buffer. */
  @Param({"256"})
  public int count;

  private Cluster cluster;
  private Stream stream;
  private Many200Plan plan;
  private F32Buffer read;

  @Setup(Level.Trial)
  public void setUp() {
    cluster = Backends.cluster("local", 1);
    Communicator comm = cluster.call(c -> c).get(0);
    stream = comm.stream();
    String previous = System.getProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY);
    System.setProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY, Boolean.toString(guard));
    try {
      plan = Many200Plan.builder().n(count).build(comm);
    } finally {
      if (previous == null) {
        System.clearProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY);
      } else {
        System.setProperty(PlanBuilder.HOST_ACCESS_GUARD_PROPERTY, previous);
      }
    }
    read = plan.g123();
    read.fill(1.5f);
    plan.execute(stream); // marks g123 (with the guard on) so that get() really checks a ticket
    stream.synchronize();
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    stream.synchronize();
    plan.close();
    cluster.close();
  }

  /** {@value ExecuteBench#BATCH} executes of the 200-buffer plan, then one synchronize; time per execute. */
  @Benchmark
  @OperationsPerInvocation(ExecuteBench.BATCH)
  public void executeBatch() {
    for (int b = 0; b < ExecuteBench.BATCH; b++) {
      plan.execute(stream);
    }
    stream.synchronize();
  }

  /** One execute and one synchronize. */
  @Benchmark
  public void executeSynchronize() {
    plan.execute(stream);
    stream.synchronize();
  }

  /** {@value #READS} element reads of a buffer the plan writes, after synchronize; time per read. */
  @Benchmark
  @OperationsPerInvocation(READS)
  public float get() {
    float sum = 0;
    for (int i = 0; i < READS; i++) {
      sum += read.get(i);
    }
    return sum;
  }
}
