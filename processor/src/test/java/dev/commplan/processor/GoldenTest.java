package dev.commplan.processor;

import static com.google.common.truth.Truth.assertWithMessage;
import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.JavaFileObjects;
import dev.commplan.processor.Plans.Toolchain;
import dev.commplan.processor.generator.PlanGenerator;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Optional;
import java.util.stream.Stream;
import javax.tools.JavaFileObject;
import javax.tools.StandardLocation;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Valid plans compile without warnings, under javac ({@code -Xlint:all}, less "processing") and under ecj
 * (Eclipse's compiler, with the warnings Eclipse shows by default), and generate exactly the golden sources
 * in {@code src/test/resources/golden/}, both source-equivalent and byte for byte, under both.
 *
 * <p>After an intended change to the generated code, rewrite the golden files instead of comparing, then
 * review the diff:
 *
 * <pre>
 * COMMPLAN_GOLDEN_UPDATE=1 mvn -pl annotations,runtime,processor -am test -Dtest='dev.commplan.processor.GoldenTest' \
 *     -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 *
 * (run from the repository root; the files are written relative to the processor module's directory).
 */
class GoldenTest {
  private static final boolean UPDATE = "1".equals(System.getenv("COMMPLAN_GOLDEN_UPDATE"));

  static Stream<Arguments> plans() {
    return Stream.of(
        // docs/dev/generated-code.md's example: dims, ranks, AVG, in place and a gather into another field.
        plan("p.GradsPlan",
            source("p.Grads",
                "@CommPlan(dims = {\"hidden\"})",
                "class Grads {",
                "  @AllReduce(op = ReduceOp.AVG) @Shape({\"4\", \"hidden\"}) F32Buffer w;",
                "  @AllGather(into = \"all\", step = 1) @Shape(\"hidden\") F32Buffer part;",
                "  @Shape({\"ranks\", \"hidden\"}) F32Buffer all;",
                "}"),
            // The generated API, used as users do.
            source("p.UseGrads",
                "import dev.commplan.runtime.plan.Schedule;",
                "final class UseGrads {",
                "  private UseGrads() {}",
                "  static String use(Communicator comm, F32Buffer w) {",
                "    try (GradsPlan plan = GradsPlan.builder().hidden(1024).bindW(w).build(comm)) {",
                "      F32Buffer all = plan.all();",
                "      plan.execute(comm.stream());",
                "      Schedule schedule = plan.schedule();",
                "      Communicator c = plan.communicator();",
                "      return plan.describe() + all + schedule + c + plan.w() + plan.part();",
                "    }",
                "  }",
                "}")),
        // Every data type, every op.
        plan("p.DataTypesPlan",
            source("p.DataTypes",
                "@CommPlan(dims = \"n\")",
                "class DataTypes {",
                "  @AllReduce(op = ReduceOp.SUM) @Shape(\"n\") F16Buffer f16;",
                "  @AllReduce(op = ReduceOp.PROD) @Shape(\"n\") BF16Buffer bf16;",
                "  @AllReduce(op = ReduceOp.MAX) @Shape(\"n\") F32Buffer f32;",
                "  @AllReduce(op = ReduceOp.MIN) @Shape(\"n\") F64Buffer f64;",
                "  @AllReduce(op = ReduceOp.AVG) @Shape(\"n\") I8Buffer i8;",
                "  @AllReduce @Shape(\"n\") U8Buffer u8;",
                "  @AllReduce @Shape(\"n\") I32Buffer i32;",
                "  @AllReduce @Shape(\"n\") U32Buffer u32;",
                "  @AllReduce @Shape(\"n\") I64Buffer i64;",
                "  @AllReduce @Shape(\"n\") U64Buffer u64;",
                "}")),
        // Every collective, in place and out of place; a field reduced in one step and broadcast in another.
        plan("p.CollectivesPlan",
            source("p.Collectives",
                "@CommPlan(dims = {\"n\", \"m\"})",
                "class Collectives {",
                "  @AllReduce @Broadcast(root = 2, step = 4) @Shape({\"n\", \"m\"}) F32Buffer ar;",
                "  @AllReduce(op = ReduceOp.MAX, into = \"arOut\") @Shape(\"n * m\") F64Buffer arIn;",
                "  @Shape({\"m\", \"n\"}) F64Buffer arOut;",
                "  @Broadcast(root = 1, step = 1) @Shape(\"16\") I32Buffer bc;",
                "  @Broadcast(into = \"bcOut\", step = 1) @Shape(\"16\") I32Buffer bcIn;",
                "  @Shape({\"4\", \"4\"}) I32Buffer bcOut;",
                "  @AllGather(step = 2) @Shape({\"ranks\", \"n\"}) BF16Buffer agAll;",
                "  @AllGather(into = \"agOut\", step = 2) @Shape(\"n\") BF16Buffer agIn;",
                "  @Shape(\"n*ranks\") BF16Buffer agOut;",
                "  @ReduceScatter(op = ReduceOp.AVG, step = 3) @Shape(\"ranks*n\") F16Buffer rsAll;",
                "  @ReduceScatter(op = ReduceOp.PROD, into = \"rsOut\", step = 3) @Shape({\"ranks\", \"n\"}) F16Buffer rsIn;",
                "  @Shape(\"n\") F16Buffer rsOut;",
                "  @AllReduce(step = -1) @Shape(\"1\") I64Buffer early;",
                "  @Shape(\"3\") U8Buffer scratch;",
                "}")),
        // Issue 17's collectives, in place and out of place, with ops and roots; the fp8 types; a ring of
        // wrapped Send/Recv and a pipeline of unwrapped ones (peers as written, passed in canonical form).
        plan("p.NewCollectivesPlan",
            source("p.NewCollectives",
                "@CommPlan(dims = \"n\")",
                "class NewCollectives {",
                "  @Reduce(op = ReduceOp.MAX, root = 1) @Shape(\"n\") F32Buffer red;",
                "  @Reduce(into = \"redOut\") @Shape({\"2\", \"n\"}) F64Buffer redIn;",
                "  @Shape(\"2*n\") F64Buffer redOut;",
                "  @Gather(root = 1, step = 1) @Shape({\"ranks\", \"n\"}) BF16Buffer gatherAll;",
                "  @Gather(into = \"gatherOut\", step = 1) @Shape(\"n\") BF16Buffer gatherIn;",
                "  @Shape({\"ranks\", \"n\"}) BF16Buffer gatherOut;",
                "  @Scatter(step = 2) @Shape(\"ranks*n\") F16Buffer scatterAll;",
                "  @Scatter(root = 1, into = \"scatterOut\", step = 2) @Shape({\"ranks\", \"n\"}) I32Buffer scatterIn;",
                "  @Shape(\"n\") I32Buffer scatterOut;",
                "  @AllToAll(into = \"exchanged\", step = 3) @Shape({\"ranks\", \"n\"}) F8E4M3Buffer local;",
                "  @Shape(\"n * ranks\") F8E4M3Buffer exchanged;",
                "  @Send(to = \"(rank + 1) % ranks\", step = 4) @Shape(\"n\") F32Buffer ringOut;",
                "  @Recv(from = \"(rank-1)%ranks\", step = 4) @Shape(\"n\") F32Buffer ringIn;",
                "  @Send(to = \"rank + 1\", step = 5) @Shape(\"n\") F8E5M2Buffer toNext;",
                "  @Recv(from = \"rank - 1\", step = 5) @Shape(\"n\") F8E5M2Buffer fromPrevious;",
                "}")),
        // Fixed ranks: 4*n equals ranks*n, roots and in-place counts checked against 4.
        plan("p.FixedPlan",
            source("p.Fixed",
                "@CommPlan(dims = \"n\", ranks = 4)",
                "class Fixed {",
                "  @AllGather(into = \"all\") @Shape(\"n\") F32Buffer part;",
                "  @Shape(\"4*n\") F32Buffer all;",
                "  @ReduceScatter(into = \"slice\") @Shape({\"2\", \"2 * n\"}) F32Buffer whole;",
                "  @Shape(\"n\") F32Buffer slice;",
                "  @AllGather @Shape(\"8\") F32Buffer gathered;",
                "  @ReduceScatter(step = 1) @Shape({\"ranks\", \"n\"}) F32Buffer scattered;",
                "  @Broadcast(root = 3) @Shape(\"ranks\") I32Buffer params;",
                "  @AllReduce(into = \"y\") @Shape(\"ranks\") I32Buffer x;",
                "  @Shape(\"4\") I32Buffer y;",
                "  @AllGather(step = 2) @Shape(\"3 * n\") F64Buffer maybe;",
                "}")),
        // A nested class: enclosing names joined by '_'.
        plan("p.Outer_GradsPlan",
            source("p.Outer",
                "class Outer {",
                "  @CommPlan(dims = \"n\")",
                "  static class Grads {",
                "    @AllReduce @Shape(\"n\") F32Buffer g;",
                "  }",
                "  interface Holder {",
                "    @CommPlan class Inside { @AllReduce @Shape(\"1\") F32Buffer g; }",
                "  }",
                "}")),
        plan("p.Outer_Holder_InsidePlan",
            source("p.Outer",
                "class Outer {",
                "  interface Holder {",
                "    @CommPlan class Inside { @AllReduce @Shape(\"1\") F32Buffer g; }",
                "  }",
                "}")),
        // name; and a name that is also a runtime type's.
        plan("p.Custom",
            source("p.Grads",
                "@CommPlan(name = \"Custom\")",
                "class Grads {",
                "  @Broadcast @Shape(\"2\") F32Buffer g;",
                "}")),
        plan("p.Plan",
            source("p.Grads",
                "@CommPlan(name = \"Plan\")",
                "class Grads {",
                "  @Broadcast @Shape(\"2\") F32Buffer g;",
                "}")),
        // Names that clash with the generated class's members, Object's, the builder's, and its locals.
        plan("p.ClashesPlan",
            source("p.Clashes",
                "@CommPlan(dims = {\"wait\", \"build\", \"hidden\", \"bindW\", \"Math\", \"b\", \"comm\", \"hiddenSet\","
                    + " \"fingerprintCheck\"})",
                "class Clashes {",
                "  @AllReduce @Shape(\"wait\") F32Buffer close;",
                "  @AllReduce @Shape(\"build\") F32Buffer builder;",
                "  @AllReduce @Shape(\"hidden\") F32Buffer plan;",
                "  @AllReduce @Shape(\"b\") F32Buffer w;",
                "  @AllReduce @Shape(\"comm\") F32Buffer W;",
                "  @AllReduce @Shape(\"Math\") F32Buffer hidden;",
                "  @AllReduce @Shape(\"ranks\") F32Buffer Math;",
                "  @AllReduce @Shape(\"bindW\") F32Buffer closeBuffer;",
                "  @AllReduce @Shape(\"hiddenSet\") F32Buffer toString;",
                "  @AllReduce @Shape(\"1\") F32Buffer getClass;",
                "  @AllReduce @Shape(\"2\") F32Buffer DataType;",
                "  @AllReduce @Shape(\"3\") F32Buffer Objects;",
                "  @AllReduce @Shape(\"4\") F32Buffer ranks;",
                "  @AllReduce @Shape(\"5\") F32Buffer execute;",
                "  @AllReduce @Shape(\"fingerprintCheck\") F32Buffer hostAccessGuard;",
                "}"),
            source("p.UseClashes",
                "final class UseClashes {",
                "  private UseClashes() {}",
                "  static F32Buffer use(Communicator comm, F32Buffer mine) {",
                "    ClashesPlan plan = ClashesPlan.builder().waitDim(1).buildDim(2).hidden(3).bindWDim(4).Math(5).b(6)",
                "        .comm(7).hiddenSet(8).fingerprintCheckDim(9).hostAccessGuard(false).fingerprintCheck(false)",
                "        .bindW(mine).bindWBuffer(mine).bindClose(mine).bindHostAccessGuard(mine).build(comm);",
                "    plan.close();",
                "    if (plan.hostAccessGuard() == null) { return null; }",
                "    return plan.closeBufferBuffer() != null ? plan.builderBuffer() : plan.executeBuffer();",
                "  }",
                "}")),
        // Dims and fields named with characters outside the Basic Multilingual Plane.
        plan("p.UnicodePlan",
            source("p.Unicode",
                "@CommPlan(dims = {\"𝑛\", \"x𠀋\"})",
                "class Unicode {",
                "  @AllGather(into = \"𝔸ll\") @Shape({\"𝑛\", \"4 * x𠀋\"}) F32Buffer 𝑝art;",
                "  @Shape({\"ranks\", \"𝑛*x𠀋\", \"4\"}) F32Buffer 𝔸ll;",
                "}"),
            source("p.UseUnicode",
                "final class UseUnicode {",
                "  private UseUnicode() {}",
                "  static F32Buffer use(Communicator comm, F32Buffer mine) {",
                "    try (UnicodePlan plan = UnicodePlan.builder().𝑛(2).x𠀋(3).bind𝔸ll(mine).build(comm)) {",
                "      return plan.𝑝art();",
                "    }",
                "  }",
                "}")),
        // Names with identifier-ignorable characters, which javac drops: the generated code spells them as
        // javac reads them ("wait\u200B" is wait, whose setter becomes waitDim).
        plan("p.IgnorablePlan",
            source("p.Ignorable",
                "@CommPlan(name = \"Ignorable\u200BPlan\", dims = {\"wait\u200B\", \"n\"})",
                "class Ignorable {",
                "  @AllGather(into = \"all\u200B\") @Shape(\"n\u200B\") F32Buffer part;",
                "  @Shape({\"ranks\", \"n\"}) F32Buffer all;",
                "  @AllReduce @Shape({\"wait\", \"n\u2060\"}) F32Buffer g;",
                "}"),
            source("p.UseIgnorable",
                "final class UseIgnorable {",
                "  private UseIgnorable() {}",
                "  static F32Buffer use(Communicator comm) {",
                "    try (IgnorablePlan plan = IgnorablePlan.builder().waitDim(2).n(3).build(comm)) {",
                "      return plan.all();",
                "    }",
                "  }",
                "}")),
        // A plan too large for one build method, in parts: here with methods of at most 200 bytes (by the
        // generator's estimate), so that a small plan shows the layout of one of 5,000 fields.
        plan("p.ChunkedPlan", new PlanGenerator.Limits(200),
            source("p.Chunked",
                "@CommPlan(dims = {\"n\", \"m\"})",
                "class Chunked {",
                "  @AllReduce(op = ReduceOp.AVG) @Shape({\"4\", \"n\"}) F32Buffer w;",
                "  @AllGather(into = \"all\", step = 1) @Shape(\"m\") F32Buffer part;",
                "  @Shape({\"ranks\", \"m\"}) F32Buffer all;",
                "  @Broadcast(root = 1, step = 2) @Shape(\"n\") I32Buffer params;",
                "}"),
            source("p.UseChunked",
                "final class UseChunked {",
                "  private UseChunked() {}",
                "  static F32Buffer use(Communicator comm, F32Buffer mine) {",
                "    try (ChunkedPlan plan = ChunkedPlan.builder().n(2).m(3).bindW(mine).build(comm)) {",
                "      return plan.all();",
                "    }",
                "  }",
                "}")),
        // A dim no shape uses: still checked at build, without a local (ecj warns of an unused one).
        plan("p.UnusedDimPlan",
            source("p.UnusedDim",
                "@CommPlan(dims = {\"n\", \"unused\"})",
                "class UnusedDim {",
                "  @AllReduce @Shape(\"n\") F32Buffer g;",
                "}")),
        // A 2-D mesh: every collective over an axis, in place and out of place, with ops and roots; axis
        // names as sizes in shapes; a ring and a pipeline of transfers, each over its axis.
        plan("p.Mesh2dPlan",
            source("p.Mesh2d",
                "@CommPlan(dims = \"n\", axes = {\"dp\", \"tp\"})",
                "class Mesh2d {",
                "  @AllReduce(op = ReduceOp.AVG, over = \"dp\") @Shape({\"4\", \"n\"}) F32Buffer grads;",
                "  @AllReduce(over = \"tp\", into = \"arOut\", step = 1) @Shape(\"n\") F32Buffer arIn;",
                "  @Shape(\"n\") F32Buffer arOut;",
                "  @Broadcast(root = 1, over = \"tp\", step = 2) @Shape(\"n\") I32Buffer params;",
                "  @AllGather(over = \"tp\", into = \"full\", step = 3) @Shape(\"n\") BF16Buffer part;",
                "  @Shape({\"tp\", \"n\"}) BF16Buffer full;",
                "  @AllGather(over = \"dp\", step = 3) @Shape({\"dp\", \"n\"}) F32Buffer gathered;",
                "  @ReduceScatter(op = ReduceOp.MAX, over = \"dp\", into = \"shard\", step = 4) @Shape({\"dp\", \"n\"})"
                    + " F16Buffer whole;",
                "  @Shape(\"n\") F16Buffer shard;",
                "  @ReduceScatter(over = \"tp\", step = 4) @Shape(\"tp * n\") F32Buffer scattered;",
                "  @Reduce(op = ReduceOp.MIN, root = 1, over = \"dp\", step = 5) @Shape(\"n\") F64Buffer reduced;",
                "  @Gather(over = \"tp\", into = \"gatherOut\", step = 6) @Shape(\"n\") F32Buffer gatherIn;",
                "  @Shape({\"tp\", \"n\"}) F32Buffer gatherOut;",
                "  @Scatter(root = 1, over = \"dp\", into = \"scatterOut\", step = 7) @Shape({\"dp\", \"n\"}) I64Buffer"
                    + " scatterIn;",
                "  @Shape(\"n\") I64Buffer scatterOut;",
                "  @AllToAll(over = \"tp\", into = \"exchanged\", step = 8) @Shape({\"tp\", \"n\"}) U8Buffer local;",
                "  @Shape(\"n * tp\") U8Buffer exchanged;",
                "  @Send(to = \"(rank + 1) % ranks\", over = \"tp\", step = 9) @Shape(\"n\") F32Buffer ringOut;",
                "  @Recv(from = \"(rank - 1) % ranks\", over = \"tp\", step = 9) @Shape(\"n\") F32Buffer ringIn;",
                "  @Send(to = \"rank + 1\", over = \"dp\", step = 9) @Shape(\"n\") F8E4M3Buffer toNext;",
                "  @Recv(from = \"rank - 1\", over = \"dp\", step = 9) @Shape(\"n\") F8E4M3Buffer fromPrevious;",
                "}"),
            source("p.UseMesh2d",
                "final class UseMesh2d {",
                "  private UseMesh2d() {}",
                "  static F32Buffer use(Mesh mesh, F32Buffer mine) {",
                "    try (Mesh2dPlan plan = Mesh2dPlan.builder().n(4).bindGrads(mine).build(mesh)) {",
                "      plan.execute(mesh.world().stream());",
                "      return plan.full() != null ? plan.ringIn() : plan.gathered();",
                "    }",
                "  }",
                "}")),
        // A 3-D mesh (pipeline × data × tensor parallel): a tensor-parallel layer, the stages' transfers over
        // pp, gradients averaged over dp; an axis (pp) that no shape uses needs no size in build.
        plan("p.Mesh3dPlan",
            source("p.Mesh3d",
                "@CommPlan(dims = {\"batch\", \"h\"}, axes = {\"pp\", \"dp\", \"tp\"})",
                "class Mesh3d {",
                "  @AllGather(over = \"tp\", into = \"full\") @Shape({\"batch\", \"h\"}) F32Buffer part;",
                "  @Shape({\"tp\", \"batch\", \"h\"}) F32Buffer full;",
                "  @ReduceScatter(over = \"tp\", into = \"slice\", step = 1) @Shape({\"tp\", \"batch\", \"h\"})"
                    + " F32Buffer partial;",
                "  @Shape({\"batch\", \"h\"}) F32Buffer slice;",
                "  @Send(to = \"rank + 1\", over = \"pp\", step = 2) @Shape({\"batch\", \"h\"}) F32Buffer act;",
                "  @Recv(from = \"rank - 1\", over = \"pp\", step = 2) @Shape({\"batch\", \"h\"}) F32Buffer actIn;",
                "  @AllReduce(op = ReduceOp.AVG, over = \"dp\", step = 3) @Shape({\"h\", \"h\"}) F32Buffer grads;",
                "  @Broadcast(over = \"pp\", step = 4) @Shape(\"dp * h\") BF16Buffer bias;",
                "}")),
        // Calls over the whole world and over axes in one plan, with fixed ranks: ranks is the world's size.
        plan("p.MixedPlan",
            source("p.Mixed",
                "@CommPlan(dims = \"n\", axes = {\"dp\", \"tp\"}, ranks = 8)",
                "class Mixed {",
                "  @AllReduce(over = \"tp\") @Shape(\"n\") F32Buffer act;",
                "  @AllReduce(op = ReduceOp.AVG, step = 1) @Shape(\"n\") F32Buffer loss;",
                "  @AllGather(into = \"all\", step = 2) @Shape(\"n\") F32Buffer mine;",
                "  @Shape({\"ranks\", \"n\"}) F32Buffer all;",
                "  @AllGather(over = \"dp\", into = \"dpAll\", step = 2) @Shape(\"n\") F32Buffer dpMine;",
                "  @Shape({\"dp\", \"n\"}) F32Buffer dpAll;",
                "  @Broadcast(root = 7, step = 2) @Shape(\"n\") F64Buffer params;",
                "  @Send(to = \"rank + 1\", step = 3) @Shape(\"n\") I32Buffer worldOut;",
                "  @Recv(from = \"rank - 1\", step = 3) @Shape(\"n\") I32Buffer worldIn;",
                "  @Send(to = \"rank + 1\", over = \"tp\", step = 3) @Shape(\"n\") I32Buffer tpOut;",
                "  @Recv(from = \"rank - 1\", over = \"tp\", step = 3) @Shape(\"n\") I32Buffer tpIn;",
                "}")),
        // A plan over a mesh in parts: the axes' sizes follow the dims and the ranks in d.
        plan("p.MeshChunkedPlan", new PlanGenerator.Limits(200),
            source("p.MeshChunked",
                "@CommPlan(dims = \"n\", axes = {\"dp\", \"tp\"})",
                "class MeshChunked {",
                "  @AllReduce(op = ReduceOp.AVG, over = \"dp\") @Shape({\"4\", \"n\"}) F32Buffer w;",
                "  @AllGather(over = \"tp\", into = \"all\", step = 1) @Shape(\"n\") F32Buffer part;",
                "  @Shape({\"tp\", \"n\"}) F32Buffer all;",
                "  @AllGather(into = \"world\", step = 1) @Shape(\"n\") F32Buffer mine;",
                "  @Shape({\"ranks\", \"n\"}) F32Buffer world;",
                "  @Broadcast(root = 1, over = \"tp\", step = 2) @Shape(\"dp\") I32Buffer params;",
                "}"),
            source("p.UseMeshChunked",
                "final class UseMeshChunked {",
                "  private UseMeshChunked() {}",
                "  static F32Buffer use(Mesh mesh) {",
                "    try (MeshChunkedPlan plan = MeshChunkedPlan.builder().n(2).build(mesh)) {",
                "      return plan.all();",
                "    }",
                "  }",
                "}")),
        // Axes named like the generated code's locals (b, plan), like fields and like a dim's clash: each
        // local of build gets its own name.
        plan("p.MeshClashesPlan",
            source("p.MeshClashes",
                "@CommPlan(dims = {\"mesh\", \"n\"}, axes = {\"b\", \"plan\", \"tp\"})",
                "class MeshClashes {",
                "  @AllGather(over = \"b\", into = \"tp\") @Shape(\"mesh\") F32Buffer b;",
                "  @Shape({\"b\", \"mesh\"}) F32Buffer tp;",
                "  @AllReduce(over = \"plan\", step = 1) @Shape({\"plan\", \"n\"}) F32Buffer mesh;",
                "  @AllReduce(over = \"tp\", step = 2) @Shape({\"tp\", \"ranks\"}) F32Buffer ranks;",
                "}"),
            source("p.UseMeshClashes",
                "final class UseMeshClashes {",
                "  private UseMeshClashes() {}",
                "  static F32Buffer use(Mesh m) {",
                "    try (MeshClashesPlan plan = MeshClashesPlan.builder().mesh(2).n(3).build(m)) {",
                "      return plan.b() != null ? plan.tp() : plan.mesh();",
                "    }",
                "  }",
                "}")),
        // A bucketed plan (issue 33): the gradients of two layers in forward order, a loss gathered in step 1
        // into a field no collective sends, and a ring whose received field no bucket waits for (neither has
        // a Field constant). The generated API, used as a backward pass does: ready per field, last layer
        // first, then finish.
        plan("p.BucketedPlan",
            source("p.Bucketed",
                "@CommPlan(dims = \"h\", bucketBytes = 1 << 20)",
                "class Bucketed {",
                "  @AllReduce(op = ReduceOp.AVG) @Shape({\"h\", \"h\"}) F32Buffer w1;",
                "  @AllReduce(op = ReduceOp.AVG) @Shape(\"h\") F32Buffer b1;",
                "  @AllReduce(op = ReduceOp.AVG) @Shape({\"h\", \"h\"}) F32Buffer w2;",
                "  @AllReduce(op = ReduceOp.AVG) @Shape(\"h\") F32Buffer b2;",
                "  @AllGather(into = \"losses\", step = 1) @Shape(\"1\") F32Buffer loss;",
                "  @Shape(\"ranks\") F32Buffer losses;",
                "  @Send(to = \"(rank + 1) % ranks\", step = 2) @Shape(\"h\") BF16Buffer ringOut;",
                "  @Recv(from = \"(rank - 1) % ranks\", step = 2) @Shape(\"h\") BF16Buffer ringIn;",
                "}"),
            source("p.UseBucketed",
                "final class UseBucketed {",
                "  private UseBucketed() {}",
                "  static int use(Communicator comm, Stream compute) {",
                "    try (Stream comms = comm.newStream();",
                "        BucketedPlan plan = BucketedPlan.builder().h(1024).bucketBytes(4 << 20).commStream(comms)",
                "            .build(comm)) {",
                "      for (BucketedPlan.Field f : new BucketedPlan.Field[] {BucketedPlan.Field.b2, BucketedPlan.Field.w2,",
                "          BucketedPlan.Field.b1, BucketedPlan.Field.w1, BucketedPlan.Field.loss,",
                "          BucketedPlan.Field.ringOut}) {",
                "        plan.ready(f, compute);",
                "      }",
                "      plan.finish(compute);",
                "      return plan.buckets() + plan.w1().length() > 0 ? BucketedPlan.Field.values().length : 0;",
                "    }",
                "  }",
                "}")),
        // A bucketed plan over a mesh: buckets per step and axis; Field in declaration order across axes.
        plan("p.MeshBucketedPlan",
            source("p.MeshBucketed",
                "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"}, bucketBytes = 65536)",
                "class MeshBucketed {",
                "  @AllReduce(over = \"tp\") @Shape(\"h\") F32Buffer act;",
                "  @AllReduce(op = ReduceOp.AVG, over = \"dp\", step = 1) @Shape({\"h\", \"h\"}) F32Buffer w;",
                "  @AllReduce(op = ReduceOp.AVG, over = \"dp\", step = 1) @Shape(\"h\") F32Buffer b;",
                "  @AllReduce(op = ReduceOp.AVG, step = 1) @Shape(\"1\") F32Buffer loss;",
                "  @ReduceScatter(over = \"tp\", into = \"shard\", step = 1) @Shape({\"tp\", \"h\"}) BF16Buffer grads;",
                "  @Shape(\"h\") BF16Buffer shard;",
                "}"),
            source("p.UseMeshBucketed",
                "final class UseMeshBucketed {",
                "  private UseMeshBucketed() {}",
                "  static int use(Mesh mesh) {",
                "    try (MeshBucketedPlan plan = MeshBucketedPlan.builder().h(8).commStream(mesh.world().stream())",
                "        .build(mesh)) {",
                "      plan.ready(MeshBucketedPlan.Field.grads, mesh.world().stream());",
                "      return plan.buckets();",
                "    }",
                "  }",
                "}")),
        // A bucketed plan in parts (methods of at most 200 bytes, as ChunkedPlan): each part also stores the
        // handles of the Field constants' buffers.
        plan("p.ChunkedBucketedPlan", new PlanGenerator.Limits(200),
            source("p.ChunkedBucketed",
                "@CommPlan(dims = {\"n\", \"m\"}, bucketBytes = 4096)",
                "class ChunkedBucketed {",
                "  @AllReduce(op = ReduceOp.AVG) @Shape({\"4\", \"n\"}) F32Buffer w;",
                "  @AllGather(into = \"all\", step = 1) @Shape(\"m\") F32Buffer part;",
                "  @Shape({\"ranks\", \"m\"}) F32Buffer all;",
                "  @Broadcast(root = 1, step = 2) @Shape(\"n\") I32Buffer params;",
                "  @AllReduce(op = ReduceOp.AVG) @Shape(\"n\") F32Buffer b;",
                "}"),
            source("p.UseChunkedBucketed",
                "final class UseChunkedBucketed {",
                "  private UseChunkedBucketed() {}",
                "  static int use(Communicator comm) {",
                "    try (ChunkedBucketedPlan plan = ChunkedBucketedPlan.builder().n(2).m(3).build(comm)) {",
                "      plan.ready(ChunkedBucketedPlan.Field.params, comm.stream());",
                "      return plan.buckets();",
                "    }",
                "  }",
                "}")),
        // A bucketed plan whose fields and dims are named like its own members (ready, finish, buckets, the
        // enum Field, the builder's commStream and bucketBytes, the generated code's names), like
        // java.lang's types, and like the compilers' hidden members of an enum: Field's constants keep the
        // fields' names; accessors, setters and locals move aside.
        plan("p.BucketClashesPlan",
            source("p.BucketClashes",
                "@CommPlan(dims = {\"commStream\", \"bucketBytes\", \"bytes\", \"IllegalArgumentException\"},",
                "    bucketBytes = 4096)",
                "class BucketClashes {",
                "  @AllReduce @Shape(\"commStream\") F32Buffer ready;",
                "  @AllReduce @Shape(\"bucketBytes\") F32Buffer finish;",
                "  @AllReduce @Shape(\"bytes\") F32Buffer buckets;",
                "  @AllReduce @Shape(\"IllegalArgumentException\") F32Buffer Field;",
                "  @AllReduce @Shape(\"1\") F32Buffer field;",
                "  @AllReduce @Shape(\"2\") F32Buffer fieldHandles;",
                "  @AllReduce @Shape(\"3\") F32Buffer producer;",
                "  @AllReduce @Shape(\"4\") F32Buffer values;",
                "  @AllReduce @Shape(\"5\") F32Buffer valueOf;",
                "  @AllReduce @Shape(\"6\") F32Buffer String;",
                "  @AllReduce @Shape(\"7\") F32Buffer $VALUES;",
                "  @AllReduce @Shape(\"8\") F32Buffer ENUM$VALUES;",
                "  @AllReduce @Shape(\"9\") F32Buffer stream;",
                "}"),
            source("p.UseBucketClashes",
                "final class UseBucketClashes {",
                "  private UseBucketClashes() {}",
                "  static F32Buffer use(Communicator comm) {",
                "    try (BucketClashesPlan plan = BucketClashesPlan.builder().commStreamDim(1).bucketBytesDim(2).bytes(3)",
                "        .IllegalArgumentException(4).bucketBytes(8).commStream(comm.stream()).build(comm)) {",
                "      plan.ready(BucketClashesPlan.Field.ready, comm.stream());",
                "      plan.ready(BucketClashesPlan.Field.Field, comm.stream());",
                "      plan.ready(BucketClashesPlan.Field.$VALUES, comm.stream());",
                "      plan.ready(BucketClashesPlan.Field.valueOf(\"ENUM$VALUES\"), comm.stream());",
                "      plan.finish(comm.stream());",
                "      return plan.buckets() > 0 ? plan.readyBuffer() : plan.finishBuffer() != null ? plan.bucketsBuffer()",
                "          : plan.Field();",
                "    }",
                "  }",
                "}")),
        // The unnamed package, and a plan with no buffers at all.
        plan("TopPlan",
            source("Top",
                "@CommPlan",
                "class Top {",
                "  @AllReduce @Shape(\"1\") U64Buffer count;",
                "}")),
        plan("p.EmptyPlan", source("p.Empty", "@CommPlan", "class Empty {}")));
  }

  private static Arguments plan(String generated, JavaFileObject... sources) {
    return plan(generated, PlanGenerator.Limits.DEFAULT, sources);
  }

  private static Arguments plan(String generated, PlanGenerator.Limits limits, JavaFileObject... sources) {
    return Arguments.of(generated, limits, sources);
  }

  /** Every plan under every compiler (only javac rewrites the golden files). */
  static Stream<Arguments> cases() {
    return Arrays.stream(Toolchain.values())
        .filter(t -> !UPDATE || t == Toolchain.JAVAC)
        .flatMap(t -> plans().map(p -> Arguments.of(t, p.get()[0], p.get()[1], p.get()[2])));
  }

  @ParameterizedTest(name = "{0} {1}")
  @MethodSource("cases")
  void generatesTheGoldenSource(Toolchain compiler, String generated, PlanGenerator.Limits limits,
      JavaFileObject[] sources) throws IOException {
    Compilation c = compiler.compile(new CommPlanProcessor(limits), sources);
    assertThat(c).succeededWithoutWarnings();

    String simpleName = generated.substring(generated.lastIndexOf('.') + 1);
    String golden = "golden/" + simpleName + ".java";
    Optional<JavaFileObject> file = c.generatedFile(
        StandardLocation.SOURCE_OUTPUT, generated.replace('.', '/') + ".java");
    assertWithMessage("generated %s", generated).that(file.isPresent()).isTrue();
    String actual = file.get().getCharContent(false).toString();

    if (UPDATE) {
      Path path = Path.of("src/test/resources", golden);
      Files.createDirectories(path.getParent());
      Files.writeString(path, actual, StandardCharsets.UTF_8);
      return;
    }
    assertThat(c).generatedSourceFile(generated).hasSourceEquivalentTo(JavaFileObjects.forResource(golden));
    assertWithMessage("%s, byte for byte (COMMPLAN_GOLDEN_UPDATE=1 rewrites it)", golden)
        .that(actual)
        .isEqualTo(resource(golden));
  }

  private static String resource(String name) throws IOException {
    try (InputStream in = GoldenTest.class.getClassLoader().getResourceAsStream(name)) {
      if (in == null) {
        throw new AssertionError("no golden file " + name + "; run with COMMPLAN_GOLDEN_UPDATE=1 to write it");
      }
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }
}
