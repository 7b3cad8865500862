package dev.commplan.processor;

import static com.google.common.truth.Truth.assertThat;
import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import dev.commplan.processor.Plans.Toolchain;
import java.io.IOException;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * Rule 23, {@code [CommPlan/BadBucket]}: a negative {@code @CommPlan(bucketBytes)} is a compile error on the
 * attribute, naming the value and the fix; so is a bucketed plan that sends more fields than its generated
 * {@code enum Field} can hold, while one at the limit compiles. {@code name = "Field"} clashes with that
 * enum ({@code [CommPlan/BadName]}) only in a bucketed plan. Valid bucketed plans compile without warnings.
 * Under javac and ecj.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(Toolchain.class)
class BucketDiagnosticTest {
  /** Fields of a {@link LargePlans} plan that sends {@code BucketRules.MAX_SENT_FIELDS} = 2,700 fields (3 of 4). */
  private static final int FIELDS_AT_THE_LIMIT = 3_600;

  @Parameter
  Toolchain compiler;

  private void assertError(JavaFileObject f, String line, String message) {
    Compilation c = compiler.compile(f);
    assertThat(c).failed();
    assertThat(c).hadErrorCount(1);
    assertThat(c).hadErrorContaining(message).inFile(f).onLineContaining(line);
  }

  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "-1             | -1",
    "-4096          | -4096",
    "-(1L << 40)    | -1099511627776",
    "Long.MIN_VALUE | -9223372036854775808",
  })
  void negativeBucketBytes(String written, String value) {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\",",
        "    bucketBytes = " + written + ")",
        "class Grads {",
        "  @AllReduce(op = ReduceOp.AVG) @Shape(\"n\") F32Buffer g;",
        "}");
    assertError(f, "bucketBytes = ",
        "[CommPlan/BadBucket] @CommPlan(bucketBytes = " + value + ") is negative. Fix: use 0 for no buckets (the plan"
            + " runs whole with execute), or N > 0, the most bytes of one bucket (docs/overlap.md, \"Choosing"
            + " bucketBytes\").");
  }

  /** Issue 40, item 4: an int expression that overflowed is named as such, not only as a negative number. */
  @ParameterizedTest
  @CsvSource(delimiter = '|', value = {
    "1 << 31                | -2147483648",
    "3 * 1024 * 1024 * 1024 | -1073741824",
  })
  void anIntExpressionThatOverflowed(String written, String value) {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\",",
        "    bucketBytes = " + written + ")",
        "class Grads {",
        "  @AllReduce(op = ReduceOp.AVG) @Shape(\"n\") F32Buffer g;",
        "}");
    assertError(f, "bucketBytes = ",
        "[CommPlan/BadBucket] @CommPlan(bucketBytes = " + value + ") is negative: an int expression overflowed"
            + " before it became the long bucketBytes (1 << 31, or 2048 * 1024 * 1024, is -2147483648 in int). Fix:"
            + " write it as a long, such as 1L << 31 or 2048L * 1024 * 1024.");
  }

  @Test
  void moreSentFieldsThanAnEnumHolds() {
    JavaFileObject f = source("p.Huge",
        LargePlans.plan("Huge", FIELDS_AT_THE_LIMIT + 4, ",\n    bucketBytes = 64").toArray(String[]::new));
    assertError(f, "bucketBytes = 64",
        "[CommPlan/BadBucket] @CommPlan(bucketBytes = 64) gives the generated class an enum Field of one constant per"
            + " field that a collective sends, but 'Huge' sends 2703 fields, and an enum holds at most 2700 constants"
            + " (its initializer must fit in the JVM's 64 KB per method). Fix: split the plan into plans of at most"
            + " 2700 sent fields each, or leave bucketBytes 0 and run the plan whole with execute.");
  }

  /** The limit holds under both compilers: ecj's enum initializer passes 64 KB at 2,742 constants. */
  @Test
  void aBucketedPlanAtTheLimitCompiles() throws IOException {
    Compilation c = compiler.compile(
        source("p.Big", LargePlans.plan("Big", FIELDS_AT_THE_LIMIT, ", bucketBytes = 64").toArray(String[]::new)));
    assertThat(c).succeededWithoutWarnings();
    String generated = c.generatedSourceFile("p.BigPlan").orElseThrow().getCharContent(false).toString();
    assertThat(generated).contains("private static final class Part0 {");
    assertThat(generated).contains("    d899\n  }");
  }

  @Test
  void nameFieldClashesWithTheEnumOfABucketedPlan() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(bucketBytes = 1024,",
        "    name = \"Field\")",
        "class Grads {",
        "  @AllReduce @Shape(\"8\") F32Buffer g;",
        "}");
    assertError(f, "name = \"Field\"",
        "[CommPlan/BadName] @CommPlan(name = \"Field\") would clash with the generated class's nested enum Field,"
            + " which a plan with bucketBytes has. Fix: choose another name, such as \"GradsPlan\".");
  }

  @Test
  void nameFieldIsFineWithoutBuckets() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(name = \"Field\")",
        "class Grads {",
        "  @AllReduce @Shape(\"8\") F32Buffer g;",
        "}");
    Compilation c = compiler.compile(f);
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p.Field");
  }

  /** 0, written or not, is a plan without buckets: generated as before, with no enum Field. */
  @ParameterizedTest
  @ValueSource(strings = {"", ", bucketBytes = 0"})
  void zeroIsNoBuckets(String attribute) throws IOException {
    Compilation c = compiler.compile(source("p.Grads",
        "@CommPlan(dims = \"n\"" + attribute + ")",
        "class Grads {",
        "  @AllReduce @Shape(\"n\") F32Buffer g;",
        "}"));
    assertThat(c).succeededWithoutWarnings();
    String generated = c.generatedSourceFile("p.GradsPlan").orElseThrow().getCharContent(false).toString();
    assertThat(generated).doesNotContain("enum Field");
    assertThat(generated).doesNotContain("bucketBytes");
  }

  /** Every kind of collective, over axes and not, in a bucketed plan: no error, no warning. */
  @Test
  void validBucketedPlansCompileWithoutWarnings() {
    JavaFileObject f = source("p.Mlp",
        "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"}, bucketBytes = 25L * 1024 * 1024)",
        "class Mlp {",
        "  @AllReduce(over = \"tp\") @Shape(\"h\") F32Buffer act;",
        "  @Broadcast(root = 1, step = 1) @Shape(\"h\") F32Buffer params;",
        "  @Reduce(over = \"dp\", step = 1) @Shape(\"h\") F64Buffer red;",
        "  @AllGather(over = \"tp\", into = \"full\", step = 2) @Shape(\"h\") BF16Buffer part;",
        "  @Shape({\"tp\", \"h\"}) BF16Buffer full;",
        "  @ReduceScatter(over = \"dp\", into = \"shard\", step = 2) @Shape({\"dp\", \"h\"}) F16Buffer grads;",
        "  @Shape(\"h\") F16Buffer shard;",
        "  @Gather(into = \"all\", step = 3) @Shape(\"h\") I32Buffer mine;",
        "  @Shape({\"ranks\", \"h\"}) I32Buffer all;",
        "  @Scatter(over = \"tp\", into = \"piece\", step = 3) @Shape({\"tp\", \"h\"}) U8Buffer whole;",
        "  @Shape(\"h\") U8Buffer piece;",
        "  @AllToAll(into = \"exchanged\", step = 4) @Shape({\"ranks\", \"h\"}) I64Buffer local;",
        "  @Shape({\"ranks\", \"h\"}) I64Buffer exchanged;",
        "  @Send(to = \"rank + 1\", over = \"tp\", step = 5) @Shape(\"h\") F32Buffer out;",
        "  @Recv(from = \"rank - 1\", over = \"tp\", step = 5) @Shape(\"h\") F32Buffer in;",
        "}");
    assertThat(compiler.compile(f)).succeededWithoutWarnings();
  }
}
