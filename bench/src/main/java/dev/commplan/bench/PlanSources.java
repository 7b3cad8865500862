package dev.commplan.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.LongStream;

/**
 * Writes the benchmark's large {@code @CommPlan} classes (package {@code dev.commplan.bench.plans}): a
 * plan's buffer count is fixed at compile time, and nobody should type 200 fields by hand. The build runs
 * it at generate-sources (exec-maven-plugin in bench/pom.xml) into {@code
 * target/generated-sources/plans}, which the compiler reads with the other sources, so the processor
 * generates their plans as for any source; nothing generated is committed. By hand, from the project
 * root (the source launcher compiles {@link Gpt2} from the same folder):
 *
 * <pre>
 *   java bench/src/main/java/dev/commplan/bench/PlanSources.java bench/target/generated-sources/plans
 * </pre>
 *
 * A file whose text is already what it would write is left alone, so that an unchanged generator leaves
 * the compiler nothing to recompile.
 */
public final class PlanSources {
  static final String PACKAGE = "dev.commplan.bench.plans";
  /** K of the many-buffers cases that have generated plans: nccl-tests' and our reference point, 200 x 256 floats. */
  static final int K = 200;

  private PlanSources() {}

  public static void main(String[] args) throws IOException {
    if (args.length != 1) {
      System.err.println("usage: java bench/src/main/java/dev/commplan/bench/PlanSources.java <source root>");
      System.exit(2);
    }
    Path root = Path.of(args[0]);
    for (Map.Entry<String, String> e : sources().entrySet()) {
      Path file = root.resolve(PACKAGE.replace('.', '/')).resolve(e.getKey() + ".java");
      if (!Files.isRegularFile(file) || !Files.readString(file, StandardCharsets.UTF_8).equals(e.getValue())) {
        Files.createDirectories(file.getParent());
        Files.writeString(file, e.getValue(), StandardCharsets.UTF_8);
      }
    }
  }

  /** Class simple name to source text. */
  static Map<String, String> sources() {
    Map<String, String> out = new LinkedHashMap<>();
    out.put("Many200", many());
    out.put("Many200Out", manyOut());
    out.put("Gpt2Grads", gpt2());
    return out;
  }

  private static String header(String doc, String imports) {
    return "// Written by dev.commplan.bench.PlanSources (bench/src/main/java/dev/commplan/bench/PlanSources.java)\n"
        + "// when the bench is built: do not edit; change the generator.\n"
        + "package " + PACKAGE + ";\n\n"
        + imports
        + "import dev.commplan.annotations.CommPlan;\n"
        + "import dev.commplan.annotations.Shape;\n"
        + "import dev.commplan.runtime.F32Buffer;\n\n"
        + "/**\n * " + doc + "\n */\n";
  }

  /** In place: {@code K} buffer fields. */
  private static String many() {
    StringBuilder b = new StringBuilder(header(
        K + " float buffers of {@code n} elements each, all-reduced (sum) in place, all in step 0: the\n"
            + " * many-buffers case of the benchmark. The processor generates {@code Many200Plan}.",
        "import dev.commplan.annotations.AllReduce;\n"));
    b.append("@CommPlan(dims = {\"n\"})\n");
    b.append("public final class Many200 {\n");
    for (int k = 0; k < K; k++) {
      b.append(String.format("%n  @AllReduce%n  @Shape(\"n\")%n  F32Buffer g%03d;%n", k));
    }
    return b.append("}\n").toString();
  }

  /**
   * Out of place: {@code 2 K} buffer fields, {@code inI} all-reduced into {@code outI} (past the 255
   * constructor parameters that the processor's generated constructor once took, one per field).
   */
  private static String manyOut() {
    StringBuilder b = new StringBuilder(header(
        K + " float buffers of {@code n} elements each, all-reduced (sum) out of place ({@code inI} into\n"
            + " * {@code outI}), all in step 0: the out-of-place many-buffers case of the benchmark, " + 2 * K
            + " buffer fields.\n * The processor generates {@code Many200OutPlan}.",
        "import dev.commplan.annotations.AllReduce;\n"));
    b.append("@CommPlan(dims = {\"n\"})\n");
    b.append("public final class Many200Out {\n");
    for (int k = 0; k < K; k++) {
      b.append(String.format("%n  @AllReduce(into = \"out%03d\")%n  @Shape(\"n\")%n  F32Buffer in%03d;%n", k, k));
      b.append(String.format("%n  @Shape(\"n\")%n  F32Buffer out%03d;%n", k));
    }
    return b.append("}\n").toString();
  }

  private static String gpt2() {
    StringBuilder b = new StringBuilder(header(
        "GPT-2 small's gradients (" + Gpt2.TENSORS.size() + " tensors, " + Gpt2.PARAMETERS
            + " parameters), all-reduced (sum) in place in step 0,\n * as a data-parallel step does. Fields are "
            + "the parameter names with {@code .} replaced by {@code _}. The processor\n * generates {@code Gpt2GradsPlan}.",
        "import dev.commplan.annotations.AllReduce;\n"));
    b.append("@CommPlan\npublic final class Gpt2Grads {\n");
    for (Gpt2.Tensor t : Gpt2.TENSORS) {
      String shape = LongStream.of(t.shape()).mapToObj(d -> "\"" + d + "\"").collect(Collectors.joining(", "));
      b.append("\n  @AllReduce\n  @Shape(").append(t.shape().length == 1 ? shape : "{" + shape + "}").append(")\n");
      b.append("  F32Buffer ").append(fieldName(t.name())).append(";\n");
    }
    return b.append("}\n").toString();
  }

  /** {@code h.0.attn.c_attn.weight} becomes {@code h0_attn_c_attn_weight}. */
  static String fieldName(String parameter) {
    return parameter.replaceFirst("^h\\.(\\d+)\\.", "h$1_").replace('.', '_');
  }
}
