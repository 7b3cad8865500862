package dev.commplan.runtime.nccl;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.Cluster;
import dev.commplan.conformance.CollectiveCorrectnessSuite;
import dev.commplan.conformance.CollectiveReference;
import dev.commplan.runtime.DataType;
import java.util.Arrays;
import java.util.stream.LongStream;

/**
 * The correctness suite on the NCCL backend, at the world sizes of {@link GpuRanks} (one rank per GPU by
 * default; {@code -Dcommplan.gpu.ranks=2,4,8} on one GPU with NCCL 2.30 and the opt-in, where the ranks
 * really communicate). Every collective, in and out of place, every type (fp8 from NCCL 2.24) and op, on
 * random data against the host reference, at the suite's odd counts; and with real peers, each
 * collective's first case (SUM, root 0) also at counts one element either side of {@value
 * #BOUNDARY_PROPERTY} bytes a rank (default 32 KiB, the data of one step of NCCL's LL protocol; in place
 * one above, out of place one below). Skips, saying why, where there is no GPU or no size runs.
 */
@NcclRanksGpuTest
class NcclCollectiveCorrectnessTest extends CollectiveCorrectnessSuite {
  /** Per-rank byte sizes whose neighbours are tested: {@value} (a comma list; empty for none). */
  static final String BOUNDARY_PROPERTY = "commplan.gpu.boundaryBytes";

  @Override
  protected String backend() {
    return "nccl";
  }

  @Override
  protected Cluster cluster(int ranks) {
    return NcclBackend.cluster(ranks);
  }

  @Override
  protected int[] worldSizes() {
    return GpuRanks.runnable();
  }

  /**
   * The suite's counts, and for a collective's first case between real peers (SUM or no op, root 0 or
   * none) one element above (in place) or below (out of place) each boundary. The host reference is exact
   * (BigInteger, BigDecimal) and so slow: the boundaries are for a few cases, not the whole matrix.
   */
  @Override
  protected long[] counts(Case c) {
    boolean first = (c.op() == null || c.op() == ReduceOp.SUM) && c.root() <= 0;
    if (c.ranks() < 2 || !first) {
      return counts();
    }
    LongStream boundaries = Arrays.stream(System.getProperty(BOUNDARY_PROPERTY, "32768").split(","))
        .map(String::strip).filter(s -> !s.isEmpty()).mapToLong(Long::parseLong)
        .map(bytes -> Math.max(1, bytes / c.type().byteSize() + (c.inPlace() ? 1 : -1)));
    return LongStream.concat(Arrays.stream(counts()), boundaries).toArray();
  }

  /** The fp8 types need NCCL 2.24 ({@link NcclVersion#FP8}); on an older NCCL they are left out. */
  @Override
  protected boolean supports(DataType type) {
    return !type.isFloat8() || NcclBackend.version().atLeast(NcclVersion.FP8);
  }

  /** NCCL passes partial sums between GPUs in the buffer's own type, so F16/BF16 sums round per hop. */
  @Override
  protected double accumulationRoundoff(DataType type) {
    return CollectiveReference.typeAccumulation(type);
  }
}
