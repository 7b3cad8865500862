package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.model.Collective;
import dev.commplan.runtime.BackendUnavailableException;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.PlanBuildException;
import dev.commplan.runtime.nccl.binding.NcclEnums;
import dev.commplan.runtime.nccl.binding.NcclTypeSupport;
import dev.commplan.runtime.nccl.calls.SendRecvStandIns;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What runs without a GPU of issue 17's NCCL side: the send/receive path that stands in for ncclGather,
 * ncclScatter and ncclAlltoAll on an NCCL before 2.28, checked by simulating NCCL's matching (each
 * rank's transfers in issue order, the k-th send from a to b meeting b's k-th receive from a) on every
 * world size from 1 to 9, every root, in and out of place; and the version gate of the fp8 types.
 */
class NcclSendRecvPathTest {
  private static final long SLICE = 3; // elements per rank's slice, one byte each
  private static final long BASE = 1L << 20; // rank r's memory starts at r·BASE; send at 0, recv at BASE / 2

  private record Transfer(boolean send, long pointer, int peer) {}

  /** Runs the transfers of every rank through NCCL's matching; memory is one long per element address. */
  private static Map<Long, Long> simulate(Collective c, int ranks, int root, boolean inPlace, Map<Long, Long> memory) {
    List<List<Transfer>> issued = new ArrayList<>();
    for (int rank = 0; rank < ranks; rank++) {
      long[] sr = buffers(c, rank, root, inPlace);
      List<Transfer> mine = new ArrayList<>();
      SendRecvStandIns.viaSendRecv(c, sr[0], sr[1], SLICE, root, rank, ranks, (s, p, peer) -> mine.add(new Transfer(s, p, peer)));
      for (Transfer t : mine) {
        assertTrue(t.peer() >= 0 && t.peer() < ranks, t.toString());
      }
      issued.add(mine);
    }
    Map<Long, Long> after = new HashMap<>(memory);
    for (int a = 0; a < ranks; a++) {
      for (int b = 0; b < ranks; b++) {
        ArrayDeque<Transfer> sends = new ArrayDeque<>();
        ArrayDeque<Transfer> recvs = new ArrayDeque<>();
        for (Transfer t : issued.get(a)) {
          if (t.send() && t.peer() == b) {
            sends.add(t);
          }
        }
        for (Transfer t : issued.get(b)) {
          if (!t.send() && t.peer() == a) {
            recvs.add(t);
          }
        }
        assertEquals(sends.size(), recvs.size(), c + " " + a + "->" + b + " on " + ranks + ", root " + root);
        while (!sends.isEmpty()) {
          Transfer s = sends.poll();
          Transfer r = recvs.poll();
          for (long i = 0; i < SLICE; i++) {
            after.put(r.pointer() + i, memory.getOrDefault(s.pointer() + i, -1L)); // reads the memory before
          }
        }
      }
    }
    return after;
  }

  /** {send, recv} device pointers of {@code rank}, with NCCL's in-place arrangement. */
  private static long[] buffers(Collective c, int rank, int root, boolean inPlace) {
    long base = rank * BASE;
    long recv = base + BASE / 2;
    if (!inPlace) {
      return new long[] {base, recv};
    }
    return switch (c) {
      case GATHER -> new long[] {recv + rank * SLICE, recv};
      case SCATTER -> new long[] {base, base + rank * SLICE};
      default -> throw new AssertionError(c);
    };
  }

  private static long input(int rank, long i) {
    return rank * 1000L + i;
  }

  @Test
  void gatherScatterAndAllToAllThroughSendAndRecvMeanWhatNcclsFunctionsMean() {
    for (int ranks = 1; ranks <= 9; ranks++) {
      for (int root = 0; root < ranks; root++) {
        for (boolean inPlace : new boolean[] {false, true}) {
          // Gather: rank r's slice lands at slice r of the root's recv; nothing else changes
          Map<Long, Long> mem = new HashMap<>();
          for (int r = 0; r < ranks; r++) {
            long[] sr = buffers(Collective.GATHER, r, root, inPlace);
            for (long i = 0; i < SLICE; i++) {
              mem.put(sr[0] + i, input(r, i));
            }
          }
          Map<Long, Long> after = simulate(Collective.GATHER, ranks, root, inPlace, mem);
          long rootRecv = buffers(Collective.GATHER, root, root, inPlace)[1];
          for (int r = 0; r < ranks; r++) {
            for (long i = 0; i < SLICE; i++) {
              assertEquals(input(r, i), after.get(rootRecv + r * SLICE + i), "gather " + ranks + "/" + root);
            }
          }
          assertEquals(mem.size() + (inPlace ? ranks - 1 : ranks) * SLICE, after.size(), "gather writes only the root");

          // Scatter: slice r of the root's send lands in rank r's recv
          mem = new HashMap<>();
          long rootSend = buffers(Collective.SCATTER, root, root, inPlace)[0];
          for (long i = 0; i < ranks * SLICE; i++) {
            mem.put(rootSend + i, input(root, i));
          }
          after = simulate(Collective.SCATTER, ranks, root, inPlace, mem);
          for (int r = 0; r < ranks; r++) {
            long recv = buffers(Collective.SCATTER, r, root, inPlace)[1];
            for (long i = 0; i < SLICE; i++) {
              assertEquals(input(root, r * SLICE + i), after.get(recv + i), "scatter " + ranks + "/" + root);
            }
          }
        }
      }
      // AllToAll: slice j of rank i's send lands at slice i of rank j's recv
      Map<Long, Long> mem = new HashMap<>();
      for (int r = 0; r < ranks; r++) {
        for (long i = 0; i < ranks * SLICE; i++) {
          mem.put(r * BASE + i, input(r, i));
        }
      }
      Map<Long, Long> after = simulate(Collective.ALL_TO_ALL, ranks, 0, false, mem);
      for (int j = 0; j < ranks; j++) {
        for (int i = 0; i < ranks; i++) {
          for (long e = 0; e < SLICE; e++) {
            assertEquals(input(i, j * SLICE + e), after.get(j * BASE + BASE / 2 + i * SLICE + e), "all-to-all " + ranks);
          }
        }
      }
    }
  }

  @Test
  void fp8NeedsNccl224AndSaysSoForPlansAndDirectCalls() {
    NcclVersion old = NcclVersion.decode(22304);
    PlanBuildException plan = assertInstanceOf(PlanBuildException.class,
        NcclTypeSupport.unsupported(old, DataType.F8E4M3, null, true));
    assertEquals("DataType.F8E4M3 (ncclFloat8e4m3) needs NCCL 2.24.3 or newer, and this process loaded NCCL 2.23.4;"
        + " use F16 or BF16, or a newer NCCL (point -Dcommplan.nccl.library at it)", plan.getMessage());
    assertInstanceOf(BackendUnavailableException.class,
        NcclTypeSupport.unsupported(old, DataType.F8E5M2, ReduceOp.SUM, false));
    assertNull(NcclTypeSupport.unsupported(NcclVersion.decode(22403), DataType.F8E5M2, ReduceOp.AVG, true));
    assertNull(NcclTypeSupport.unsupported(old, DataType.BF16, ReduceOp.AVG, true));
    assertInstanceOf(BackendUnavailableException.class,
        NcclTypeSupport.unsupported(NcclVersion.decode(2804), DataType.BF16, null, true));
    assertArrayEquals(new int[] {10, 11},
        new int[] {NcclEnums.dataType(DataType.F8E4M3), NcclEnums.dataType(DataType.F8E5M2)});
  }
}
