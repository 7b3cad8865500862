package dev.commplan.processor;

import static com.google.common.truth.Truth.assertThat;
import static com.google.common.truth.Truth.assertWithMessage;
import static com.google.testing.compile.CompilationSubject.assertThat;

import com.google.testing.compile.Compilation;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.Communicator;
import dev.commplan.runtime.F32Buffer;
import dev.commplan.runtime.F64Buffer;
import dev.commplan.runtime.I32Buffer;
import java.lang.reflect.Method;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A plan of any size compiles: the JVM allows 64 KB of bytecode per method and 65,535 constant-pool
 * entries per class, and a generated class whose build() or constructor grew with the plan passed them
 * at about 5,000 buffer fields ("code too large"). 10,000 fields here, compiled with {@code -Xlint:all},
 * then built and executed on the local backend with 3 ranks, every buffer checked.
 */
class ScaleTest {
  private static final int FIELDS = 10_000;
  private static final int RANKS = 3;
  private static final int N = 2;
  private static final int M = 3;

  @Test
  void aPlanOfTenThousandBufferFieldsCompilesAndRuns() throws Exception {
    Compilation c = Plans.compile(Plans.source("p.Big", LargePlans.plan("Big", FIELDS).toArray(String[]::new)));
    assertThat(c).succeededWithoutWarnings();
    String generated = c.generatedSourceFile("p.BigPlan").orElseThrow().getCharContent(false).toString();
    assertThat(generated).contains("private static final class Part0 {");
    // Linear, and small per field: an accessor, a bind method and a declaration (and a collective).
    long lines = generated.lines().count();
    assertWithMessage("generated lines per buffer field").that((double) lines / FIELDS).isLessThan(22.0);

    Class<?> plan = new CompiledClasses(c, ScaleTest.class.getClassLoader()).loadClass("p.BigPlan");
    Method builder = plan.getMethod("builder");
    Class<?> builderClass = builder.getReturnType();
    List<Method> a = new ArrayList<>();
    List<Method> b = new ArrayList<>();
    List<Method> cc = new ArrayList<>();
    List<Method> d = new ArrayList<>();
    for (int k = 0; k < FIELDS / 4; k++) {
      a.add(plan.getMethod("a" + k));
      b.add(plan.getMethod("b" + k));
      cc.add(plan.getMethod("c" + k));
      d.add(plan.getMethod("d" + k));
    }
    try (Cluster cluster = Backends.cluster("local", RANKS)) {
      List<String> wrong = cluster.call((Communicator comm) -> {
        int r = comm.rank();
        Object bld = builder.invoke(null);
        bld = builderClass.getMethod("n", long.class).invoke(bld, N);
        bld = builderClass.getMethod("m", long.class).invoke(bld, M);
        try (AutoCloseable p = (AutoCloseable) builderClass.getMethod("build", Communicator.class).invoke(bld, comm)) {
          for (int k = 0; k < FIELDS / 4; k++) {
            ((F32Buffer) a.get(k).invoke(p)).fill((r + 1) * (k % 5 + 1));
            ((I32Buffer) b.get(k).invoke(p)).fill(r * 1000 + k % 1000);
            ((F64Buffer) d.get(k).invoke(p)).fill(r + k);
          }
          plan.getMethod("execute", dev.commplan.runtime.Stream.class).invoke(p, comm.stream());
          comm.stream().synchronize();
          List<String> bad = new ArrayList<>();
          float sum = RANKS * (RANKS + 1) / 2f;
          for (int k = 0; k < FIELDS / 4 && bad.size() < 5; k++) {
            float[] av = ((F32Buffer) a.get(k).invoke(p)).toArray();
            if (av.length != N * (1 + k % 8) || av[0] != sum * (k % 5 + 1) || av[av.length - 1] != av[0]) {
              bad.add("a" + k + " on rank " + r + ": " + java.util.Arrays.toString(av));
            }
            int[] cv = ((I32Buffer) cc.get(k).invoke(p)).toArray();
            for (int q = 0; q < RANKS; q++) {
              if (cv[q * M] != q * 1000 + k % 1000 || cv[q * M + M - 1] != cv[q * M]) {
                bad.add("c" + k + " on rank " + r + ": " + java.util.Arrays.toString(cv));
                break;
              }
            }
            double[] dv = ((F64Buffer) d.get(k).invoke(p)).toArray();
            if (dv[0] != k || dv[1] != k) {
              bad.add("d" + k + " on rank " + r + ": " + java.util.Arrays.toString(dv));
            }
          }
          return String.join("; ", bad);
        }
      });
      assertThat(wrong).containsExactly("", "", "");
    }
  }
}
