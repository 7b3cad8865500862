package dev.commplan.runtime.nccl;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.OrderingStress;
import dev.commplan.runtime.nccl.binding.CheckedCuda;
import dev.commplan.runtime.nccl.binding.raw.Cuda;
import dev.commplan.runtime.nccl.memory.HostCopies;
import dev.commplan.runtime.nccl.sharing.GpuSharing;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * {@link OrderingStress} on real GPUs (issue 15): host write, execute at once, synchronize, read at once,
 * check every element; over the communicator's own stream and three wrapped ones (a non-blocking stream,
 * a blocking one, the legacy stream 0), buffers the backend allocated and device pointers wrapped with
 * {@link NcclInterop}, and sizes up to 256 MiB with many within 64 bytes of a multiple of the host-copy
 * chunk ({@link HostCopies#CHUNK_BYTES}). At each world size of {@link GpuRanks} (one rank per GPU by
 * default; several on one GPU with NCCL 2.30 and the opt-in, where the collectives move data between ranks).
 *
 * <p>{@code -Dcommplan.stress.cycles=N} (default 2,000, what {@code bin/gpu-run} runs; docs/gpu.md
 * records the longest runs: 90,000 and 40,000 cycles), {@code -Dcommplan.stress.seed=S}, {@code -Dcommplan.stress.maxBytes=B}.
 */
@NcclRanksGpuTest
class NcclOrderingStressTest {
  private static final OrderingStress.Config CONFIG = new OrderingStress.Config(
      Integer.getInteger("commplan.stress.cycles", 2000), Long.getLong("commplan.stress.seed", 15L),
      Long.getLong("commplan.stress.maxBytes", 256L << 20), HostCopies.CHUNK_BYTES,
      Integer.getInteger("commplan.stress.hugeCycles", 12));

  static Stream<Integer> ranks() {
    return GpuRanks.requested().stream();
  }

  @ParameterizedTest(name = "{0} ranks")
  @MethodSource("ranks")
  void everyHostWriteIsSeenAndEveryReadIsCurrent(int ranks) {
    GpuRanks.assumeRunnable(ranks);
    AtomicLong wrong = new AtomicLong();
    List<String> report = new ArrayList<>();
    try (Cluster cluster = NcclBackend.cluster(ranks)) {
      cluster.run(comm -> {
        try (GpuResources resources = new GpuResources(comm)) {
          OrderingStress stress = new OrderingStress(comm, resources, CONFIG);
          String summary = stress.run();
          wrong.addAndGet(stress.wrongElements());
          synchronized (report) {
            report.add(summary);
          }
        }
      });
    }
    System.out.println(String.join("\n", report));
    assertEquals(0, wrong.get(), () -> "wrong elements after host write -> execute -> synchronize -> read:\n" + report);
  }

  /** Per rank: the own stream and three wrapped ones; an allocated pool and a pool of wrapped device pointers. */
  private static final class GpuResources implements OrderingStress.Resources, AutoCloseable {
    private final NcclCommunicator comm;
    private final Arena arena = Arena.ofConfined();
    private final List<OrderingStress.NamedStream> streams = new ArrayList<>();
    private final List<OrderingStress.Pool> pools = new ArrayList<>();
    private final List<Buffer> allocated = new ArrayList<>();
    private final long[] rawStreams = new long[2];
    private final long[] rawPointers = new long[2];

    GpuResources(Communicator c) {
      this.comm = (NcclCommunicator) c;
      long sendBytes = CONFIG.maxBytes() + OrderingStress.MAX_SLACK;
      long recvBytes = (CONFIG.maxBytes() + OrderingStress.MAX_SLACK) * comm.size();
      Buffer[] send = new Buffer[2];
      Buffer[] recv = new Buffer[2];
      for (int t = 0; t < 2; t++) {
        DataType type = type(t);
        send[t] = Buffer.allocate(type, comm, sendBytes / type.byteSize());
        recv[t] = Buffer.allocate(type, comm, recvBytes / type.byteSize());
        allocated.add(send[t]);
        allocated.add(recv[t]);
      }
      pools.add(new OrderingStress.Pool("allocated", send, recv));
      comm.useDevice();
      rawPointers[0] = CheckedCuda.cudaMalloc(sendBytes);
      rawPointers[1] = CheckedCuda.cudaMalloc(recvBytes);
      Buffer[] wrappedSend = new Buffer[2];
      Buffer[] wrappedRecv = new Buffer[2];
      for (int t = 0; t < 2; t++) {
        DataType type = type(t);
        wrappedSend[t] = NcclInterop.wrapBuffer(comm, type, rawPointers[0], sendBytes / type.byteSize());
        wrappedRecv[t] = NcclInterop.wrapBuffer(comm, type, rawPointers[1], recvBytes / type.byteSize());
      }
      pools.add(new OrderingStress.Pool("wrapped device pointer", wrappedSend, wrappedRecv));
      streams.add(new OrderingStress.NamedStream("own stream", comm.stream()));
      rawStreams[0] = createStream(Cuda.STREAM_NON_BLOCKING);
      rawStreams[1] = createStream(0);
      streams.add(new OrderingStress.NamedStream("wrapped non-blocking", NcclInterop.wrapStream(comm, rawStreams[0])));
      streams.add(new OrderingStress.NamedStream("wrapped blocking", NcclInterop.wrapStream(comm, rawStreams[1])));
      GpuSharing sharing = comm.sharing();
      if (sharing.oneContext() && sharing.ranksPerGpu() != 1) { // one legacy stream per device of a process
        assertThrows(IllegalArgumentException.class, () -> NcclInterop.wrapStream(comm, 0));
      } else {
        streams.add(new OrderingStress.NamedStream("wrapped legacy (0)", NcclInterop.wrapStream(comm, 0)));
      }
    }

    private static DataType type(int t) {
      return t == 0 ? DataType.F32 : DataType.U8;
    }

    private long createStream(int flags) {
      MemorySegment out = arena.allocate(ADDRESS);
      CheckedCuda.cuda("cudaStreamCreateWithFlags", Cuda.cudaStreamCreateWithFlags(out, flags));
      return out.get(JAVA_LONG, 0);
    }

    @Override
    public List<OrderingStress.NamedStream> streams() {
      return streams;
    }

    @Override
    public List<OrderingStress.Pool> pools() {
      return pools;
    }

    @Override
    public void close() {
      allocated.forEach(Buffer::close);
      comm.useDevice();
      for (long s : rawStreams) {
        if (s != 0) {
          Cuda.cudaStreamSynchronize(s);
          Cuda.cudaStreamDestroy(s);
        }
      }
      for (long p : rawPointers) {
        if (p != 0) {
          Cuda.cudaFree(p);
        }
      }
      arena.close();
    }
  }
}
