package dev.commplan.processor;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.Compiler;
import com.google.testing.compile.JavaFileObjects;
import java.util.ArrayList;
import java.util.List;
import javax.tools.JavaFileObject;

/** Test sources and the compiler the processor's tests run. */
final class Plans {
  private Plans() {}

  /**
   * The options every test compiles with: all lint warnings, less "processing", which warns that no
   * processor claimed the annotations ({@code process} returns false by design, so that other processors
   * see them too).
   */
  static final List<String> OPTIONS = List.of("-Xlint:all", "-Xlint:-processing");

  /** A source file {@code qualifiedName} in its package, importing the DSL and the runtime on demand. */
  static JavaFileObject source(String qualifiedName, String... body) {
    List<String> lines = new ArrayList<>();
    int dot = qualifiedName.lastIndexOf('.');
    if (dot > 0) {
      lines.add("package " + qualifiedName.substring(0, dot) + ";");
    }
    lines.add("import dev.commplan.annotations.*;");
    lines.add("import dev.commplan.runtime.*;");
    lines.addAll(List.of(body));
    return JavaFileObjects.forSourceLines(qualifiedName, lines);
  }

  /** Compiles with {@link CommPlanProcessor}. */
  static Compilation compile(JavaFileObject... sources) {
    return compile(new CommPlanProcessor(), sources);
  }

  static Compilation compile(CommPlanProcessor processor, JavaFileObject... sources) {
    return Compiler.javac().withProcessors(processor).withOptions(OPTIONS).compile(sources);
  }
}
