package dev.commplan.runtime.local;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Buffer;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.I32Buffer;
import dev.commplan.runtime.I64Buffer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the correctness suite's small counts cannot reach: slices that span several kernel chunks. */
class LocalKernelsTest {
  /** Per rank, more than two chunks, and not a multiple of anything involved. */
  private static final int COUNT = 2 * KernelScratch.chunkElements(DataType.I32) + 3 * 7 + 1;

  @Test
  void slicesCoverTheRangeWithoutGapsOrOverlap() {
    for (long elements : new long[] {0, 1, 7, 1003, Long.MAX_VALUE / 3}) {
      for (int ranks = 1; ranks <= 9; ranks++) {
        assertEquals(0, LocalKernels.sliceStart(elements, 0, ranks));
        assertEquals(elements, LocalKernels.sliceStart(elements, ranks, ranks));
        for (int r = 0; r < ranks; r++) {
          long size = LocalKernels.sliceStart(elements, r + 1, ranks) - LocalKernels.sliceStart(elements, r, ranks);
          assertEquals(true, size >= elements / ranks && size <= elements / ranks + 1, "balanced slices");
        }
      }
    }
  }

  @Test
  void largeInPlaceAllReduceAndReduceScatterAcrossChunks() {
    try (LocalCluster cluster = new LocalCluster(3)) {
      List<long[]> results = cluster.call(comm -> {
        int n = comm.size();
        try (I64Buffer x = I64Buffer.allocate(comm, COUNT); I32Buffer whole = I32Buffer.allocate(comm, (long) n * COUNT)) {
          long[] values = new long[COUNT];
          for (int i = 0; i < COUNT; i++) {
            values[i] = (long) i * (comm.rank() + 1);
          }
          x.copyFrom(values);
          int[] input = new int[n * COUNT];
          for (int i = 0; i < input.length; i++) {
            input[i] = i + comm.rank();
          }
          whole.copyFrom(input);
          Buffer mine = Buffer.view(DataType.I32, whole.memory(), (long) comm.rank() * COUNT * 4, COUNT);
          comm.allReduce(x, x, ReduceOp.SUM, comm.stream());
          comm.reduceScatter(whole, mine, ReduceOp.MIN, comm.stream());
          comm.stream().synchronize();
          long[] out = new long[2 * COUNT];
          System.arraycopy(x.toArray(), 0, out, 0, COUNT);
          int[] slice = ((I32Buffer) mine).toArray();
          for (int i = 0; i < COUNT; i++) {
            out[COUNT + i] = slice[i];
          }
          return out;
        }
      });
      for (int rank = 0; rank < 3; rank++) {
        long[] want = new long[2 * COUNT];
        for (int i = 0; i < COUNT; i++) {
          want[i] = 6L * i; // i·1 + i·2 + i·3
          want[COUNT + i] = (long) rank * COUNT + i; // the minimum over ranks is rank 0's, which adds 0
        }
        assertArrayEquals(want, results.get(rank), "rank " + rank);
      }
    }
  }
}
