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
 * generated code against the real runtime, and the shapes the processor accepted against what NCCL does.
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
    Compilation c = compile(plan, driver);
    assertThat(c).succeededWithoutWarnings();

    Class<?> driverClass = new CompiledClasses(c, EndToEndTest.class.getClassLoader()).loadClass("p.Driver");
    @SuppressWarnings("unchecked")
    List<String> results = (List<String>) driverClass.getMethod("run").invoke(null);
    assertThat(results).hasSize(4);
    for (int r = 0; r < 4; r++) {
      String slice = "[" + (4 * 3 * r) + ", " + (4 * (3 * r + 1)) + ", " + (4 * (3 * r + 2)) + "]";
      assertThat(results.get(r)).isEqualTo(
          "[10.0, 10.0, 10.0, 10.0, 10.0, 10.0] "
              + "[0.0, 0.0, 0.0, 10.0, 10.0, 10.0, 20.0, 20.0, 20.0, 30.0, 30.0, 30.0] " + slice);
    }
  }
}
