package dev.commplan.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The numbers the tool prints are nccl-tests' numbers. */
class FormulasTest {
  @Test
  void busbwFactorsAreNcclTests() {
    assertEquals(1.5, Coll.ALL_REDUCE.busFactor(4));
    assertEquals(0.75, Coll.ALL_GATHER.busFactor(4));
    assertEquals(0.75, Coll.REDUCE_SCATTER.busFactor(4));
    assertEquals(1.0, Coll.BROADCAST.busFactor(4));
    assertEquals(1.0, Coll.parse("reduce").busFactor(4));
    assertEquals(0.75, Coll.parse("gather").busFactor(4));
    assertEquals(0.75, Coll.parse("scatter").busFactor(4));
    assertEquals(0.75, Coll.parse("alltoall").busFactor(4));
    assertEquals(1.0, Coll.SEND_RECV.busFactor(4));
  }

  @Test
  void theCollectivesAreTheModelsWithSendAndRecvAsSendrecv() {
    assertEquals(List.of("all-reduce", "broadcast", "all-gather", "reduce-scatter", "reduce", "gather", "scatter",
        "all-to-all", "sendrecv"), Coll.values().stream().map(c -> c.label).toList());
    assertEquals(List.of("all_reduce_perf", "broadcast_perf", "all_gather_perf", "reduce_scatter_perf", "reduce_perf",
        "gather_perf", "scatter_perf", "alltoall_perf", "sendrecv_perf"),
        Coll.values().stream().map(Coll::perfBinary).toList());
    assertEquals(List.of("AllReduce", "Broadcast", "AllGather", "ReduceScatter", "Reduce", "Gather", "Scatter",
        "AlltoAll", "SendRecv"), Coll.values().stream().map(c -> c.ncclName).toList());
    assertEquals(Coll.SEND_RECV, Coll.parse("SendRecv"));
    assertEquals(Coll.parse("all-to-all"), Coll.parse("alltoall"));
  }

  @Test
  void gatherScatterAndAllToAllCountPerRankInSixteenByteUnitsAsNcclTests() {
    // gather_perf -b 1M on 3 ranks, float: (262144 / 3) & ~3 = 87380 per rank; S = 87380·3·4 bytes
    Coll gather = Coll.parse("gather");
    long p = gather.paramCount((1 << 20) / 4, 4, 3);
    assertEquals(87380, p);
    assertEquals(87380L * 3 * 4, gather.algBytes(p, 4, 3));
    assertEquals(87380L * 3, gather.recvCount(p, 3));
    assertEquals(87380, gather.sendCount(p, 3));
    Coll allToAll = Coll.parse("alltoall");
    assertEquals(87380L * 3, allToAll.sendCount(p, 3));
    assertEquals(87380L * 3, allToAll.recvCount(p, 3));
    assertEquals(262144, Coll.parse("reduce").paramCount(262144, 4, 3));
    assertEquals(262144, Coll.SEND_RECV.paramCount(262144, 4, 3));
    assertEquals(1L << 20, Coll.SEND_RECV.algBytes(262144, 4, 3));
    assertEquals(0, Coll.parse("scatter").paramCount(2, 4, 3)); // fewer than 16 bytes a rank: nothing
  }

  @Test
  void allGatherAndReduceScatterCountTheWholeArray() {
    // nccl-tests all_gather_perf -b 1M on 4 ranks, float: count 65536 per rank, algbw over 1 MiB.
    long p = Coll.ALL_GATHER.paramCount((1 << 20) / 4, 4, 4);
    assertEquals(65536, p);
    assertEquals(1 << 20, Coll.ALL_GATHER.algBytes(p, 4, 4));
    assertEquals(1 << 20, Coll.ALL_GATHER.recvCount(p, 4) * 4);
    assertEquals(1 << 20, Coll.REDUCE_SCATTER.sendCount(p, 4) * 4);
    assertEquals(1 << 20, Coll.ALL_REDUCE.algBytes(Coll.ALL_REDUCE.paramCount((1 << 20) / 4, 4, 4), 4, 4));
    assertEquals(1.048576, Coll.ALL_GATHER.algbw(p, 4, 4, 1e-3), 1e-12); // GB/s are 10^9 bytes a second
  }

  @Test
  void sizesDoubleFromMinToMax() {
    assertEquals(List.of(8L, 16L, 32L, 64L), Sweep.sizes(8, 64, 2));
    assertEquals(28, Sweep.sizes(8, 1L << 30, 2).size());
  }

  @Test
  void gpt2SmallHas148TensorsAnd124MParameters() {
    assertEquals(148, Gpt2.TENSORS.size());
    assertEquals(124_439_808L, Gpt2.PARAMETERS);
  }

  @Test
  void checkCountsWrongElements() {
    try (Arena arena = Arena.ofConfined()) {
      for (DataType t : DataType.values()) {
        MemorySegment host = arena.allocate(16L * t.byteSize());
        for (int i = 0; i < 16; i++) {
          Pattern.write(host, t, i, (long) Pattern.expectedReduction(t, ReduceOp.SUM, 3, i));
        }
        Pattern.Expected want = i -> Pattern.expectedReduction(t, ReduceOp.SUM, 3, i);
        assertEquals(0, Pattern.countWrong(host, t, 16, want), t.name());
        Pattern.write(host, t, 5, 99);
        assertEquals(1, Pattern.countWrong(host, t, 16, want), t.name());
      }
    }
  }
}
