package dev.commplan.bench.jmh;

import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.Stream;
import dev.commplan.runtime.guard.Guards;
import dev.commplan.runtime.guard.HostAccessGuard;
import dev.commplan.runtime.guard.InFlightWork;
import dev.commplan.runtime.guard.StreamProgress;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The host-access guard's own work, without the stream around it (single-threaded, so much less
 * sensitive to a busy machine than {@link LocalGuardBench}): what one execute of a one-step 200-buffer
 * plan adds ({@code mark200}: a ticket, the step's marker, 200 buffer marks, as {@code Plan.execute}
 * does), what a synchronize adds ({@code synchronizeRecord}), and one host-read check of a marked,
 * synchronized buffer ({@code checkRead}).
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = Steady.WARMUP_ITERATIONS, time = Steady.WARMUP_SECONDS)
@Measurement(iterations = 10, time = 1)
@Fork(value = 2, jvmArgsAppend = "--enable-native-access=ALL-UNNAMED")
@State(Scope.Thread)
public class GuardCostBench {
  private Cluster cluster;
  private Stream stream;
  private StreamProgress progress;
  private InFlightWork work;
  private Buffer[] buffers;
  private String[] fields;

  @Setup(Level.Trial)
  public void setUp() {
    cluster = Backends.cluster("local", 1);
    Communicator comm = cluster.call(c -> c).get(0);
    stream = comm.stream();
    progress = Guards.progressOf(stream);
    work = new InFlightWork("bench.Many200", 0);
    buffers = new Buffer[ExecuteBench.K];
    fields = new String[ExecuteBench.K];
    for (int i = 0; i < buffers.length; i++) {
      buffers[i] = Buffer.allocate(DataType.F32, comm, 4);
      fields[i] = "g" + i;
    }
    mark200();
    progress.synchronizedTo(progress.issued());
  }

  @TearDown(Level.Trial)
  public void tearDown() {
    cluster.close();
  }

  /** What the guard adds to one execute of a one-step plan of 200 buffers. */
  @Benchmark
  public long mark200() {
    long ticket = progress.issue();
    work.enqueued(stream, progress, ticket);
    for (int i = 0; i < buffers.length; i++) {
      Guards.of(buffers[i]).markWritten(work, fields[i]);
    }
    return ticket;
  }

  /** What the guard adds to one synchronize: read the issued ticket, record it. */
  @Benchmark
  public long synchronizeRecord() {
    long ticket = progress.issued();
    progress.synchronizedTo(ticket);
    return ticket;
  }

  /** One host-read check of a marked buffer whose stream has been synchronized (passes). */
  @Benchmark
  public Object checkRead() {
    HostAccessGuard guard = Guards.of(buffers[123]);
    return guard.pendingWriter(); // what a host read asks; null: the read may go ahead
  }
}
