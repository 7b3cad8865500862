package dev.commplan.processor;

import static com.google.common.truth.Truth.assertThat;
import static com.google.testing.compile.CompilationSubject.assertThat;
import static dev.commplan.processor.Plans.compile;
import static dev.commplan.processor.Plans.source;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.Compiler;
import dev.commplan.processor.generator.PlanGenerator;
import java.io.IOException;
import java.io.InputStream;
import java.io.Writer;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.ProcessingEnvironment;
import javax.annotation.processing.RoundEnvironment;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;
import javax.tools.JavaFileObject;
import org.junit.jupiter.api.Test;

/** How the processor behaves as a whole: isolation of failures, rounds, registration, reproducibility. */
class ProcessorTest {

  @Test
  void aPlanWithMoreFieldsThanAConstructorHasParameterSlotsCompiles() {
    // 300 out-of-place all-reduces: 600 buffers, past the JVM's 255 parameter slots per method.
    List<String> body = new ArrayList<>();
    body.add("@CommPlan class Wide {");
    for (int i = 0; i < 300; i++) {
      body.add("  @AllReduce(into = \"out" + i + "\") @Shape(\"256\") F32Buffer in" + i + ";");
      body.add("  @Shape(\"256\") F32Buffer out" + i + ";");
    }
    body.add("}");
    Compilation c = Plans.compile(source("p.Wide", body.toArray(String[]::new)));
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p.WidePlan").contentsAsUtf8String().contains("F32Buffer out299()");
  }

  @Test
  void aPlanOfThousandsOfDimsCompiles() {
    // Each dim is a check in build: 3,000 of them passed 64 KB in one method.
    List<String> dims = new ArrayList<>();
    for (int i = 0; i < 3000; i++) {
      dims.add("\"d" + i + "\"");
    }
    Compilation c = compile(source("p.Dims",
        "@CommPlan(dims = {" + String.join(", ", dims) + "})",
        "class Dims {",
        "  @AllReduce @Shape({\"d0\", \"d2999\"}) F32Buffer g;",
        "}"));
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p.DimsPlan").contentsAsUtf8String().contains("Builder d2999(long d2999)");
  }

  @Test
  void partsAreNamedApartFromThePlan() {
    // A plan in parts, named like its first part would be.
    JavaFileObject plan = source("p.Grads",
        "@CommPlan(name = \"Part0\", dims = \"n\")",
        "class Grads {",
        "  @AllReduce @Shape(\"n\") F32Buffer a;",
        "  @AllReduce @Shape(\"n\") F32Buffer b;",
        "  @AllReduce @Shape({\"n\", \"ranks\"}) F32Buffer c;",
        "}");
    for (Plans.Toolchain compiler : Plans.Toolchain.values()) {
      Compilation c = compiler.compile(new CommPlanProcessor(new PlanGenerator.Limits(150)), plan);
      assertThat(c).succeededWithoutWarnings();
      assertThat(c).generatedSourceFile("p.Part0").contentsAsUtf8String().contains("private static final class Part_1 {");
    }
  }

  @Test
  void dimsNamedLikeThePartsDoNotObscureThem() {
    // build() calls Part0.declare(...): a builder field Part0 (a dim's) would make that a long's member.
    JavaFileObject plan = source("p.Grads",
        "@CommPlan(dims = {\"Part0\", \"Part1\", \"Part2\"})",
        "class Grads {",
        "  @AllReduce @Shape(\"Part0\") F32Buffer a;",
        "  @AllReduce @Shape(\"Part1\") F32Buffer b;",
        "  @AllReduce @Shape({\"Part2\", \"ranks\"}) F32Buffer c;",
        "}");
    for (Plans.Toolchain compiler : Plans.Toolchain.values()) {
      Compilation c = compiler.compile(new CommPlanProcessor(new PlanGenerator.Limits(150)), plan);
      assertThat(c).succeededWithoutWarnings();
      assertThat(c).generatedSourceFile("p.GradsPlan").contentsAsUtf8String().contains("Part2.declare(this");
    }
  }

  @Test
  void anInternalErrorInOnePlanDoesNotStopTheOthers() {
    CommPlanProcessor processor = new CommPlanProcessor(name -> {
      if (name.equals("p.Boom")) {
        throw new IllegalStateException("injected failure");
      }
    });
    JavaFileObject boom = source("p.Boom", "@CommPlan class Boom {", "  @AllReduce @Shape(\"1\") F32Buffer g;", "}");
    JavaFileObject good = source("p.Good", "@CommPlan class Good {", "  @AllReduce @Shape(\"1\") F32Buffer g;", "}");
    // Compiles only if GoodPlan was generated.
    JavaFileObject user = source("p.User",
        "final class User {",
        "  private User() {}",
        "  static GoodPlan.Builder builder() { return GoodPlan.builder(); }",
        "}");
    Compilation c = compile(processor, boom, good, user);
    assertThat(c).hadErrorCount(1);
    assertThat(c)
        .hadErrorContaining("[CommPlan/InternalError] the CommPlan processor failed on 'p.Boom':"
            + " java.lang.IllegalStateException: injected failure (at ")
        .inFile(boom)
        .onLineContaining("class Boom");
    assertThat(c).hadErrorContaining("This is a bug in CommPlan; please report it");
  }

