package dev.commplan.runtime.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.commplan.annotations.ReduceOp;
import dev.commplan.runtime.DataType;
import dev.commplan.runtime.local.LocalCluster;
import org.junit.jupiter.api.Test;

class ScheduleDotTest {
  @Test
  void theDotGraphHasABoxPerStepANodePerCallAndTheStepOrder() {
    try (LocalCluster cluster = new LocalCluster(2)) {
      String dot = cluster.call(comm -> {
        PlanBuilder b = new PlanBuilder("p.\"Grads\"", comm, 0);
        int w = b.buffer("w", DataType.F32, 6, "{\"6\"}", null);
        int bias = b.buffer("bias", DataType.F32, 2, "{\"2\"}", null);
        int part = b.buffer("part", DataType.F16, 3, "{\"3\"}", null);
        int all = b.buffer("all", DataType.F16, 6, "{\"ranks\", \"3\"}", null);
        b.allReduce(0, w, w, ReduceOp.AVG);
        b.allReduce(0, bias, bias, ReduceOp.AVG);
        b.allGather(1, part, all);
        try (Plan plan = b.build()) {
          return plan.schedule().toDot();
        }
      }).get(0);
      assertTrue(dot.startsWith("digraph \"p.\\\"Grads\\\"\" {"), dot);
      assertTrue(dot.contains("label=\"step 0: 1 call in one group\""), dot);
      assertTrue(dot.contains("label=\"step 1: 1 call in one group\""), dot);
      assertTrue(dot.contains("s0c0 [label=\"all-reduce F32 AVG (in place)\\ncount 8, 32 B per rank\\nw, bias\"]"), dot);
      assertTrue(dot.contains("s1c0 [label=\"all-gather F16\\ncount 3, 6 B per rank\\npart\"]"), dot);
      assertTrue(dot.contains("s0c0 -> s1c0 [ltail=cluster_0, lhead=cluster_1]"), dot);
      assertEquals(dot.chars().filter(ch -> ch == '{').count(), dot.chars().filter(ch -> ch == '}').count(), dot);
    }
  }
}
