package dev.commplan.processor;

import static com.google.common.truth.Truth.assertWithMessage;
import static com.google.testing.compile.CompilationSubject.assertThat;

import com.google.testing.compile.Compilation;
import dev.commplan.processor.Plans.Toolchain;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import javax.tools.JavaFileObject;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * docs/dsl.md promises that generated names never clash, whatever the fields and dims are called. The
 * generated class may itself be named like a type its code uses ({@code name = "DataType"}); its code then
 * names that type in full ({@code dev.commplan.runtime.DataType.F32}), and a field, parameter or local
 * named like the first part of that name ({@code dev}) or like a type it uses in an expression would
 * obscure it. The matrix: a plan named like each type the generated code refers to (read from a generated
 * file's imports, so a type added later is covered), whose fields and dims are named like every package
 * root and every such type; it must compile without warnings under javac and ecj.
 */
class GeneratedNamesTest {
  /** java.lang types generated code uses without importing them. */
  private static final List<String> JAVA_LANG = List.of("String", "Boolean", "Override", "AutoCloseable", "Math");

  /** A plan that uses every part of the generated code: dims, ranks, counts of several factors, every op and kind. */
  private static final String[] RICH = {
    "@CommPlan(dims = {\"n\", \"m\"}, ranks = 0)",
    "class Rich {",
    "  @AllReduce(op = ReduceOp.AVG) @Shape({\"4\", \"n\"}) F32Buffer a;",
    "  @Broadcast(root = 1, into = \"c\") @Shape(\"n\") F32Buffer b;",
    "  @Shape(\"n\") F32Buffer c;",
    "  @AllGather(into = \"e\", step = 1) @Shape(\"n * m\") F64Buffer d;",
    "  @Shape({\"ranks\", \"n\", \"m\"}) F64Buffer e;",
    "  @ReduceScatter(op = ReduceOp.MAX, step = 2) @Shape(\"ranks\") I32Buffer f;",
    "}",
  };

  /**
   * The simple names of the types the generated code refers to, and the roots of their packages: of {@link
   * #RICH}, and of it with {@code bucketBytes} (whose class has more: Stream, IllegalArgumentException).
   */
  private static Set<String> typesAndPackageRoots(Set<String> roots) throws IOException {
    Set<String> types = new TreeSet<>(JAVA_LANG);
    String[] bucketed = RICH.clone();
    bucketed[0] = RICH[0].replace(")", ", bucketBytes = 4096)");
    for (String[] plan : List.of(RICH, bucketed)) {
      addTypesAndPackageRoots(plan, types, roots);
    }
    return types;
  }

  private static void addTypesAndPackageRoots(String[] plan, Set<String> types, Set<String> roots) throws IOException {
    Compilation c = Toolchain.JAVAC.compile(Plans.source("p.Rich", plan));
    assertThat(c).succeededWithoutWarnings();
    String generated = c.generatedSourceFile("p.RichPlan").orElseThrow().getCharContent(false).toString();
    Matcher m = Pattern.compile("(?m)^import ((\\w+)(?:\\.\\w+)*)\\.(\\w+);$").matcher(generated);
    while (m.find()) {
      roots.add(m.group(2));
      types.add(m.group(3));
    }
    // Types named in full anywhere (in Javadoc, say).
    Matcher full = Pattern.compile("\\b([a-z]\\w*)(?:\\.[a-z]\\w*)*\\.([A-Z]\\w*)").matcher(generated);
    while (full.find()) {
      roots.add(full.group(1));
      types.add(full.group(2));
    }
  }

  static Stream<Arguments> planNamedLikeAType() throws IOException {
    Set<String> roots = new TreeSet<>();
    Set<String> types = typesAndPackageRoots(roots);
    assertWithMessage("package roots").that(roots).containsAtLeast("dev", "java", "javax");
    assertWithMessage("types").that(types).containsAtLeast("DataType", "Objects", "PlanBuilder", "ReduceOp", "Generated",
        "Stream", "IllegalArgumentException");
    List<Arguments> cases = new ArrayList<>();
    for (Toolchain compiler : Toolchain.values()) {
      for (boolean bucketed : new boolean[] {false, true}) {
        for (String type : types) {
          cases.add(Arguments.of(compiler, type, bucketed, List.copyOf(roots), List.copyOf(types)));
        }
      }
    }
    return cases.stream();
  }

  /**
   * Also bucketed ({@code bucketBytes}), where every field below is sent and so also a constant of the enum
   * Field, named like the type.
   */
  @ParameterizedTest(name = "{0} name = \"{1}\", bucketed {2}")
  @MethodSource("planNamedLikeAType")
  void aPlanNamedLikeATypeItUsesCompiles(Toolchain compiler, String name, boolean bucketed, List<String> roots,
      List<String> types) {
    List<String> names = new ArrayList<>(roots);
    names.addAll(types);
    names.remove(name); // a dim or field named like the plan itself is another test (below)
    List<String> lines = new ArrayList<>();
    lines.add("package p;");
    lines.add("import dev.commplan.annotations.*;");
    // Single-type imports: the generated p.<name> would shadow an on-demand import of a type of that name.
    for (String buffer : List.of("F32Buffer", "F64Buffer", "I32Buffer")) {
      lines.add("import dev.commplan.runtime." + buffer + ";");
    }
    lines.add("@CommPlan(name = \"" + name + "\", dims = {" + String.join(", ", names.stream().map(n -> "\"" + n + "\"").toList())
        + "}" + (bucketed ? ", bucketBytes = 4096" : "") + ")");
    lines.add("class Named {");
    for (String n : names) {
      // Each in code that names types in expressions: DataType.F32, ReduceOp.SUM, PlanBuilder.count (two
      // factors), Objects.requireNonNull (bind). (No op = ReduceOp.X here: the fields named dev and ReduceOp
      // would obscure it in this very class, as they would in a user's.)
      lines.add("  @AllReduce @Shape({\"2\", \"" + n + "\"}) F32Buffer " + n + ";");
    }
    lines.add("  @Broadcast(root = 1, into = \"out\") @Shape(\"ranks\") F64Buffer in;");
    lines.add("  @Shape(\"ranks\") F64Buffer out;");
    lines.add("  @AllGather(into = \"all\", step = 1) @Shape(\"1\") I32Buffer part;");
    lines.add("  @Shape(\"ranks\") I32Buffer all;");
    lines.add("}");
    JavaFileObject source = Plans.file("p.Named", lines);
    Compilation c = compiler.compile(source);
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p." + name).contentsAsUtf8String().contains("public final class " + name);
  }

  @ParameterizedTest(name = "{0} field and dim named like the plan")
  @MethodSource("compilers")
  void fieldsAndDimsNamedLikeThePlanAndItsBuilder(Toolchain compiler) {
    // A method named like its class is legal, but ecj warns: "This method has a constructor name".
    JavaFileObject source = Plans.source("p.Grads",
        "@CommPlan(dims = {\"GradsPlan\", \"Builder\"})",
        "class Grads {",
        "  @AllReduce @Shape({\"GradsPlan\", \"Builder\"}) F32Buffer GradsPlan;",
        "  @AllReduce @Shape(\"2\") F32Buffer Builder;",
        "}");
    Compilation c = compiler.compile(source);
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p.GradsPlan").contentsAsUtf8String().contains("public F32Buffer GradsPlanBuffer()");
    assertThat(c).generatedSourceFile("p.GradsPlan").contentsAsUtf8String().contains("public Builder BuilderDim(long");
  }

  /**
   * A plan over a mesh whose axes and fields are named like every package root and type its generated code
   * uses (read from a generated mesh plan's imports: Mesh, Collective, ...): the locals holding the axes'
   * sizes in {@code build(Mesh)} must not obscure them either. Also with the plan itself named {@code Mesh},
   * which its {@code build(Mesh)} then names in full.
   */
  @ParameterizedTest(name = "{0} name = \"{1}\"")
  @MethodSource("meshCases")
  void aMeshPlanWithAxesNamedLikeTheTypesItUsesCompiles(Toolchain compiler, String name) throws IOException {
    Compilation first = Toolchain.JAVAC.compile(Plans.source("p.Rich",
        "@CommPlan(dims = \"n\", axes = {\"dp\", \"tp\"})",
        "class Rich {",
        "  @AllReduce(op = ReduceOp.AVG, over = \"dp\") @Shape({\"4\", \"n\", \"tp\"}) F32Buffer a;",
        "  @Broadcast(root = 1, over = \"tp\", step = 1) @Shape(\"ranks\") F32Buffer b;",
        "}"));
    assertThat(first).succeededWithoutWarnings();
    String generated = first.generatedSourceFile("p.RichPlan").orElseThrow().getCharContent(false).toString();
    Set<String> names = new TreeSet<>(JAVA_LANG);
    Matcher m = Pattern.compile("(?m)^import ((\\w+)(?:\\.\\w+)*)\\.(\\w+);$").matcher(generated);
    while (m.find()) {
      names.add(m.group(2));
      names.add(m.group(3));
    }
    assertWithMessage("names").that(names).containsAtLeast("Mesh", "Collective", "PlanBuilder", "dev");
    names.remove(name);
    List<String> lines = new ArrayList<>();
    lines.add("package p;");
    lines.add("import dev.commplan.annotations.*;");
    lines.add("import dev.commplan.runtime.F32Buffer;");
    lines.add("@CommPlan(name = \"" + name + "\", dims = \"mesh\", axes = {"
        + String.join(", ", names.stream().map(n -> "\"" + n + "\"").toList()) + "})");
    lines.add("class Named {");
    int step = 0;
    for (String n : names) {
      lines.add("  @AllReduce(over = \"" + n + "\", step = " + step++ + ") @Shape({\"2\", \"" + n + "\", \"mesh\"}) F32Buffer "
          + n + ";");
    }
    lines.add("  @Gather(over = \"Collective\", root = 1, into = \"all\") @Shape(\"mesh\") F32Buffer mesh;");
    lines.add("  @Shape({\"Collective\", \"mesh\"}) F32Buffer all;");
    lines.add("}");
    Compilation c = compiler.compile(Plans.file("p.Named", lines));
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p." + name).contentsAsUtf8String().contains(" build(");
  }

  static Stream<Arguments> meshCases() {
    return Stream.of(Toolchain.values()).flatMap(t -> Stream.of(Arguments.of(t, "NamedPlan"), Arguments.of(t, "Mesh")));
  }

  static Stream<Toolchain> compilers() {
    return Stream.of(Toolchain.values());
  }
}
