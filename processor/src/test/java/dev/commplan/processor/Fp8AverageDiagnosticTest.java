package dev.commplan.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import dev.commplan.processor.Plans.Toolchain;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * {@code [CommPlan/Fp8Average]}: AVG on an fp8 buffer is a compile error on the {@code op} attribute, for
 * every collective that reduces, on both fp8 types, under javac and ecj; the other ops on fp8, and AVG on
 * the other floating-point types, still compile.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(Toolchain.class)
class Fp8AverageDiagnosticTest {
  @Parameter
  Toolchain compiler;

  @ParameterizedTest
  @CsvSource({
    "AllReduce,     F8E4M3Buffer, '\"n\"'",
    "AllReduce,     F8E5M2Buffer, '\"n\"'",
    "Reduce,        F8E4M3Buffer, '\"n\"'",
    "Reduce,        F8E5M2Buffer, '\"n\"'",
    "ReduceScatter, F8E4M3Buffer, '{\"ranks\", \"n\"}'",
    "ReduceScatter, F8E5M2Buffer, '{\"ranks\", \"n\"}'",
  })
  void averageInPlace(String collective, String type, String shape) {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @" + collective + "(step = 1,",
        "      op = ReduceOp.AVG)",
        "  @Shape(" + shape + ") " + type + " g;",
        "}");
    Compilation c = compiler.compile(f);
    assertThat(c).failed();
    assertThat(c).hadErrorCount(1);
    assertThat(c).hadErrorContaining("[CommPlan/Fp8Average] @" + collective + " on 'g' has op = AVG, but 'g' is an "
        + type + ": NCCL computes AVG on fp8 as the sum multiplied by 1/ranks rounded to fp8 (for 3 ranks 0.34375 or"
        + " 0.3125, not 1/3), and fails on one rank, so no backend offers it. Fix: use op = SUM and scale the result,"
        + " or declare 'g' as a wider type (F16Buffer, BF16Buffer or F32Buffer).")
        .inFile(f).onLineContaining("op = ReduceOp.AVG");
  }

  @Test
  void averageIntoAnotherFieldNamesBoth() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @AllReduce(into = \"out\",",
        "      op = ReduceOp.AVG)",
        "  @Shape(\"n\") F8E4M3Buffer g;",
        "  @Shape(\"n\") F8E4M3Buffer out;",
        "}");
    Compilation c = compiler.compile(f);
    assertThat(c).hadErrorCount(1);
    assertThat(c).hadErrorContaining("[CommPlan/Fp8Average] @AllReduce on 'g' has op = AVG, but 'g' is an F8E4M3Buffer")
        .inFile(f).onLineContaining("op = ReduceOp.AVG");
    assertThat(c).hadErrorContaining("declare 'g' and 'out' as a wider type (F16Buffer, BF16Buffer or F32Buffer).")
        .inFile(f).onLineContaining("op = ReduceOp.AVG");
  }

  @Test
  void otherOpsOnFp8AndAverageOnWiderTypesCompile() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @AllReduce(op = ReduceOp.SUM) @Shape(\"n\") F8E4M3Buffer a;",
        "  @Reduce(op = ReduceOp.MAX) @Shape(\"n\") F8E5M2Buffer b;",
        "  @ReduceScatter(op = ReduceOp.MIN) @Shape({\"ranks\", \"n\"}) F8E4M3Buffer c;",
        "  @AllReduce(op = ReduceOp.AVG) @Shape(\"n\") BF16Buffer d;",
        "  @AllReduce(op = ReduceOp.AVG) @Shape(\"n\") F16Buffer e;",
        "}");
    assertThat(compiler.compile(f)).succeededWithoutWarnings();
  }
}
