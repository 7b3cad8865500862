package dev.commplan.processor;

import static com.google.common.truth.Truth.assertThat;
import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.compile;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import java.util.List;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;

/**
 * Compiles a plan, loads the generated class, and runs it on the local backend (4 ranks as threads): the
 * generated code against the real runtime, and the shapes the processor accepted against what NCCL does;
 * and a plan over a 2 × 2 mesh, built with {@code build(Mesh)}, whose calls run over each axis.
 */
class EndToEndTest {
  @Test
  void generatedPlanRunsOnTheLocalBackend() throws Exception {
    JavaFileObject plan = source("p.Grads",
        "@CommPlan(dims = {\"hidden\"})",
        "class Grads {",
        "  @AllReduce(op = ReduceOp.SUM) @Shape({\"2\", \"hidden\"}) F32Buffer w;",
        "  @AllGather(into = \"all\", step = 1) @Shape(\"hidden\") F32Buffer part;",
        "  @Shape({\"ranks\", \"hidden\"}) F32Buffer all;",
        "  @ReduceScatter(into = \"slice\") @Shape(\"ranks*hidden\") I32Buffer whole;",
        "  @Shape(\"hidden\") I32Buffer slice;",
        "}");
    JavaFileObject driver = source("p.Driver",
        "import java.util.List;",
        "public final class Driver {",
        "  private Driver() {}",
        "  public static List<String> run() {",
        "    try (Cluster cluster = Backends.cluster(\"local\", 4)) {",
        "      return cluster.call(comm -> {",
        "        int r = comm.rank();",
        "        try (GradsPlan plan = GradsPlan.builder().hidden(3).build(comm)) {",
        "          plan.w().fill(r + 1);",
        "          plan.part().fill(10f * r);",
        "          int[] whole = new int[12];",
        "          for (int i = 0; i < 12; i++) { whole[i] = i; }",
        "          plan.whole().copyFrom(whole);",
        "          plan.execute(comm.stream());",
        "          comm.stream().synchronize();",
        "          return java.util.Arrays.toString(plan.w().toArray()) + \" \"",
        "              + java.util.Arrays.toString(plan.all().toArray()) + \" \"",
        "              + java.util.Arrays.toString(plan.slice().toArray());",
        "        }",
        "      });",
        "    }",
        "  }",
        "}");
    List<String> results = runDriver(plan, driver, "p.Driver");
    assertThat(results).hasSize(4);
    for (int r = 0; r < 4; r++) {
      String slice = "[" + (4 * 3 * r) + ", " + (4 * (3 * r + 1)) + ", " + (4 * (3 * r + 2)) + "]";
      assertThat(results.get(r)).isEqualTo(
          "[10.0, 10.0, 10.0, 10.0, 10.0, 10.0] "
              + "[0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 20.0, 20.0, 20.0, 30.0, 30.0, 30.0] " + slice);
    }
  }

