package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.model.RuleId;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.F8E4M3Buffer;
import dev.commplan.runtime.F8E5M2Buffer;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.local.LocalCluster;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code [CommPlan/Fp8Average]} on the local backend: AVG on F8E4M3 and F8E5M2 is refused, by every
 * collective that reduces, in place and out of place, called directly ({@link IllegalArgumentException})
 * and declared in a plan ({@link PlanBuildException}), on one rank (where NCCL fails) and on three (where
 * NCCL would scale by 1/3 rounded to fp8); nothing is enqueued, and the same calls with SUM then work.
 */
class Fp8AverageTest {
  private static final List<DataType> FP8 = List.of(DataType.F8E4M3, DataType.F8E5M2);
  private static final List<Collective> REDUCING = List.of(Collective.ALL_REDUCE, Collective.REDUCE,
      Collective.REDUCE_SCATTER);

  private static void call(Communicator comm, Collective c, Buffer send, Buffer recv, ReduceOp op) {
    switch (c) {
      case ALL_REDUCE -> comm.allReduce(send, recv, op, comm.stream());
      case REDUCE -> comm.reduce(send, recv, op, 0, comm.stream());
      case REDUCE_SCATTER -> comm.reduceScatter(send, recv, op, comm.stream());
      default -> throw new AssertionError(c);
    }
  }

  private static void fillWithOnes(Buffer b) {
    if (b instanceof F8E4M3Buffer e4m3) {
      e4m3.fill(1f);
    } else {
      ((F8E5M2Buffer) b).fill(1f);
    }
  }

  private static float first(Buffer b) {
    return b instanceof F8E4M3Buffer e4m3 ? e4m3.get(0) : ((F8E5M2Buffer) b).get(0);
  }

  private static String assertRefused(Class<? extends RuntimeException> type, Runnable call, String... parts) {
    String message = assertThrows(type, call::run).getMessage();
    assertTrue(message.startsWith(RuleId.FP8_AVERAGE.tag() + " "), message);
    for (String part : parts) {
      assertTrue(message.contains(part), () -> "'" + part + "' missing from: " + message);
    }
    return message;
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 3})
  void directCallsAreRefusedThenSumWorks(int ranks) {
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<String> sums = cluster.call(comm -> {
        List<String> out = new ArrayList<>();
        for (DataType type : FP8) {
          for (Collective c : REDUCING) {
            long sendCount = c == Collective.REDUCE_SCATTER ? 2L * ranks : 2;
            long recvCount = 2;
            try (Buffer send = Buffer.allocate(type, comm, sendCount);
                Buffer recv = Buffer.allocate(type, comm, recvCount)) {
              assertRefused(IllegalArgumentException.class, () -> call(comm, c, send, recv, ReduceOp.AVG),
                  c.label() + " on rank " + comm.rank(), "AVG on " + type, "Fix: reduce with SUM");
              Buffer inPlaceRecv = c == Collective.REDUCE_SCATTER
                  ? Buffer.view(type, send.memory(), send.byteOffset() + comm.rank() * recvCount, recvCount) : send;
              assertRefused(IllegalArgumentException.class, () -> call(comm, c, send, inPlaceRecv, ReduceOp.AVG),
                  "AVG on " + type);
              // Nothing was enqueued: the communicator is as it was, and SUM on fp8 works.
              fillWithOnes(send);
              call(comm, c, send, recv, ReduceOp.SUM);
              comm.stream().synchronize();
              if (c != Collective.REDUCE || comm.rank() == 0) {
                out.add(type + " " + c.label() + " " + first(recv));
              }
            }
          }
        }
        return String.join(", ", out);
      });
      for (int r = 0; r < ranks; r++) {
        String sums0 = sums.get(r);
        for (DataType type : FP8) {
          assertTrue(sums0.contains(type + " all-reduce " + (float) ranks), sums0);
          assertTrue(sums0.contains(type + " reduce-scatter " + (float) ranks), sums0);
        }
      }
      assertTrue(sums.getFirst().contains("F8E4M3 reduce " + (float) ranks), sums.getFirst());
    }
  }

  @ParameterizedTest(name = "{0} ranks")
  @ValueSource(ints = {1, 3})
  void plansAreRefusedAtBuild(int ranks) {
    try (LocalCluster cluster = new LocalCluster(ranks)) {
      List<String> messages = cluster.call(comm -> {
        List<String> out = new ArrayList<>();
        for (DataType type : FP8) {
          for (Collective c : REDUCING) {
            PlanBuilder b = new PlanBuilder("t.Fp8", comm, 0);
            boolean scatters = c == Collective.REDUCE_SCATTER;
            int g = b.buffer("g", type, scatters ? 4L * ranks : 4, scatters ? "{\"ranks\", \"4\"}" : "{\"4\"}", null);
            b.collective(0, c, g, g, ReduceOp.AVG, c.hasRoot() ? 0 : -1);
            out.add(assertRefused(PlanBuildException.class, b::build, "plan t.Fp8", "'g'", "AVG on " + type));
          }
        }
        return out.size() + " refused";
      });
      assertEquals(List.of(), messages.stream().filter(m -> !m.equals("6 refused")).toList());
    }
  }
}