  @Test
  void aPlanWaitsForAnAttributeThatAnotherProcessorGenerates() {
    JavaFileObject plan = source("p.Sized",
        "@CommPlan",
        "class Sized {",
        "  @AllReduce @Shape(Sizes.SIZE) F32Buffer g;",
        "}");
    Compilation c = Compiler.javac()
        .withProcessors(new CommPlanProcessor(), new Generating("Sizes", "public static final String SIZE = \"8\";"))
        .withOptions(Plans.OPTIONS)
        .compile(plan);
    assertThat(c).succeededWithoutWarnings();
    assertThat(c).generatedSourceFile("p.SizedPlan").contentsAsUtf8String().contains("8L");
  }

  @Test
  void aPlanWaitsForAFieldTypeThatAnotherProcessorGenerates() {
    JavaFileObject plan = source("p.Typed",
        "@CommPlan",
        "class Typed {",
        "  @AllReduce @Shape(\"8\") Later g;",
        "}");
    Compilation c = Compiler.javac()
        .withProcessors(new CommPlanProcessor(), new Generating("Later", ""))
        .withOptions(Plans.OPTIONS)
        .compile(plan);
    // Validated once, in the round where the type is known: the message names the resolved type.
    assertThat(c).hadErrorCount(1);
    assertThat(c).hadErrorContaining("[CommPlan/NotABuffer] 'g' carries @AllReduce but has type p.Later,")
        .inFile(plan).onLineContaining("Later g");
  }

  @Test
  void aTypeThatNeverResolvesIsReportedInTheLastRound() {
    JavaFileObject plan = source("p.Missing",
        "@CommPlan",
        "class Missing {",
        "  @AllReduce @Shape(\"8\") Nope g;",
        "}");
    Compilation c = compile(plan);
    assertThat(c).hadErrorCount(2);
    assertThat(c).hadErrorContaining("cannot find symbol").inFile(plan).onLineContaining("Nope g");
    assertThat(c)
        .hadErrorContaining("[CommPlan/Unresolved] could not process @CommPlan class 'p.Missing' because the type Nope"
            + " of field 'g' could not be resolved.")
        .inFile(plan)
        .onLineContaining("@CommPlan");
  }

  @Test
  void twoPlansForOneGeneratedName() {
    JavaFileObject a = source("p.A", "@CommPlan(name = \"Same\") class A {}");
    JavaFileObject b = source("p.B", "@CommPlan(name = \"Same\") class B {}");
    Compilation c = compile(a, b);
    assertThat(c).failed();
    assertThat(c).hadErrorContaining("[CommPlan/WriteFailed] could not write the generated class p.Same for 'p.B'")
        .inFile(b).onLineContaining("class B");
  }

  @Test
  void diagnosticsComeInSourceOrderBehindAWrappedProcessingEnvironment() {
    // Gradle's incremental processing (and this test) hand the processor a wrapped environment, where
    // javac's Trees is not at hand: the order then comes from the model (SourceOrder's fallback).
    JavaFileObject f = source("p.Grads",
        "class Loose {",
        "  @AllReduce @Shape(\"1\") F32Buffer loose;",
        "}",
        "@CommPlan(dims = \"n\")",
        "class Grads {",
        "  @AllReduce(into = \"nope\") @Shape(\"n\") F32Buffer a;",
        "  @AllReduce @Shape(\"m\") F32Buffer b;",
        "  @AllReduce @Shape(\"1\") private F32Buffer c;",
        "}");
    Compilation c = Compiler.javac().withProcessors(new Wrapped(new CommPlanProcessor())).withOptions(Plans.OPTIONS)
        .compile(f);
    List<Long> lines = new ArrayList<>();
    List<String> ids = new ArrayList<>();
    for (javax.tools.Diagnostic<? extends JavaFileObject> d : c.errors()) {
      lines.add(d.getLineNumber());
      String m = d.getMessage(java.util.Locale.ROOT);
      ids.add(m.substring(0, m.indexOf(']') + 1));
    }
    assertThat(ids).containsExactly("[CommPlan/NotInPlan]", "[CommPlan/NotInPlan]", "[CommPlan/UnknownInto]",
        "[CommPlan/UnknownDim]", "[CommPlan/PrivateField]").inOrder();
    assertThat(lines).isInOrder();
  }