  @Test
  void aPlanOverAMeshRunsEachCallOverItsAxis() throws Exception {
    JavaFileObject plan = source("p.Mlp",
        "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"})",
        "class Mlp {",
        "  @AllGather(over = \"tp\", into = \"full\") @Shape(\"h\") F32Buffer part;",
        "  @Shape({\"tp\", \"h\"}) F32Buffer full;",
        "  @AllReduce(over = \"dp\") @Shape(\"h\") F32Buffer grads;",
        "  @AllReduce(step = 1) @Shape(\"1\") F32Buffer loss;",
        "  @Send(to = \"(rank + 1) % ranks\", over = \"tp\", step = 1) @Shape(\"1\") I32Buffer out;",
        "  @Recv(from = \"(rank - 1) % ranks\", over = \"tp\", step = 1) @Shape(\"1\") I32Buffer in;",
        "}");
    JavaFileObject driver = source("p.MeshDriver",
        "import java.util.List;",
        "public final class MeshDriver {",
        "  private MeshDriver() {}",
        "  public static List<String> run() {",
        "    try (Cluster cluster = Backends.cluster(\"local\", 4)) {",
        "      return cluster.call(comm -> {",
        "        int r = comm.rank();",
        "        try (Mesh mesh = Mesh.builder(comm).axis(\"dp\", 2).axis(\"tp\", 2).build();",
        "            MlpPlan plan = MlpPlan.builder().h(2).build(mesh)) {",
        "          plan.part().fill(r);",
        "          plan.grads().fill(r);",
        "          plan.loss().fill(1f);",
        "          plan.out().fill(r);",
        "          plan.execute(comm.stream());",
        "          comm.stream().synchronize();",
        "          return java.util.Arrays.toString(plan.full().toArray()) + \" \"",
        "              + java.util.Arrays.toString(plan.grads().toArray()) + \" \" + plan.loss().get(0) + \" \"",
        "              + plan.in().get(0) + \" \" + plan.communicator().size();",
        "        }",
        "      });",
        "    }",
        "  }",
        "}");
    List<String> results = runDriver(plan, driver, "p.MeshDriver");
    // Rank r = dp * 2 + tp. Over tp: ranks {2dp, 2dp + 1}; over dp: ranks {tp, tp + 2}.
    for (int r = 0; r < 4; r++) {
      int dp = r / 2;
      int tp = r % 2;
      float a = 2 * dp;
      float g = tp + (tp + 2);
      int previousAlongTp = 2 * dp + (tp + 1) % 2;
      assertThat(results.get(r)).isEqualTo("[" + a + ", " + a + ", " + (a + 1) + ", " + (a + 1) + "] [" + g + ", " + g
          + "] 4.0 " + previousAlongTp + " 4");
    }
  }

  /**
   * A bucketed plan through its generated API: the backward pass's fields marked ready last layer first
   * with their {@code Field} constants, then {@code finish}, over two rounds; the buckets the annotation's
   * size cuts (and the builder's override); a round with a field left unmarked fails naming it, and the
   * next round works.
   */
  @Test
  void aBucketedPlanRunsThroughReadyAndFinish() throws Exception {
    // h = 64: weights 16 KiB, biases 256 B. From the last field: b2, w2 and b1 (16,896 B) fit in 32 KiB, w1
    // does not: two buckets. With bucketBytes(1) from the builder, every field is a bucket alone.
    JavaFileObject plan = source("p.Grads",
        "@CommPlan(dims = \"h\", bucketBytes = 32 * 1024)",
        "class Grads {",
        "  @AllReduce(op = ReduceOp.AVG) @Shape({\"h\", \"h\"}) F32Buffer w1;",
        "  @AllReduce(op = ReduceOp.AVG) @Shape(\"h\") F32Buffer b1;",
        "  @AllReduce(op = ReduceOp.AVG) @Shape({\"h\", \"h\"}) F32Buffer w2;",
        "  @AllReduce(op = ReduceOp.AVG) @Shape(\"h\") F32Buffer b2;",
        "}");
    JavaFileObject driver = source("p.BucketDriver",
        "import java.util.List;",
        "public final class BucketDriver {",
        "  private BucketDriver() {}",
        "  static void backward(GradsPlan plan, Stream compute, int r, int round) {",
        "    plan.w2().fill(r + round);",
        "    plan.ready(GradsPlan.Field.w2, compute);",
        "    plan.b2().fill(2 * r + round);",
        "    plan.ready(GradsPlan.Field.b2, compute);",
        "    plan.b1().fill(3 * r + round);",
        "    plan.ready(GradsPlan.Field.b1, compute);",
        "    plan.w1().fill(4 * r + round);",
        "    plan.ready(GradsPlan.Field.w1, compute);",
        "    plan.finish(compute);",
        "  }",
        "  public static List<String> run() {",
        "    try (Cluster cluster = Backends.cluster(\"local\", 4)) {",
        "      return cluster.call(comm -> {",
        "        int r = comm.rank();",
        "        StringBuilder out = new StringBuilder();",
        "        try (Stream compute = comm.newStream(); Stream comms = comm.newStream();",
        "            GradsPlan plan = GradsPlan.builder().h(64).commStream(comms).build(comm)) {",
        "          for (int round = 0; round < 2; round++) {",
        "            backward(plan, compute, r, round);",
        "            compute.synchronize();",
        "            out.append(plan.w2().get(0)).append(' ').append(plan.b2().get(63)).append(' ')",
        "                .append(plan.b1().get(0)).append(' ').append(plan.w1().get(4095)).append(\"; \");",
        "          }",
        "          out.append(plan.buckets()).append(\" buckets; \");",
        "          plan.ready(GradsPlan.Field.w2, compute);",
        "          try {",
        "            plan.finish(compute);",
        "            out.append(\"finish with fields unmarked did not throw; \");",
        "          } catch (IllegalStateException e) {",
        "            String m = e.getMessage();",
        "            boolean named = m.contains(\"b2\") && m.contains(\"b1\") && m.contains(\"w1\") && !m.contains(\"w2\");",
        "            out.append(named ? \"unmarked named; \" : m + \"; \");",
        "          }",
        "          compute.synchronize();",
        "          backward(plan, compute, r, 5);",
        "          compute.synchronize();",
        "          out.append(plan.w1().get(0)).append(\"; \");",
        "        }",
        "        try (GradsPlan plan = GradsPlan.builder().h(64).bucketBytes(1).build(comm)) {",
        "          out.append(plan.buckets()).append(\" buckets\");",
        "        }",
        "        return out.toString();",
        "      });",
        "    }",
        "  }",
        "}");
    List<String> results = runDriver(plan, driver, "p.BucketDriver");
    // The mean over ranks 0..3 of k * r + round is 1.5 k + round.
    for (int r = 0; r < 4; r++) {
      assertThat(results.get(r)).isEqualTo(
          "1.5 3.0 4.5 6.0; 2.5 4.0 5.5 7.0; 2 buckets; unmarked named; 11.0; 4 buckets");
    }
  }

  /** Compiles the plan and its driver, which must give no warning; returns what the driver's static run() returns. */
  @SuppressWarnings("unchecked")
  private static List<String> runDriver(JavaFileObject plan, JavaFileObject driver, String driverClass)
      throws Exception {
    Compilation c = compile(plan, driver);
    assertThat(c).succeededWithoutWarnings();
    Class<?> loaded = new CompiledClasses(c, EndToEndTest.class.getClassLoader()).loadClass(driverClass);
    return (List<String>) loaded.getMethod("run").invoke(null);
  }
}
