package dev.commplan.processor;

import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import dev.commplan.processor.Plans.Toolchain;
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
 * The rules of meshes (the contract's 20 to 22): one negative test per diagnostic, each checking the id,
 * the message's key parts, the line of the attribute it is reported on, and that it is the only error;
 * under javac and ecj. And what over an axis must not report: sizes by the axis, a root the mesh bounds.
 */
@ParameterizedClass(name = "{0}")
@EnumSource(Toolchain.class)
class MeshDiagnosticsTest {
  @Parameter
  Toolchain compiler;

  private Compilation assertError(JavaFileObject f, String line, String... parts) {
    Compilation c = compiler.compile(f);
    assertThat(c).failed();
    assertThat(c).hadErrorCount(1);
    for (String part : parts) {
      assertThat(c).hadErrorContaining(part).inFile(f).onLineContaining(line);
    }
    return c;
  }

  private void assertCompiles(JavaFileObject f) {
    assertThat(compiler.compile(f)).succeededWithoutWarnings();
  }

  @Nested
  class Rule20Axes {
    @Test
    void overAnUndeclaredAxis() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"dp\", \"tp\"})",
          "class Mlp {",
          "  @AllReduce(step = 1,",
          "      over = \"tpp\")",
          "  @Shape(\"8\") F32Buffer g;",
          "}");
      assertError(f, "over = \"tpp\"",
          "[CommPlan/UnknownAxis] @AllReduce on 'g' has over = \"tpp\", but that is not an axis of this plan"
              + " (declared: \"dp\", \"tp\") (did you mean \"tp\"?). Fix: use a declared axis, add \"tpp\" to"
              + " @CommPlan(axes), or leave over empty for the whole communicator.");
    }

    @Test
    void overWithoutAxes() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan",
          "class Pipe {",
          "  @Send(to = \"rank + 1\",",
          "      over = \"pp\")",
          "  @Shape(\"8\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\") @Shape(\"8\") F32Buffer in;",
          "}");
      assertError(f, "over = \"pp\"",
          "[CommPlan/UnknownAxis] @Send on 'out' has over = \"pp\", but @CommPlan declares no axes, so every"
              + " collective runs over the whole communicator. Fix: declare the mesh's axes, such as"
              + " @CommPlan(axes = {\"pp\"}), and build the plan on a Mesh, or remove over.");
    }

    /**
     * A reserved name in over is no axis, and cannot become one: the fix is over = "" (issue 34, 5a: the
     * message said to add it to axes, which then failed as a reserved name).
     */
    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "ranks | ranks always means the whole communicator's size",
      "rank  | rank is this rank's coordinate in a peer expression",
    })
    void overAReservedName(String over, String why) {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"dp\", \"tp\"})",
          "class Mlp {",
          "  @AllReduce(step = 1,",
          "      over = \"" + over + "\")",
          "  @Shape(\"8\") F32Buffer g;",
          "}");
      assertError(f, "over = \"" + over + "\"",
          "[CommPlan/UnknownAxis] @AllReduce on 'g' has over = \"" + over + "\", but \"" + over + "\" is no axis: "
              + why + ", and no axis may be named so. Fix: leave over empty (over = \"\") for the whole"
              + " communicator, or use a declared axis (\"dp\", \"tp\").");
    }

    @Test
    void overTheReservedRanksWithoutAxes() {
      JavaFileObject f = source("p.Grads",
          "@CommPlan",
          "class Grads {",
          "  @AllReduce(step = 1,",
          "      over = \"ranks\")",
          "  @Shape(\"8\") F32Buffer g;",
          "}");
      assertError(f, "over = \"ranks\"",
          "[CommPlan/UnknownAxis] @AllReduce on 'g' has over = \"ranks\", but \"ranks\" is no axis: ranks always"
              + " means the whole communicator's size, and no axis may be named so. Fix: leave over empty"
              + " (over = \"\") for the whole communicator.");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {
      "ranks | ranks always means the whole communicator's size | ranksAxis",
      "rank  | rank is this rank's coordinate in a peer expression | rankAxis",
    })
    void reserved(String axis, String why, String fix) {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"dp\",",
          "    \"" + axis + "\"})",
          "class Mlp {}");
      assertError(f, compiler == Toolchain.JAVAC ? "\"" + axis + "\"})" : "@CommPlan(axes",
          "[CommPlan/BadAxis] axes entry \"" + axis + "\" is reserved: " + why + ". Fix: rename the axis, such as \""
              + fix + "\".");
    }

    @Test
    void duplicated() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"tp\", \"tp\"})",
          "class Mlp {}");
      assertError(f, "axes = ", "[CommPlan/BadAxis] axes lists \"tp\" twice. Fix: remove the second \"tp\".");
    }

    @Test
    void duplicatedThroughAnIgnorableCharacter() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"tp\", \"t\\u200Bp\"})",
          "class Mlp {}");
      assertError(f, "axes = ",
          "[CommPlan/BadAxis] axes entry \"t\\u200Bp\" is the axis \"tp\" again: Java ignores U+200B (ZERO WIDTH"
              + " SPACE) in names.");
    }

    @Test
    void alsoADim() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(dims = {\"h\", \"tp\"}, axes = {\"tp\"})",
          "class Mlp {}");
      assertError(f, "axes = ",
          "[CommPlan/BadAxis] axes entry \"tp\" is also a dim: in @Shape, a name is one size, either a dim bound on"
              + " the builder or an axis's size from the mesh. Fix: rename the axis or the dim, such as \"tpAxis\""
              + " for the axis.");
    }

    /**
     * On the axes line, under both compilers, where dims holds the same string on another line (issue 34,
     * 6: ecj, which places an attribute and not its entries, put it on the first attribute holding an
     * equal entry, dims). Either order of the two attributes.
     */
    @ParameterizedTest
    @ValueSource(booleans = {true, false})
    void alsoADimOnTheAxesLine(boolean dimsFirst) {
      String dims = "dims = {\"h\", \"tp\"}";
      String axes = "axes = {\"dp\", \"tp\"}";
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(" + (dimsFirst ? dims : axes) + ",",
          "    " + (dimsFirst ? axes : dims) + ")",
          "class Mlp {}");
      assertError(f, "axes = ",
          "[CommPlan/BadAxis] axes entry \"tp\" is also a dim: in @Shape, a name is one size, either a dim bound on"
              + " the builder or an axis's size from the mesh. Fix: rename the axis or the dim, such as \"tpAxis\""
              + " for the axis.");
    }

    @ParameterizedTest
    @CsvSource(delimiter = '|', value = {"tensor parallel | tensorParallel", "class | classAxis", "2d | a2d"})
    void notAnIdentifier(String axis, String fix) {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"" + axis + "\"})",
          "class Mlp {}");
      assertError(f, "axes = ",
          "[CommPlan/BadAxis] axes entry \"" + axis + "\" is not a Java identifier (an axis is a size in @Shape and"
              + " a name in the generated code). Fix: rename it, such as \"" + fix + "\".");
    }

    @Test
    void aShapeNameThatIsNeitherADimNorAnAxis() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"})",
          "class Mlp {",
          "  @AllGather(over = \"tp\", into = \"full\") @Shape(\"h\") F32Buffer part;",
          "  @Shape({\"tq\", \"h\"}) F32Buffer full;",
          "}");
      assertError(f, "\"tq\"",
          "[CommPlan/UnknownDim] @Shape entry \"tq\" of 'full' names 'tq', which is neither a dim nor an axis of this"
              + " plan (dims: \"h\"; axes: \"dp\", \"tp\") (did you mean \"tp\"?). Fix: add \"tq\" to @CommPlan(dims), or"
              + " use a declared dim, axis or ranks.");
    }
  }

  @Nested
  class Rule21SizesOverAnAxis {
    @Test
    void aGatherOverAnAxisNeedsTheAxisTimesTheSend() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"})",
          "class Mlp {",
          "  @AllGather(over = \"tp\",",
          "      into = \"full\")",
          "  @Shape(\"h\") F32Buffer part;",
          "  @Shape({\"ranks\", \"h\"}) F32Buffer full;",
          "}");
      assertError(f, "into = \"full\"",
          "[CommPlan/GatherSize] @AllGather on 'part' gathers into 'full': count(full) must be tp × count(part) ="
              + " tp*h over axis \"tp\", but 'full' has @Shape({\"ranks\", \"h\"}) = ranks*h, sized by ranks, the whole"
              + " communicator's size, not by tp, the size of axis \"tp\" that this collective runs over. Fix: declare"
              + " 'full' as @Shape({\"tp\", \"h\"}).");
    }

    @Test
    void aScatterOverAnAxisNeedsTheAxisTimesTheReceive() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"}, ranks = 8)",
          "class Mlp {",
          "  @ReduceScatter(over = \"dp\",",
          "      into = \"shard\")",
          "  @Shape({\"tp\", \"h\"}) F32Buffer grads;",
          "  @Shape(\"h\") F32Buffer shard;",
          "}");
      assertError(f, "into = \"shard\"",
          "[CommPlan/ScatterSize] @ReduceScatter on 'grads' scatters into 'shard': count(grads) must be dp ×"
              + " count(shard) = dp*h over axis \"dp\", but 'grads' has @Shape({\"tp\", \"h\"}) = tp*h. Fix: declare"
              + " 'grads' as @Shape({\"dp\", \"h\"}).");
    }

    @Test
    void aNegativeRootOverAnAxis() {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(axes = {\"pp\"})",
          "class Mlp {",
          "  @Broadcast(over = \"pp\",",
          "      root = -1)",
          "  @Shape(\"8\") F32Buffer params;",
          "}");
      assertError(f, "root = -1",
          "[CommPlan/BadRoot] @Broadcast on 'params' has root = -1, but a root is a rank, 0 or more. Fix: set root"
              + " to a rank in [0, pp).");
    }

    @Test
    void sizesAndRootsByTheAxisCompile() {
      // ranks = 4 fixes the world, not the axes: root 5 over tp is checked by the mesh when built, and an
      // in-place count of 6 over tp is not provably indivisible.
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"}, ranks = 4)",
          "class Mlp {",
          "  @AllGather(over = \"tp\", into = \"full\") @Shape(\"h\") F32Buffer part;",
          "  @Shape({\"tp\", \"h\"}) F32Buffer full;",
          "  @Scatter(over = \"dp\", root = 5, into = \"mine\", step = 1) @Shape(\"h * dp\") F32Buffer all;",
          "  @Shape(\"h\") F32Buffer mine;",
          "  @AllGather(over = \"tp\", step = 2) @Shape(\"6\") F32Buffer inPlace;",
          "  @AllGather(into = \"world\", step = 3) @Shape(\"h\") F32Buffer worldPart;",
          "  @Shape({\"4\", \"h\"}) F32Buffer world;",
          "}");
      assertCompiles(f);
    }
  }

  @Nested
  class Rule22PairsPerAxis {
    @Test
    void aSendPairsOnlyWithARecvOverTheSameAxis() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\", axes = {\"pp\", \"dp\"})",
          "class Pipe {",
          "  @Send(over = \"pp\",",
          "      to = \"rank + 1\")",
          "  @Shape(\"n\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\", over = \"dp\") @Shape(\"n\") F32Buffer in;",
          "}");
      Compilation c = compiler.compile(f);
      assertThat(c).hadErrorCount(2);
      assertThat(c).hadErrorContaining("[CommPlan/UnmatchedPeer] @Send on 'out' (F32Buffer, count n) has to ="
              + " \"rank + 1\", so it needs a @Recv(from = \"rank - 1\", over = \"pp\") of F32Buffer with count n in"
              + " step 0, and there is none left to pair with it (@Recv on 'in' would, but runs over axis \"dp\", not"
              + " over axis \"pp\": a transfer pairs only with one over the same axis)")
          .inFile(f).onLineContaining("to = \"rank + 1\"");
      assertThat(c).hadErrorContaining("[CommPlan/UnmatchedPeer] @Recv on 'in' (F32Buffer, count n) has from ="
              + " \"rank - 1\", so it needs a @Send(to = \"rank + 1\", over = \"dp\")")
          .inFile(f).onLineContaining("from = \"rank - 1\"");
    }

    @Test
    void anAxisTransferDoesNotPairWithAWorldOne() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\", axes = {\"pp\"})",
          "class Pipe {",
          "  @Send(to = \"rank + 1\") @Shape(\"n\") F32Buffer out;",
          "  @Recv(from = \"rank - 1\", over = \"pp\") @Shape(\"n\") F32Buffer in;",
          "}");
      Compilation c = compiler.compile(f);
      assertThat(c).hadErrorCount(2);
      assertThat(c).hadErrorContaining("(@Recv on 'in' would, but runs over axis \"pp\", not over the whole"
          + " communicator: a transfer pairs only with one over the same axis)").inFile(f)
          .onLineContaining("@Send(to");
    }

    @Test
    void pairsOverEachAxisCompile() {
      JavaFileObject f = source("p.Pipe",
          "@CommPlan(dims = \"n\", axes = {\"pp\", \"dp\"})",
          "class Pipe {",
          "  @Send(to = \"rank + 1\", over = \"pp\") @Shape(\"n\") F32Buffer a;",
          "  @Recv(from = \"rank - 1\", over = \"dp\") @Shape(\"n\") F32Buffer b;",
          "  @Send(to = \"rank + 1\", over = \"dp\") @Shape(\"n\") F32Buffer c;",
          "  @Recv(from = \"rank - 1\", over = \"pp\") @Shape(\"n\") F32Buffer d;",
          "  @Send(to = \"(rank + 1) % ranks\") @Shape(\"n\") F32Buffer e;",
          "  @Recv(from = \"(rank - 1) % ranks\") @Shape(\"n\") F32Buffer f;",
          "}");
      assertCompiles(f);
    }
  }

  @Nested
  class RacesAcrossAxes {
    @ParameterizedTest
    @ValueSource(strings = {"dp", ""})
    void twoCollectivesOverDifferentAxesOnOneBufferRace(String otherAxis) {
      JavaFileObject f = source("p.Mlp",
          "@CommPlan(dims = \"n\", axes = {\"dp\", \"tp\"})",
          "class Mlp {",
          "  @AllReduce(over = \"tp\") @Shape(\"n\") F32Buffer g;",
          "  @Broadcast(into = \"g\"" + (otherAxis.isEmpty() ? "" : ", over = \"" + otherAxis + "\"") + ",",
          "      step = 0)",
          "  @Shape(\"n\") F32Buffer params;",
          "}");
      assertError(f, "step = 0",
          "[CommPlan/StepRace] @Broadcast on 'params' writes 'g', which @AllReduce on 'g' also writes, in the same"
              + " step 0");
    }
  }
}
