package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.OrderingStress;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@link OrderingStress} on the local backend (issue 15's audit): the stream worker must see every host
 * write made before the enqueue, and a read after {@code synchronize()} every result, on world sizes 1,
 * 2, 3, 4, 5 and 8. Sizes up to 1 MiB, with a 64 KiB "chunk" for the boundary sizes.
 */
class LocalOrderingStressTest {
  private static final int CYCLES = Integer.getInteger("commplan.stress.localCycles", 200);

  @ParameterizedTest
  @ValueSource(ints = {1, 2, 3, 4, 5, 8})
  void everyHostWriteIsSeenAndEveryReadIsCurrent(int ranks) {
    OrderingStress.Config config = new OrderingStress.Config(CYCLES, 15L + ranks, 1L << 20, 64L << 10, 0);
    AtomicLong wrong = new AtomicLong();
    List<String> report = new ArrayList<>();
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      cluster.run(comm -> {
        long sendBytes = config.maxBytes() + OrderingStress.MAX_SLACK;
        Buffer[] send = new Buffer[2];
        Buffer[] recv = new Buffer[2];
        for (int t = 0; t < 2; t++) {
          DataType type = t == 0 ? DataType.F32 : DataType.U8;
          send[t] = Buffer.allocate(type, comm, sendBytes / type.byteSize());
          recv[t] = Buffer.allocate(type, comm, sendBytes * ranks / type.byteSize());
        }
        OrderingStress.Resources resources = new OrderingStress.Resources() {
          @Override
          public List<OrderingStress.NamedStream> streams() {
            return List.of(new OrderingStress.NamedStream("own stream", comm.stream()));
          }

          @Override
          public List<OrderingStress.Pool> pools() {
            return List.of(new OrderingStress.Pool("allocated", send, recv));
          }
        };
        OrderingStress stress = new OrderingStress(comm, resources, config);
        String summary = stress.run();
        wrong.addAndGet(stress.wrongElements());
        if (comm.rank() == 0) {
          report.add(summary);
        }
        for (int t = 0; t < 2; t++) {
          send[t].close();
          recv[t].close();
        }
      });
    }
    System.out.println(report.isEmpty() ? "" : report.getFirst().lines().findFirst().orElse(""));
    assertEquals(0, wrong.get(), () -> String.join("\n", report));
  }
}