  @Test
  void generatedSourcesAreReproducible() throws IOException {
    JavaFileObject plan = source("p.Grads",
        "@CommPlan(dims = \"n\")",
        "class Grads { @AllReduce @Shape(\"n\") F32Buffer g; }");
    String first = compile(plan).generatedSourceFiles().getFirst().getCharContent(false).toString();
    String second = compile(plan).generatedSourceFiles().getFirst().getCharContent(false).toString();
    assertThat(second).isEqualTo(first);
    assertThat(first).contains("@Generated(\"dev.commplan.processor.CommPlanProcessor\")\npublic final class GradsPlan");
    assertThat(first).doesNotContain("date");
  }

  @Test
  void supportsTheTwelveAnnotationsAndTheLatestSourceVersion() {
    CommPlanProcessor p = new CommPlanProcessor();
    // Written out, not derived from Collective: a collective added to the model shows up here.
    assertThat(p.getSupportedAnnotationTypes()).containsExactly(
        "dev.commplan.annotations.CommPlan",
        "dev.commplan.annotations.AllReduce",
        "dev.commplan.annotations.Broadcast",
        "dev.commplan.annotations.AllGather",
        "dev.commplan.annotations.ReduceScatter",
        "dev.commplan.annotations.Reduce",
        "dev.commplan.annotations.Gather",
        "dev.commplan.annotations.Scatter",
        "dev.commplan.annotations.AllToAll",
        "dev.commplan.annotations.Send",
        "dev.commplan.annotations.Recv",
        "dev.commplan.annotations.Shape");
    assertThat(p.getSupportedSourceVersion()).isEqualTo(SourceVersion.latestSupported());
  }

  @Test
  void isRegisteredForJavacAndAsAnIsolatingGradleProcessor() throws IOException {
    assertThat(resources("META-INF/services/javax.annotation.processing.Processor"))
        .contains("dev.commplan.processor.CommPlanProcessor");
    assertThat(resources("META-INF/gradle/incremental.annotation.processors"))
        .contains("dev.commplan.processor.CommPlanProcessor,isolating");
  }

  private static String resources(String name) throws IOException {
    StringBuilder all = new StringBuilder();
    for (URL url : Collections.list(ProcessorTest.class.getClassLoader().getResources(name))) {
      try (InputStream in = url.openStream()) {
        all.append(new String(in.readAllBytes(), StandardCharsets.UTF_8));
      }
    }
    return all.toString();
  }

  /** A processor run behind a wrapped {@link ProcessingEnvironment}, as Gradle's incremental processing does. */
  private static final class Wrapped extends AbstractProcessor {
    private final AbstractProcessor delegate;

    Wrapped(AbstractProcessor delegate) {
      this.delegate = delegate;
    }

    @Override
    public synchronized void init(ProcessingEnvironment env) {
      super.init(env);
      delegate.init((ProcessingEnvironment) Proxy.newProxyInstance(ProcessingEnvironment.class.getClassLoader(),
          new Class<?>[] {ProcessingEnvironment.class}, (proxy, method, args) -> {
            try {
              return method.invoke(env, args);
            } catch (InvocationTargetException e) {
              throw e.getCause();
            }
          }));
    }

    @Override
    public Set<String> getSupportedAnnotationTypes() {
      return delegate.getSupportedAnnotationTypes();
    }

    @Override
    public SourceVersion getSupportedSourceVersion() {
      return delegate.getSupportedSourceVersion();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
      return delegate.process(annotations, round);
    }
  }

  /** Generates {@code p.<name>} with {@code body} in the first round, as another processor would. */
  private static final class Generating extends AbstractProcessor {
    private final String name;
    private final String body;
    private final List<String> done = new ArrayList<>();

    Generating(String name, String body) {
      this.name = name;
      this.body = body;
    }

    @Override
    public Set<String> getSupportedAnnotationTypes() {
      return Set.of("*");
    }

    @Override
    public SourceVersion getSupportedSourceVersion() {
      return SourceVersion.latestSupported();
    }

    @Override
    public boolean process(Set<? extends TypeElement> annotations, RoundEnvironment round) {
      if (done.isEmpty()) {
        done.add(name);
        try (Writer w = processingEnv.getFiler().createSourceFile("p." + name).openWriter()) {
          w.write("package p;\npublic final class " + name + " {\n  private " + name + "() {}\n  " + body + "\n}\n");
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
      return false;
    }
  }
}
