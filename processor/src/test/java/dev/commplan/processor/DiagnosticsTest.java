package dev.commplan.processor;

import static com.google.common.truth.Truth.assertWithMessage;
import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import dev.commplan.processor.Plans.Toolchain;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import javax.tools.Diagnostic;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * One negative test per diagnostic of the contract's "must reject" list (and the processor's own): each
 * checks the stable id, the key parts of the message (fields, sizes as written and as required, the fix),
 * the line it points at, and that it is the only error. Every test runs under javac and under ecj
 * (Eclipse's compiler, which Eclipse runs as you type): the same errors, on the same lines, except where
 * ecj cannot place them there (said at each such test).
 */
@ParameterizedClass(name = "{0}")
@EnumSource(Toolchain.class)
class DiagnosticsTest {
  @Parameter
  Toolchain compiler;

  private Compilation compile(JavaFileObject f) {
    return compiler.compile(f);
  }

  /** Compiles {@code f}, expects exactly {@code count} errors, each part on the line containing {@code line}. */
  private Compilation assertErrors(int count, JavaFileObject f, String line, String... parts) {
    Compilation c = compile(f);
    assertThat(c).failed();
    assertThat(c).hadErrorCount(count);
    for (String part : parts) {
      assertThat(c).hadErrorContaining(part).inFile(f).onLineContaining(line);
    }
    return c;
  }

  private Compilation assertError(JavaFileObject f, String line, String... parts) {
    return assertErrors(1, f, line, parts);
  }

  @Nested
  class Rule1GatherSize {
    @Test
    void intoTooSmall() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"hidden\")",
          "class Grads {",
          "  @AllGather(into = \"all\") @Shape(\"hidden\") F32Buffer part;",
          "  @Shape({\"hidden\"}) F32Buffer all;",
          "}");
      assertError(f, "into = \"all\"",
          "[CommPlan/GatherSize] @AllGather on 'part' gathers into 'all': count(all) must be ranks × count(part)"
              + " = ranks*hidden, but 'all' has @Shape({\"hidden\"}) = hidden."
              + " Fix: declare 'all' as @Shape({\"ranks\", \"hidden\"}).");
    }

    @Test
    void intoTooLargeSuggestsBothSides() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"n\"})",
          "class Grads {",
          "  @AllGather(into = \"all\") @Shape(\"n\") F32Buffer part;",
          "  @Shape({\"ranks\", \"ranks\", \"n\"}) F32Buffer all;",
          "}");
      assertError(f, "into = \"all\"",
          "[CommPlan/GatherSize]",
          "count(all) must be ranks × count(part) = ranks*n, but 'all' has @Shape({\"ranks\", \"ranks\", \"n\"})"
              + " = ranks*ranks*n",
          "Fix: declare 'all' as @Shape({\"ranks\", \"n\"}), or 'part' as @Shape({\"ranks\", \"n\"}).");
    }

    @Test
    void fixedRanksComparesWithN() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\", ranks = 4)",
          "class Grads {",
          "  @AllGather(into = \"all\") @Shape(\"n\") F32Buffer part;",
          "  @Shape(\"2*n\") F32Buffer all;",
          "}");
      assertError(f, "into = \"all\"",
          "[CommPlan/GatherSize]",
          "count(all) must be ranks × count(part) = 4*n with @CommPlan(ranks = 4), but 'all' has @Shape({\"2*n\"}) = 2*n");
    }
  }

  @Test
  void rule2ScatterSize() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @ReduceScatter(into = \"slice\") @Shape(\"n\") F32Buffer whole;",
        "  @Shape(\"n\") F32Buffer slice;",
        "}");
    assertError(f, "into = \"slice\"",
        "[CommPlan/ScatterSize] @ReduceScatter on 'whole' scatters into 'slice': count(whole) must be"
            + " ranks × count(slice) = ranks*n, but 'whole' has @Shape({\"n\"}) = n."
            + " Fix: declare 'whole' as @Shape({\"ranks\", \"n\"}).");
  }

  @Test
  void rule2ScatterSizeSuggestsSliceWhenDivisible() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @ReduceScatter(into = \"slice\") @Shape({\"ranks\", \"n\"}) F32Buffer whole;",
        "  @Shape(\"4\") F32Buffer slice;",
        "}");
    assertError(f, "into = \"slice\"",
        "[CommPlan/ScatterSize]",
        "= 4*ranks, but 'whole' has @Shape({\"ranks\", \"n\"}) = ranks*n",
        "Fix: declare 'whole' as @Shape({\"ranks\", \"4\"}), or 'slice' as @Shape({\"n\"}).");
  }

  @ParameterizedTest
  @ValueSource(strings = {"AllReduce", "Broadcast"})
  void rule3CountMismatch(String collective) {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"hidden\")",
        "class Grads {",
        "  @" + collective + "(into = \"out\") @Shape({\"4\", \"hidden\"}) F32Buffer g;",
        "  @Shape(\"hidden\") F32Buffer out;",
        "}");
    assertError(f, "into = \"out\"",
        "[CommPlan/CountMismatch] @" + collective + " on 'g'",
        "'out': count(out) must equal count(g) = 4*hidden (@Shape({\"4\", \"hidden\"})), but 'out' has"
            + " @Shape({\"hidden\"}) = hidden. Fix: declare 'out' as @Shape({\"4\", \"hidden\"}).");
  }

  @Nested
  class Rule4Into {
    @Test
    void unknownInto() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllGather(into = \"al\") @Shape(\"1\") F32Buffer part;",
          "  @Shape(\"ranks\") F32Buffer all;",
          "}");
      assertError(f, "into = \"al\"",
          "[CommPlan/UnknownInto] @AllGather on 'part' has into = \"al\", but class 'Grads' has no field 'al'"
              + " (did you mean 'all'?). Fix: name one of its buffer fields ('all'), or leave into empty for in place.");
    }

    @Test
    void intoNotABuffer() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce(into = \"sum\") @Shape(\"1\") F64Buffer part;",
          "  double[] sum;",
          "}");
      assertError(f, "into = \"sum\"",
          "[CommPlan/IntoNotBuffer] @AllReduce on 'part' has into = \"sum\", but 'sum' is a double[], not a buffer."
              + " Fix: declare 'sum' as F64Buffer (dev.commplan.runtime) with a @Shape.");
    }

    @Test
    void intoSelf() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce(into = \"x\") @Shape(\"1\") F32Buffer x;",
          "}");
      assertError(f, "into = \"x\"",
          "[CommPlan/IntoSelf] @AllReduce on 'x' has into = \"x\", the field itself",
          "Fix: leave into empty for in place.");
    }
  }

  @Test
  void rule5TypeMismatch() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan",
        "class Grads {",
        "  @AllGather(into = \"all\") @Shape(\"1\") F32Buffer part;",
        "  @Shape(\"ranks\") F64Buffer all;",
        "}");
    assertError(f, "into = \"all\"",
        "[CommPlan/TypeMismatch] @AllGather on 'part' (F32Buffer) gathers into 'all' (F64Buffer): send and receive"
            + " buffers must have the same data type. Fix: declare 'all' as F32Buffer, or 'part' as F64Buffer.");
  }

  @Nested
  class Rule6NotABuffer {
    @Test
    void collectiveOnPrimitiveArray() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce @Shape(\"1\") float[] g;",
          "}");
      assertError(f, "float[] g",
          "[CommPlan/NotABuffer] 'g' carries @AllReduce but has type float[], which is not a buffer type."
              + " Fix: declare 'g' as one of F16Buffer, BF16Buffer, F32Buffer, F64Buffer, I8Buffer, U8Buffer,"
              + " I32Buffer, U32Buffer, I64Buffer, U64Buffer, F8E4M3Buffer, F8E5M2Buffer (package dev.commplan.runtime).");
    }

    @Test
    void shapeOnAbstractBuffer() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Shape(\"1\") Buffer g;",
          "}");
      assertError(f, "Buffer g", "[CommPlan/NotABuffer] 'g' carries @Shape but has type dev.commplan.runtime.Buffer");
    }
  }

  @Nested
  class Rule7MissingShape {
    @Test
    void onTheSendSide() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\")",
          "class Grads {",
          "  @AllGather(into = \"all\") F32Buffer part;",
          "  @Shape({\"ranks\", \"n\"}) F32Buffer all;",
          "}");
      assertError(f, "@AllGather",
          "[CommPlan/MissingShape] 'part', the send buffer of @AllGather, has no @Shape",
          "Fix: add @Shape({\"n\"}) to 'part'.");
    }

    @Test
    void onTheReceiveSide() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\")",
          "class Grads {",
          "  @AllGather(into = \"all\") @Shape(\"n\") F32Buffer part;",
          "  F32Buffer all;",
          "}");
      assertError(f, "F32Buffer all;",
          "[CommPlan/MissingShape] 'all', the receive buffer of @AllGather on 'part', has no @Shape",
          "Fix: add @Shape({\"ranks\", \"n\"}) to 'all'.");
    }
  }

  @Nested
  class Rule8Shapes {
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "''                | the entry is empty",
      "'  '              | the entry is empty",
      "0                 | the literal '0' is 0, and every entry must be > 0",
      "-4                | unexpected '-' at position 1: sizes are positive",
      "4*                | a factor is missing after the last '*'",
      "*4                | a factor is missing before the '*' at position 1",
      "hidden+1          | unexpected '+' at position 7: only '*' joins factors",
      "4hidden           | unexpected 'h' after the number at position 2",
      "hidden n          | unexpected 'n' at position 8: factors are joined by '*'",
      "4.5               | unexpected '.' at position 2",
      // Characters outside the Basic Multilingual Plane are one character each, shown as written.
      "4𝑛                | unexpected '𝑛' after the number at position 2",
      "n 𝑛               | unexpected '𝑛' at position 3: factors are joined by '*'",
      "😀                | unexpected '😀' at position 1: only '*' joins factors",
      "𝑛*😀              | unexpected '😀' at position 3: only '*' joins factors",
      // One that shows as nothing is named.
      "n*\u200Bm         | unexpected U+200B (ZERO WIDTH SPACE) at position 3: only '*' joins factors",
    })
    void badShape(String entry, String reason) {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"hidden\", \"n\"})",
          "class Grads {",
          "  @AllReduce",
          "  @Shape({\"2\", \"" + entry + "\"})",
          "  F32Buffer g;",
          "}");
      assertError(f, "@Shape",
          "[CommPlan/BadShape] @Shape entry \"" + entry + "\" of 'g' does not parse: " + reason,
          "An entry is an integer > 0, a dim, ranks, or a product of those joined by '*'");
    }

    @Test
    void anEntryOnTheLineAfterTheAnnotation() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"hidden\", \"n\"})",
          "class Grads {",
          "  @AllReduce",
          "  @Shape(",
          "      {\"2\", \"hidden+1\"})",
          "  F32Buffer g;",
          "}");
      assertError(f, "hidden+1", "[CommPlan/BadShape] @Shape entry \"hidden+1\" of 'g' does not parse");
    }

    @Test
    void anEntryOnALineOfItsOwn() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"hidden\", \"n\"})",
          "class Grads {",
          "  @AllReduce",
          "  @Shape({\"2\",",
          "      \"hidden+1\",",
          "      \"n\"})",
          "  F32Buffer g;",
          "}");
      // ecj finds an attribute's whole value in the source, never one entry of it: its line is the opening
      // brace's (javac's is the entry's).
      assertError(f, compiler == Toolchain.JAVAC ? "\"hidden+1\"," : "@Shape({",
          "[CommPlan/BadShape] @Shape entry \"hidden+1\" of 'g' does not parse");
    }

    @Test
    void emptyShape() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce @Shape({}) F32Buffer g;",
          "}");
      assertError(f, "@Shape({})", "[CommPlan/BadShape] @Shape of 'g' has no entries");
    }

    @Test
    void unknownDimListsTheDeclaredOnes() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"hidden\", \"batch\"})",
          "class Grads {",
          "  @AllReduce",
          "  @Shape({\"4\", \"hiden * batch\"})",
          "  F32Buffer g;",
          "}");
      assertError(f, "hiden * batch",
          "[CommPlan/UnknownDim] @Shape entry \"hiden * batch\" of 'g' names 'hiden', which is not a dim of this plan"
              + " (declared: \"hidden\", \"batch\") (did you mean \"hidden\"?). Fix: add \"hiden\" to @CommPlan(dims),"
              + " or use a declared dim or ranks.");
    }

    @Test
    void unknownDimWithoutDims() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce @Shape(\"hidden\") F32Buffer g;",
          "}");
      assertError(f, "@Shape", "[CommPlan/UnknownDim]", "(declared: none)");
    }

    @Test
    void countOverflow() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce @Shape({\"4294967296\", \"4294967296\"}) F32Buffer g;",
          "}");
      assertError(f, "@Shape",
          "[CommPlan/CountOverflow] @Shape({\"4294967296\", \"4294967296\"}) of 'g' has the constant factor"
              + " 18446744073709551616, more than the largest long");
    }

    @Test
    void literalBeyondLong() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce @Shape(\"99999999999999999999999\") F32Buffer g;",
          "}");
      assertError(f, "@Shape", "[CommPlan/CountOverflow]", "99999999999999999999999");
    }
  }

  @Nested
  class Rule9BadRoot {
    @Test
    void negative() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Broadcast(root = -1) @Shape(\"8\") F32Buffer params;",
          "}");
      assertError(f, "root = -1",
          "[CommPlan/BadRoot] @Broadcast on 'params' has root = -1, but a root is a rank, 0 or more.");
    }

    @Test
    void notBelowFixedRanks() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(ranks = 4)",
          "class Grads {",
          "  @Broadcast(root = 4) @Shape(\"8\") F32Buffer params;",
          "}");
      assertError(f, "root = 4",
          "[CommPlan/BadRoot] @Broadcast on 'params' has root = 4, but the plan fixes @CommPlan(ranks = 4), so ranks"
              + " are 0 to 3. Fix: set root to a rank in [0, 4).");
    }
  }

  @Nested
  class Rule10NotDivisible {
    @Test
    void inPlaceAllGather() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(ranks = 4)",
          "class Grads {",
          "  @AllGather @Shape({\"2\", \"3\"}) F32Buffer all;",
          "}");
      assertError(f, "@AllGather",
          "[CommPlan/NotDivisible] in-place @AllGather on 'all': 'all' holds the whole gathered result, one slice per"
              + " rank, so count(all) must be divisible by ranks = 4, but count(all) = 6 (@Shape({\"2\", \"3\"})) is not."
              + " Fix: declare 'all' as @Shape({\"ranks\", \"2\"}) (2 elements per rank), or give it an into buffer.");
    }

    @Test
    void inPlaceReduceScatter() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(ranks = 3)",
          "class Grads {",
          "  @ReduceScatter(op = ReduceOp.MAX) @Shape(\"10\") I32Buffer whole;",
          "}");
      assertError(f, "@ReduceScatter",
          "[CommPlan/NotDivisible] in-place @ReduceScatter on 'whole': 'whole' holds the whole input",
          "divisible by ranks = 3, but count(whole) = 10");
    }
  }

  @Nested
  class Rule11StepRace {
    @Test
    void readsWhatAnotherWrites() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllGather(into = \"x\") @Shape(\"1\") F32Buffer a;",
          "  @AllReduce(into = \"y\") @Shape(\"ranks\") F32Buffer x;",
          "  @Shape(\"ranks\") F32Buffer y;",
          "}");
      assertError(f, "into = \"y\"",
          "[CommPlan/StepRace] @AllReduce on 'x' reads 'x', which @AllGather on 'a' writes, in the same step 0:"
              + " collectives of one step are issued in one NCCL group and run in no defined order."
              + " Fix: move one of them to another step, such as step = 1 on @AllReduce on 'x'.");
    }

    @Test
    void bothWriteOneBuffer() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce(into = \"out\", step = 2) @Shape(\"8\") F32Buffer a;",
          "  @Broadcast(into = \"out\", step = 2) @Shape(\"8\") F32Buffer b;",
          "  @Shape(\"8\") F32Buffer out;",
          "}");
      assertError(f, "@Broadcast",
          "[CommPlan/StepRace] @Broadcast on 'b' writes 'out', which @AllReduce on 'a' also writes, in the same step 2",
          "such as step = 3 on @Broadcast on 'b'");
    }

    @Test
    void writesWhatAnotherReadsInPlace() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Broadcast(into = \"copy\") @Shape(\"8\") F32Buffer src;",
          "  @AllReduce @Shape(\"8\") F32Buffer copy;",
          "}");
      assertError(f, "@AllReduce",
          "[CommPlan/StepRace] @AllReduce on 'copy' writes 'copy', which @Broadcast on 'src' also writes");
    }

    @Test
    void writesWhatAnEarlierOneReads() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Broadcast(into = \"copy\") @Shape(\"8\") F32Buffer src;",
          "  @AllReduce(into = \"src\") @Shape(\"8\") F32Buffer other;",
          "  @Shape(\"8\") F32Buffer copy;",
          "}");
      assertError(f, "into = \"src\"",
          "[CommPlan/StepRace] @AllReduce on 'other' writes 'src', which @Broadcast on 'src' reads, in the same step 0");
    }
  }

  @Test
  void rule12DuplicateCollective() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan",
        "class Grads {",
        "  @AllReduce",
        "  @Broadcast(root = 1)",
        "  @Shape(\"8\") F32Buffer g;",
        "}");
    assertError(f, "@Broadcast",
        "[CommPlan/DuplicateCollective] 'g' has @AllReduce and @Broadcast both in step 0; a field takes part in one"
            + " collective per step. Fix: give @Broadcast another step, such as step = 1.");
  }

  @Nested
  class Rule13Targets {
    @Test
    void privateField() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce @Shape(\"8\") private F32Buffer g;",
          "}");
      assertError(f, "private F32Buffer g",
          "[CommPlan/PrivateField] 'g' carries @AllReduce but is private; plan fields must not be private."
              + " Fix: remove 'private' from 'g'.");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "interface Grads {}                 | an interface",
      "enum Grads { A }                   | an enum",
      "record Grads(int x) {}             | a record",
      "@interface Grads {}                | an annotation type",
    })
    void notAClass(String declaration, String what) {
      JavaFileObject f = source("p.Grads", "@CommPlan", declaration);
      String message = "[CommPlan/BadTarget] @CommPlan goes on a class, but 'Grads' is " + what
          + ". Fix: declare 'Grads' as a class (top-level or static nested).";
      if (compiler == Toolchain.ECJ && what.equals("a record")) {
        // ecj's Messager has no case for records, and none of this record's members has a place in the
        // source (they are implicit): no element of this file can carry the error. See aNestedRecord.
        Compilation c = compile(f);
        assertThat(c).hadErrorCount(1);
        assertThat(c).hadErrorContaining(message);
        return;
      }
      assertError(f, "@CommPlan", message);
    }

    @Test
    void aNestedRecord() {
      JavaFileObject f = source("p.Outer",
          "class Outer {",
          "  @CommPlan",
          "  record Grads(int x) {}",
          "}");
      // ecj places nothing inside a record (no case for records in its Messager), so the error goes on the
      // enclosing class there; without it, Eclipse would only log the error, and show none.
      assertError(f, compiler == Toolchain.JAVAC ? "@CommPlan" : "class Outer",
          "[CommPlan/BadTarget] @CommPlan goes on a class, but 'Grads' is a record.");
    }

    @Test
    void privateNested() {
      JavaFileObject f = source("p.Outer",
          "class Outer {",
          "  @CommPlan private static class Grads {}",
          "}");
      assertError(f, "@CommPlan", "[CommPlan/BadTarget] @CommPlan class 'Grads' is private.");
    }

    @Test
    void inner() {
      JavaFileObject f = source("p.Outer",
          "class Outer {",
          "  @CommPlan class Grads {}",
          "}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadTarget] @CommPlan class 'Grads' is an inner (non-static) class. Fix: declare 'Grads' static.");
    }

    // A local class is not a root element: javac never shows it to annotation processors (docs/setup.md, Notes).
  }

  @Nested
  class Rule14Dims {
    @Test
    void reserved() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"n\", \"ranks\"})",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadDim] dims entry \"ranks\" is reserved: ranks always means the communicator's size.");
    }

    @Test
    void duplicatedBehindAnInvisibleCharacter() {
      // javac drops identifier-ignorable characters from names: "n\u200B" is n.
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"n\", \"n\u200B\"})",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadDim] dims entry \"n\\u200B\" is the dim \"n\" again: Java ignores U+200B (ZERO WIDTH SPACE)"
              + " in names. Fix: remove \"n\\u200B\", or rename it.");
    }

    @Test
    void reservedBehindAnInvisibleCharacter() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"ranks\u2060\"})",
          "class Grads {}");
      assertError(f, "@CommPlan", "[CommPlan/BadDim] dims entry \"ranks\" is reserved");
    }

    @Test
    void aKeywordBehindAnInvisibleCharacter() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"cl\u00ADass\"})",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadDim] dims entry \"cl\\u00ADass\" is not a Java identifier (each dim becomes a Builder setter)."
              + " Fix: rename it, such as \"classDim\".");
    }

    @Test
    void duplicatedOnALineOfItsOwn() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"n\",",
          "    \"n\"})",
          "class Grads {}");
      // As for @Shape entries: ecj's line is the attribute's, javac's the entry's.
      assertError(f, compiler == Toolchain.JAVAC ? "    \"n\"})" : "@CommPlan", "[CommPlan/BadDim] dims lists \"n\" twice.");
    }

    @Test
    void duplicated() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"n\", \"n\"})",
          "class Grads {}");
      assertError(f, "@CommPlan", "[CommPlan/BadDim] dims lists \"n\" twice. Fix: remove the second \"n\".");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "hidden-size | hiddenSize",
      "2d          | d2d",
      "class       | classDim",
      "''          | dim",
    })
    void notAnIdentifier(String dim, String suggestion) {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = {\"" + dim + "\"})",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadDim] dims entry \"" + dim + "\" is not a Java identifier (each dim becomes a Builder setter)."
              + " Fix: rename it, such as \"" + suggestion + "\".");
    }

    @Test
    void negativeRanks() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(ranks = -2)",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadRanks] @CommPlan(ranks = -2) is negative. Fix: use 0 for any world size, or N > 0 to fix it");
    }
  }

  // ---- Issue 17: Reduce, Gather, Scatter, AllToAll, Send, Recv ----------------------------------------

  @Nested
  class Rule15Sizes {
    @Test
    void gatherIntoTooSmall() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\")",
          "class Grads {",
          "  @Gather(root = 1, into = \"all\") @Shape(\"n\") F32Buffer part;",
          "  @Shape({\"n\"}) F32Buffer all;",
          "}");
      assertError(f, "into = \"all\"",
          "[CommPlan/GatherSize] @Gather on 'part' gathers into 'all': count(all) must be ranks × count(part)"
              + " = ranks*n, but 'all' has @Shape({\"n\"}) = n. Fix: declare 'all' as @Shape({\"ranks\", \"n\"}).");
    }

    @Test
    void gatherIntoTooLargeSuggestsBothSides() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\", ranks = 2)",
          "class Grads {",
          "  @Gather(into = \"all\") @Shape(\"n\") F32Buffer part;",
          "  @Shape(\"4*n\") F32Buffer all;",
          "}");
      assertError(f, "into = \"all\"",
          "[CommPlan/GatherSize] @Gather on 'part' gathers into 'all': count(all) must be ranks × count(part)"
              + " = 2*n with @CommPlan(ranks = 2), but 'all' has @Shape({\"4*n\"}) = 4*n.",
          "Fix: declare 'all' as @Shape({\"ranks\", \"n\"}), or 'part' as @Shape({\"2\", \"n\"}).");
    }

    @Test
    void scatterSendTooSmall() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\")",
          "class Grads {",
          "  @Scatter(into = \"slice\") @Shape(\"n\") I64Buffer whole;",
          "  @Shape(\"n\") I64Buffer slice;",
          "}");
      assertError(f, "into = \"slice\"",
          "[CommPlan/ScatterSize] @Scatter on 'whole' scatters into 'slice': count(whole) must be ranks ×"
              + " count(slice) = ranks*n, but 'whole' has @Shape({\"n\"}) = n."
              + " Fix: declare 'whole' as @Shape({\"ranks\", \"n\"}).");
    }

    @Test
    void scatterSliceTooSmallSuggestsTheSlice() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\")",
          "class Grads {",
          "  @Scatter(into = \"slice\") @Shape({\"ranks\", \"2\", \"n\"}) I64Buffer whole;",
          "  @Shape(\"n\") I64Buffer slice;",
          "}");
      assertError(f, "into = \"slice\"",
          "[CommPlan/ScatterSize]",
          "= ranks*n, but 'whole' has @Shape({\"ranks\", \"2\", \"n\"}) = 2*ranks*n",
          "Fix: declare 'whole' as @Shape({\"ranks\", \"n\"}), or 'slice' as @Shape({\"2\", \"n\"}).");
    }

    @Test
    void allToAllCountsDiffer() {
      JavaFileObject f = source("p.Moe",
          "@CommPlan(dims = \"n\")",
          "class Moe {",
          "  @AllToAll(into = \"routed\") @Shape({\"ranks\", \"n\"}) BF16Buffer tokens;",
          "  @Shape(\"n\") BF16Buffer routed;",
          "}");
      assertError(f, "into = \"routed\"",
          "[CommPlan/AllToAllSize] @AllToAll on 'tokens' exchanges into 'routed': count(routed) must equal"
              + " count(tokens) = ranks*n (@Shape({\"ranks\", \"n\"})), one slice per rank on both sides, but 'routed'"
              + " has @Shape({\"n\"}) = n. Fix: declare 'routed' as @Shape({\"ranks\", \"n\"}).");
    }

    @Test
    void allToAllNotDivisibleByFixedRanks() {
      JavaFileObject f = source("p.Moe",
          "@CommPlan(ranks = 4)",
          "class Moe {",
          "  @AllToAll(into = \"routed\") @Shape({\"2\", \"3\"}) BF16Buffer tokens;",
          "  @Shape(\"6\") BF16Buffer routed;",
          "}");
      assertError(f, "into = \"routed\"",
          "[CommPlan/AllToAllSize] @AllToAll on 'tokens' exchanges into 'routed': both hold one slice per rank, so"
              + " count(tokens) must be divisible by ranks = 4, but count(tokens) = 6 (@Shape({\"2\", \"3\"})) is not."
              + " Fix: declare 'tokens' and 'routed' as @Shape({\"ranks\", \"2\"}) (2 elements per rank).");
    }

    @Test
    void allToAllWithEmptyInto() {
      JavaFileObject f = source("p.Moe",
          "@CommPlan(dims = \"n\")",
          "class Moe {",
          "  @AllToAll(step = 1,",
          "      into = \"\")",
          "  @Shape({\"ranks\", \"n\"}) BF16Buffer tokens;",
          "}");
      assertError(f, "into = \"\"",
          "[CommPlan/MissingInto] @AllToAll on 'tokens' has into = \"\", but @AllToAll has no in-place form: it"
              + " needs a receive buffer of its own, with count(into) = count(tokens), divisible by ranks."
              + " Fix: name a BF16Buffer field with @Shape({\"ranks\", \"n\"}) in into.");
    }

    @Test
    void allToAllWithoutIntoIsTheCompilersError() {
      // into has no default, so the compiler rejects the annotation itself; the processor adds nothing.
      JavaFileObject f = source("p.Moe",
          "@CommPlan",
          "class Moe {",
          "  @AllToAll @Shape(\"ranks\") BF16Buffer tokens;",
          "}");
      Compilation c = compile(f);
      assertThat(c).failed();
      assertThat(c).hadErrorCount(1);
      assertWithMessage("the error").that(c.errors().getFirst().getMessage(Locale.ROOT)).doesNotContain("[CommPlan/");
      assertWithMessage("the error").that(c.errors().getFirst().getMessage(Locale.ROOT)).contains("into");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "Gather  | holds the whole gathered result",
      "Scatter | holds the whole input",
    })
    void inPlaceNotDivisible(String collective, String holds) {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(ranks = 3)",
          "class Grads {",
          "  @" + collective + " @Shape(\"10\") I32Buffer whole;",
          "}");
      assertError(f, "@" + collective,
          "[CommPlan/NotDivisible] in-place @" + collective + " on 'whole': 'whole' " + holds + ", one slice per"
              + " rank, so count(whole) must be divisible by ranks = 3, but count(whole) = 10 (@Shape({\"10\"})) is"
              + " not. Fix: declare 'whole' as @Shape({\"ranks\", \"4\"}) (4 elements per rank)");
    }

    @Test
    void reduceCountMismatch() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(dims = \"n\")",
          "class Grads {",
          "  @Reduce(op = ReduceOp.MIN, into = \"out\") @Shape({\"4\", \"n\"}) F32Buffer g;",
          "  @Shape(\"n\") F32Buffer out;",
          "}");
      assertError(f, "into = \"out\"",
          "[CommPlan/CountMismatch] @Reduce on 'g' reduces into 'out': count(out) must equal count(g) = 4*n"
              + " (@Shape({\"4\", \"n\"})), but 'out' has @Shape({\"n\"}) = n. Fix: declare 'out' as"
              + " @Shape({\"4\", \"n\"}).");
    }
  }

  @Nested
  class Rule16BadRoot {
    @ParameterizedTest
    @ValueSource(strings = {"Reduce", "Gather", "Scatter"})
    void negative(String collective) {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @" + collective + "(",
          "      root = -2)",
          "  @Shape(\"ranks\") F32Buffer x;",
          "}");
      assertError(f, "root = -2",
          "[CommPlan/BadRoot] @" + collective + " on 'x' has root = -2, but a root is a rank, 0 or more."
              + " Fix: set root to a rank in [0, ranks).");
    }

    @ParameterizedTest
    @ValueSource(strings = {"Reduce", "Gather", "Scatter"})
    void notBelowFixedRanks(String collective) {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(ranks = 2)",
          "class Grads {",
          "  @" + collective + "(root = 2) @Shape(\"4\") F32Buffer x;",
          "}");
      assertError(f, "root = 2",
          "[CommPlan/BadRoot] @" + collective + " on 'x' has root = 2, but the plan fixes @CommPlan(ranks = 2), so"
              + " ranks are 0 to 1. Fix: set root to a rank in [0, 2).");
    }
  }

  @Nested
  class Rule17BadPeer {
    @ParameterizedTest
    @CsvSource(delimiter = '|', quoteCharacter = '"', value = {
      "Send | to   | rank * 2         | 'rank' is followed by + k or - k, not '* 2'",
      "Send | to   | rank + 1 % ranks | to wrap a peer, parenthesize it: (rank + k) % ranks",
      "Recv | from | (rank - 1) % n   | a wrapped peer is taken % ranks (the built-in name), not % n",
      "Recv | from | rank - -1        | k must be an integer literal >= 0, not '-1'",
      "Recv | from | next             | a peer starts with 'rank'",
      "Send | to   | \"\"               | a peer starts with 'rank'",
    })
    void doesNotParse(String annotation, String attribute, String peer, String why) {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @" + annotation + "(step = 1,",
          "      " + attribute + " = \"" + peer + "\")",
          "  @Shape(\"4\") F32Buffer x;",
          "}");
      // The attribute's own line: the error is on it, not on the annotation.
      assertError(f, attribute + " = \"" + peer + "\"",
          "[CommPlan/BadPeer] @" + annotation + " on 'x' has " + attribute + " = \"" + peer + "\": '" + peer
              + "' is not a peer: " + why + "; a peer is rank + k, rank - k, (rank + k) % ranks or (rank - k) % ranks,"
              + " with k an integer literal >= 0. Fix: write the peer as one of those, such as \"rank + 1\" or"
              + " \"(rank - 1) % ranks\".");
    }

    @Test
    void aBadPeerIsNotAlsoUnmatched() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Send(to = \"rank +1 \") @Shape(\"4\") F32Buffer out;",
          "  @Recv(from = \"rank minus 1\") @Shape(\"4\") F32Buffer in;",
          "}");
      assertError(f, "rank minus 1", "[CommPlan/BadPeer] @Recv on 'in' has from = \"rank minus 1\"");
    }
  }

  @Nested
  class Rule18UnmatchedPeer {
    @Test
    void aSendWithoutARecv() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\")",
          "class Pipe {",
          "  @Send(",
          "      to = \"rank + 1\")",
          "  @Shape(\"n\") F32Buffer act;",
          "}");
      assertError(f, "to = \"rank + 1\"",
          "[CommPlan/UnmatchedPeer] @Send on 'act' (F32Buffer, count n) has to = \"rank + 1\", so it needs a"
              + " @Recv(from = \"rank - 1\") of F32Buffer with count n in step 0, and there is none left to pair with"
              + " it: in each step every send is matched by exactly one receive, or the plan could deadlock or"
              + " truncate. Fix: declare @Recv(from = \"rank - 1\") on a field of type F32Buffer with @Shape({\"n\"}), or"
              + " remove this @Send.");
    }

    @Test
    void aRecvWithoutASendNamesTheStep() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\")",
          "class Pipe {",
          "  @Recv(from = \"(rank - 2) % ranks\", step = 3) @Shape({\"2\", \"n\"}) I32Buffer halo;",
          "}");
      assertError(f, "from = ",
          "[CommPlan/UnmatchedPeer] @Recv on 'halo' (I32Buffer, count 2*n) has from = \"(rank - 2) % ranks\", so it"
              + " needs a @Send(to = \"(rank + 2) % ranks\", step = 3) of I32Buffer with count 2*n in step 3",
          "every receive is matched by exactly one send",
          "Fix: declare @Send(to = \"(rank + 2) % ranks\", step = 3) on a field of type I32Buffer with @Shape({\"2\", \"n\"}),"
              + " or remove this @Recv.");
    }

    @Test
    void otherDataTypeSaysSoOnBothSides() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\")",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape(\"n\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\") @Shape(\"n\") F64Buffer in;",
          "}");
      Compilation c = assertErrors(2, f, "F32Buffer out",
          "[CommPlan/UnmatchedPeer] @Send on 'out' (F32Buffer, count n)",
          "there is none left to pair with it (@Recv on 'in' has from = \"rank - 1\" but is F64Buffer with count n)");
      assertThat(c).hadErrorContaining(
              "[CommPlan/UnmatchedPeer] @Recv on 'in' (F64Buffer, count n) has from = \"rank - 1\", so it needs a"
                  + " @Send(to = \"rank + 1\") of F64Buffer with count n in step 0, and there is none left to pair"
                  + " with it (@Send on 'out' has to = \"rank + 1\" but is F32Buffer with count n)")
          .inFile(f).onLineContaining("F64Buffer in");
    }

    @Test
    void otherCountIsComparedAsShapes() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\")",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape({\"ranks\", \"n\"}) F32Buffer out;",
          "  @Recv(from = \"rank - 1\") @Shape(\"2*n\") F32Buffer in;",
          "}");
      Compilation c = assertErrors(2, f, "F32Buffer out",
          "(@Recv on 'in' has from = \"rank - 1\" but is F32Buffer with count 2*n)");
      assertThat(c).hadErrorContaining("(@Send on 'out' has to = \"rank + 1\" but is F32Buffer with count ranks*n)")
          .inFile(f).onLineContaining("F32Buffer in");
    }

    @Test
    void wrappedPairsOnlyWithWrapped() {
      JavaFileObject f = source("p.Ring",
          "@CommPlan",
          "class Ring {",
          "  @Send(to = \"(rank + 1) % ranks\") @Shape(\"8\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\") @Shape(\"8\") F32Buffer in;",
          "}");
      Compilation c = assertErrors(2, f, "F32Buffer out",
          "needs a @Recv(from = \"(rank - 1) % ranks\") of F32Buffer with count 8 in step 0, and there is none left"
              + " to pair with it (@Recv on 'in' has from = \"rank - 1\", which pairs with to = \"rank + 1\")");
      assertThat(c).hadErrorContaining("needs a @Send(to = \"rank + 1\") of F32Buffer")
          .inFile(f).onLineContaining("F32Buffer in");
    }

    @Test
    void theSamePeerIsNotTheInverse() {
      JavaFileObject f = source("p.Ring",
          "@CommPlan",
          "class Ring {",
          "  @Send(to = \"rank + 1\") @Shape(\"8\") F32Buffer out;",
          "  @Recv(from = \"rank + 1\") @Shape(\"8\") F32Buffer in;",
          "}");
      assertErrors(2, f, "F32Buffer out",
          "(@Recv on 'in' has from = \"rank + 1\", which pairs with to = \"rank - 1\")");
    }

    @Test
    void anotherStep() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape(\"8\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\", step = 1) @Shape(\"8\") F32Buffer in;",
          "}");
      Compilation c = assertErrors(2, f, "F32Buffer out", "(@Recv on 'in' would, but is in step 1)");
      assertThat(c).hadErrorContaining("(@Send on 'out' would, but is in step 0)").inFile(f).onLineContaining("F32Buffer in");
    }

    @Test
    void oneToOne() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape(\"8\") F32Buffer a;",
          "  @Send(to = \"rank + 1\") @Shape(\"8\") F32Buffer b;",
          "  @Recv(from = \"rank - 1\") @Shape(\"8\") F32Buffer in;",
          "}");
      assertError(f, "F32Buffer b",
          "[CommPlan/UnmatchedPeer] @Send on 'b' (F32Buffer, count 8) has to = \"rank + 1\"",
          "(@Recv on 'in' would, but pairs with @Send on 'a' already)");
    }
  }

  @Nested
  class Rule19StepRace {
    @Test
    void aWriteOnTheRootOnlyIsAWrite() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Reduce(into = \"sum\", root = 1) @Shape(\"8\") F32Buffer a;",
          "  @AllReduce @Shape(\"8\") F32Buffer sum;",
          "}");
      assertError(f, "F32Buffer sum",
          "[CommPlan/StepRace] @AllReduce on 'sum' writes 'sum', which @Reduce on 'a' also writes, in the same step 0");
    }

    @Test
    void aSendReadsWhatAGatherWrites() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Gather(into = \"all\") @Shape(\"2\") F32Buffer part;",
          "  @Send(to = \"rank + 1\") @Shape({\"ranks\", \"2\"}) F32Buffer all;",
          "  @Recv(from = \"rank - 1\") @Shape(\"2*ranks\") F32Buffer in;",
          "}");
      assertError(f, "F32Buffer all",
          "[CommPlan/StepRace] @Send on 'all' reads 'all', which @Gather on 'part' writes, in the same step 0",
          "such as step = 1 on @Send on 'all'");
    }

    @Test
    void aRecvWritesWhatAnotherWrites() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Broadcast(into = \"in\", step = 2) @Shape(\"8\") F32Buffer src;",
          "  @Send(to = \"rank - 1\", step = 2) @Shape(\"8\") F32Buffer out;",
          "  @Recv(from = \"rank + 1\", step = 2) @Shape(\"8\") F32Buffer in;",
          "}");
      assertError(f, "F32Buffer in",
          "[CommPlan/StepRace] @Recv on 'in' writes 'in', which @Broadcast on 'src' also writes, in the same step 2");
    }

    @Test
    void aRecvDoesNotReadAndASendDoesNotWrite() {
      // A receive into 'x' while an all-gather reads it would race; a receive only writes, so a step where
      // one collective sends 'a' and another receives 'b' is clean, and so is sending a field that the
      // next step's all-reduce reads.
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Send(to = \"(rank + 1) % ranks\") @AllReduce(step = 1) @Shape(\"8\") F32Buffer a;",
          "  @Recv(from = \"(rank - 1) % ranks\") @Shape(\"8\") F32Buffer b;",
          "}");
      assertThat(compile(f)).succeededWithoutWarnings();
    }
  }

  @Nested
  class ExistingRulesOnTheNewAnnotations {
    @Test
    void typeMismatch() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Gather(into = \"all\") @Shape(\"1\") F32Buffer part;",
          "  @Shape(\"ranks\") F8E4M3Buffer all;",
          "}");
      assertError(f, "into = \"all\"",
          "[CommPlan/TypeMismatch] @Gather on 'part' (F32Buffer) gathers into 'all' (F8E4M3Buffer): send and receive"
              + " buffers must have the same data type. Fix: declare 'all' as F32Buffer, or 'part' as F8E4M3Buffer.");
    }

    @Test
    void unknownInto() {
      JavaFileObject f = source("p.Moe",
          "@CommPlan",
          "class Moe {",
          "  @AllToAll(into = \"rooted\") @Shape(\"ranks\") F32Buffer tokens;",
          "  @Shape(\"ranks\") F32Buffer routed;",
          "}");
      assertError(f, "into = \"rooted\"",
          "[CommPlan/UnknownInto] @AllToAll on 'tokens' has into = \"rooted\", but class 'Moe' has no field 'rooted'"
              + " (did you mean 'routed'?)");
    }

    @Test
    void intoSelf() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Scatter(into = \"x\") @Shape(\"ranks\") F32Buffer x;",
          "}");
      assertError(f, "into = \"x\"", "[CommPlan/IntoSelf] @Scatter on 'x' has into = \"x\", the field itself");
    }

    @Test
    void sendOnANonBuffer() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape(\"4\") float[] x;",
          "}");
      assertError(f, "float[] x", "[CommPlan/NotABuffer] 'x' carries @Send but has type float[]");
    }

    @Test
    void recvWithoutShape() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape(\"4\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\") F32Buffer in;",
          "}");
      assertError(f, "@Recv",
          "[CommPlan/MissingShape] 'in', the buffer of @Recv, has no @Shape: every buffer of a plan declares its"
              + " shape, one entry per dimension. Fix: add @Shape({\"4\"}) to 'in'.");
    }

    @Test
    void recvWithoutShapeAndNoSendToPairWith() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Recv(from = \"rank - 1\") F32Buffer in;",
          "}");
      assertError(f, "@Recv",
          "[CommPlan/MissingShape] 'in', the buffer of @Recv, has no @Shape: every buffer of a plan declares its"
              + " shape, one entry per dimension. Fix: add @Shape({\"1024\"}) to 'in'.");
    }

    @Test
    void allToAllReceiveWithoutShape() {
      JavaFileObject f = source("p.Moe",
          "@CommPlan(dims = \"n\")",
          "class Moe {",
          "  @AllToAll(into = \"routed\") @Shape({\"ranks\", \"n\"}) F32Buffer tokens;",
          "  F32Buffer routed;",
          "}");
      assertError(f, "F32Buffer routed;",
          "[CommPlan/MissingShape] 'routed', the receive buffer of @AllToAll on 'tokens', has no @Shape",
          "Fix: add @Shape({\"ranks\", \"n\"}) to 'routed'.");
    }

    @Test
    void sendAndRecvOnOneFieldInOneStep() {
      JavaFileObject f = source("p.Ring",
          "@CommPlan",
          "class Ring {",
          "  @Send(to = \"(rank + 1) % ranks\")",
          "  @Recv(from = \"(rank - 1) % ranks\")",
          "  @Shape(\"4\") F32Buffer x;",
          "}");
      assertError(f, "@Recv",
          "[CommPlan/DuplicateCollective] 'x' has @Send and @Recv both in step 0; a field takes part in one"
              + " collective per step. Fix: give @Recv another step, such as step = 1.");
    }

    @Test
    void privateField() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @Reduce @Shape(\"8\") private F32Buffer g;",
          "}");
      assertError(f, "private F32Buffer g", "[CommPlan/PrivateField] 'g' carries @Reduce but is private");
    }

    @Test
    void outsideAPlan() {
      JavaFileObject f = source("p.Pipe",
          "class Pipe {",
          "  @Recv(from = \"rank - 1\") F32Buffer in;",
          "}");
      assertError(f, "F32Buffer in",
          "[CommPlan/NotInPlan] 'in' carries @Recv, but its class 'Pipe' is not annotated @CommPlan");
    }
  }

  @Nested
  class Names {
    @Test
    void invalidName() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(name = \"my.Plan\")",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadName] @CommPlan(name = \"my.Plan\") is not a valid Java class name."
              + " Fix: use a simple name such as \"GradsPlan\".");
    }

    @Test
    void nameOfTheNestedBuilder() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(name = \"Builder\")",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadName] @CommPlan(name = \"Builder\") would clash with the generated class's nested Builder.");
    }

    @Test
    void nameOfTheNestedBuilderBehindAnInvisibleCharacter() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(name = \"Build\u200Ber\")",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadName] @CommPlan(name = \"Build\\u200Ber\") would clash with the generated class's nested"
              + " Builder.");
    }

    @Test
    void nameOfTheClassItselfBehindAnInvisibleCharacter() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(name = \"Grads\u200B\")",
          "class Grads {}");
      assertError(f, "@CommPlan",
          "[CommPlan/BadName] @CommPlan(name = \"Grads\\u200B\") would generate p.Grads, which is the class 'p.Grads'"
              + " itself.");
    }

    @Test
    void nameOfTheClassItself() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan(name = \"Grads\")",
          "class Grads {}");
      assertError(f, "@CommPlan", "[CommPlan/BadName] @CommPlan(name = \"Grads\") would generate p.Grads");
    }
  }

  @Test
  void annotationsOutsideAPlan() {
    JavaFileObject f = source("p.Grads",
        "class Grads {",
        "  @AllReduce @Shape(\"8\") F32Buffer g;",
        "}");
    Compilation c = compile(f);
    assertThat(c).hadErrorCount(2);
    assertThat(c).hadErrorContaining(
            "[CommPlan/NotInPlan] 'g' carries @AllReduce, but its class 'Grads' is not annotated @CommPlan,"
                + " so nothing reads it. Fix: annotate 'Grads' with @CommPlan, or remove @AllReduce.")
        .inFile(f).onLineContaining("F32Buffer g");
    assertThat(c).hadErrorContaining("[CommPlan/NotInPlan] 'g' carries @Shape").inFile(f).onLineContaining("F32Buffer g");
  }

  @Test
  void fieldsThatAreOneNameToJavac() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan",
        "class Grads {",
        "  @AllReduce @Shape(\"1\") F32Buffer g;",
        "  @AllReduce(step = 1) @Shape(\"1\") F32Buffer g\u200B;",
        "}");
    Compilation c = compile(f);
    if (compiler == Toolchain.JAVAC) {
      // javac reads g\u200B as g: its own error, and none of ours.
      assertThat(c).hadErrorCount(1);
      assertThat(c).hadErrorContaining("variable g is already defined");
    } else {
      // ecj keeps the character: two fields, whose accessors the generated code tells apart.
      assertThat(c).succeededWithoutWarnings();
      assertThat(c).generatedSourceFile("p.GradsPlan").contentsAsUtf8String().contains("public F32Buffer gBuffer()");
      assertThat(c).generatedSourceFile("p.GradsPlan").contentsAsUtf8String().contains("public Builder bindGBuffer(");
    }
  }

  @Test
  void annotationsOnAnEnumConstant() {
    JavaFileObject f = source("p.Grads",
        "enum Grads {",
        "  @AllReduce",
        "  A,",
        "  B",
        "}");
    // ecj cannot place an enum constant (no case for them in its Messager): the enum, then.
    assertError(f, compiler == Toolchain.JAVAC ? "@AllReduce" : "enum Grads",
        "[CommPlan/NotInPlan] 'A' carries @AllReduce, but its class 'Grads' is not annotated @CommPlan");
  }

  @Test
  void diagnosticsComeInSourceOrder() throws java.io.IOException {
    JavaFileObject f = source("p.Grads",
        "class Loose {",
        "  @AllReduce @Shape(\"1\") F32Buffer loose;",
        "}",
        "@CommPlan(dims = {\"n\", \"n\"})",
        "class Grads {",
        "  @AllReduce(into = \"nope\") @Shape(\"n\") F32Buffer a;",
        "  @AllReduce @Shape(\"m\") F32Buffer b;",
        "  @AllReduce @Shape(\"1\") private F32Buffer c;",
        "  @AllGather(into = \"e\") @Shape(\"n\") F32Buffer d;",
        "  F32Buffer e;",
        "  @Broadcast(root = -1) @Shape({\"2\", \"0\"}) F32Buffer g;",
        "}");
    Compilation c = compile(f);
    List<String> lines = f.getCharContent(false).toString().lines().toList();
    List<String> reported = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : c.errors()) {
      String id = d.getMessage(Locale.ROOT).substring(0, d.getMessage(Locale.ROOT).indexOf(']') + 1);
      reported.add(lines.get((int) d.getLineNumber() - 1).strip() + " " + id);
    }
    List<String> loose = List.of(
        "@AllReduce @Shape(\"1\") F32Buffer loose; [CommPlan/NotInPlan]",
        "@AllReduce @Shape(\"1\") F32Buffer loose; [CommPlan/NotInPlan]");
    if (compiler == Toolchain.ECJ) {
      // ecj gives no order of a file's top-level types (its root elements are a hash set) and no offsets:
      // each type's errors are in source order, the types in the order processed (plans first).
      assertWithMessage("errors").that(reported.subList(reported.size() - 2, reported.size())).isEqualTo(loose);
      reported = new ArrayList<>(reported.subList(0, reported.size() - 2));
      reported.addAll(0, loose);
    }
    // One field's errors in the order of its annotations, as written.
    assertWithMessage("errors, each after its line").that(reported).containsExactly(
        "@AllReduce @Shape(\"1\") F32Buffer loose; [CommPlan/NotInPlan]",
        "@AllReduce @Shape(\"1\") F32Buffer loose; [CommPlan/NotInPlan]",
        "@CommPlan(dims = {\"n\", \"n\"}) [CommPlan/BadDim]",
        "@AllReduce(into = \"nope\") @Shape(\"n\") F32Buffer a; [CommPlan/UnknownInto]",
        "@AllReduce @Shape(\"m\") F32Buffer b; [CommPlan/UnknownDim]",
        "@AllReduce @Shape(\"1\") private F32Buffer c; [CommPlan/PrivateField]",
        "F32Buffer e; [CommPlan/MissingShape]",
        "@Broadcast(root = -1) @Shape({\"2\", \"0\"}) F32Buffer g; [CommPlan/BadRoot]",
        "@Broadcast(root = -1) @Shape({\"2\", \"0\"}) F32Buffer g; [CommPlan/BadShape]").inOrder();
  }

  @Test
  void everyProblemOfAPlanIsReportedAtOnce() {
    JavaFileObject f = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @AllGather(into = \"all\") @Shape(\"n\") F32Buffer part;",
        "  @Shape(\"n\") F32Buffer all;",
        "  @Broadcast(root = -3) @Shape(\"m\") F32Buffer params;",
        "}");
    Compilation c = compile(f);
    assertThat(c).hadErrorCount(3);
    assertThat(c).hadErrorContaining("[CommPlan/GatherSize]").inFile(f).onLineContaining("into = \"all\"");
    assertThat(c).hadErrorContaining("[CommPlan/BadRoot]").inFile(f).onLineContaining("root = -3");
    assertThat(c).hadErrorContaining("[CommPlan/UnknownDim]").inFile(f).onLineContaining("root = -3");
  }
}
