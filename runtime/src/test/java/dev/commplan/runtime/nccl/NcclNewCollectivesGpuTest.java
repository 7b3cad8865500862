package dev.commplan.runtime.nccl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.model.Collective;
import dev.commplan.runtime.Cluster;
import dev.commplan.conformance.CollectiveCorrectnessSuite;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Case;
import dev.commplan.conformance.CollectiveCorrectnessSuite.Expected;
import dev.commplan.conformance.CollectiveReference;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.nccl.binding.raw.NcclCollectives;
import dev.commplan.runtime.nccl.calls.SendRecvStandIns;
import dev.commplan.runtime.plan.Plan;
import dev.commplan.runtime.plan.PlanBuilder;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Issue 17 on NCCL: Gather, Scatter and AllToAll on both paths (their own functions where the loaded NCCL
 * has them, and the grouped ncclSend/ncclRecv that stands in for them before 2.28, forced with {@link
 * SendRecvStandIns#viaSendRecv}), describe() naming the path taken, and the fp8 types (NCCL 2.24 or later: skipped,
 * saying so, on an older one; AVG on fp8 refused before NCCL, {@code [CommPlan/Fp8Average]}). One rank per
 * GPU of this machine; skips without a GPU.
 */
@NcclGpuTest
class NcclNewCollectivesGpuTest {
  private static Cluster cluster;
  private static int ranks;

  @BeforeAll
  static void start() {
    ranks = NcclBackend.deviceCount();
    cluster = NcclBackend.cluster(ranks);
  }

  @AfterAll
  static void stop() {
    SendRecvStandIns.viaSendRecv(Boolean.getBoolean(SendRecvStandIns.VIA_SEND_RECV_PROPERTY));
    if (cluster != null) {
      cluster.close();
    }
  }

  private static List<String> runCases(List<Case> cases) {
    List<String> failures = new ArrayList<>();
    for (Case c : cases) {
      for (long count : CollectiveCorrectnessSuite.DEFAULT_COUNTS) {
        Expected expected = CollectiveCorrectnessSuite.expected(c, count, CollectiveReference.typeAccumulation(c.type()));
        List<String> got = cluster.call(comm -> {
          long[] bits = CollectiveCorrectnessSuite.runOnRank(comm, c, count, expected);
          String f = CollectiveCorrectnessSuite.checkRank(c, count, expected, comm.rank(), bits);
          return f == null ? "" : f;
        });
        got.stream().filter(f -> !f.isEmpty()).forEach(failures::add);
      }
    }
    return failures;
  }

  private static List<Case> movingCases() {
    List<Case> cases = new ArrayList<>();
    for (Collective c : List.of(Collective.GATHER, Collective.SCATTER, Collective.ALL_TO_ALL)) {
      for (DataType t : List.of(DataType.F32, DataType.U8, DataType.BF16, DataType.I64)) {
        cases.addAll(CollectiveCorrectnessSuite.cases(c, t, ranks));
      }
    }
    return cases;
  }

  @Test
  void gatherScatterAndAllToAllOnTheirOwnFunctionsAndThroughSendRecv() {
    for (boolean viaSendRecv : new boolean[] {false, true}) {
      SendRecvStandIns.viaSendRecv(viaSendRecv);
      List<String> failures = runCases(movingCases());
      assertTrue(failures.isEmpty(), (viaSendRecv ? "send/recv path: " : "native path: ") + failures);
      for (String described : cluster.call(comm -> {
        PlanBuilder b = new PlanBuilder("gpu.Paths", comm, 0);
        int part = b.buffer("part", DataType.F32, 4, "{\"4\"}", null);
        int all = b.buffer("all", DataType.F32, 4L * ranks, "{\"ranks\", \"4\"}", null);
        b.collective(0, Collective.GATHER, part, all, null, 0);
        try (Plan plan = b.build()) {
          plan.execute(comm.stream());
          comm.stream().synchronize();
          return plan.describe();
        }
      })) {
        String path = viaSendRecv || !NcclCollectives.hasGather()
            ? "(grouped ncclSend/ncclRecv)" : "(ncclGather)";
        assertTrue(described.contains("gather F32 root 0, count 4 " + path), described);
      }
    }
    SendRecvStandIns.viaSendRecv(false);
  }

  @Test
  void fp8CollectivesOnNccl224() {
    NcclVersion version = NcclBackend.version();
    org.junit.jupiter.api.Assumptions.assumeTrue(version.atLeast(NcclVersion.FP8),
        "fp8 needs NCCL " + NcclVersion.FP8 + ", this is " + version);
    List<Case> cases = new ArrayList<>();
    for (DataType t : List.of(DataType.F8E4M3, DataType.F8E5M2)) {
      for (Collective c : CollectiveCorrectnessSuite.collectives()) {
        cases.addAll(CollectiveCorrectnessSuite.cases(c, t, ranks));
      }
    }
    List<String> failures = runCases(cases);
    assertEquals(List.of(), failures);
  }

  /**
   * AVG on fp8 never reaches NCCL (which would scale by 1/ranks rounded to fp8, or fail on one rank):
   * direct calls and plans are refused first, with {@code [CommPlan/Fp8Average]}, as on every backend.
   * The cases above ({@link CollectiveCorrectnessSuite#ops}) leave AVG out on fp8 for this reason.
   */
  @Test
  void fp8AverageIsRefusedBeforeNccl() {
    String tag = dev.commplan.model.RuleId.FP8_AVERAGE.tag();
    List<String> refused = cluster.call(comm -> {
      List<String> out = new ArrayList<>();
      try (dev.commplan.runtime.F8E4M3Buffer e4m3 = dev.commplan.runtime.F8E4M3Buffer.allocate(comm, ranks);
          dev.commplan.runtime.F8E5M2Buffer e5m2 = dev.commplan.runtime.F8E5M2Buffer.allocate(comm, ranks)) {
        out.add(org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> comm.allReduce(e4m3, e4m3, dev.commplan.annotations.ReduceOp.AVG, comm.stream())).getMessage());
        out.add(org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> comm.reduce(e5m2, e5m2, dev.commplan.annotations.ReduceOp.AVG, 0, comm.stream())).getMessage());
      }
      PlanBuilder b = new PlanBuilder("gpu.Fp8Average", comm, 0);
      int g = b.buffer("g", DataType.F8E4M3, 4L * ranks, "{\"ranks\", \"4\"}", null);
      b.reduceScatter(0, g, g, dev.commplan.annotations.ReduceOp.AVG);
      out.add(org.junit.jupiter.api.Assertions.assertThrows(dev.commplan.runtime.PlanBuildException.class, b::build)
          .getMessage());
      return String.join("\n", out);
    });
    for (String messages : refused) {
      for (String message : messages.split("\n")) {
        assertTrue(message.startsWith(tag), message);
      }
    }
  }
}
