package dev.commplan.processor;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.Compiler;
import com.google.testing.compile.JavaFileObjects;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import javax.tools.DiagnosticListener;
import javax.tools.JavaFileManager;
import javax.tools.JavaFileObject;
import org.eclipse.jdt.internal.compiler.tool.EclipseCompiler;

/** Test sources and the compilers the processor's tests run. */
final class Plans {
  private Plans() {}

  /**
   * The options every javac test compiles with: all lint warnings, less "processing", which warns that no
   * processor claimed the annotations ({@code process} returns false by design, so that other processors
   * see them too).
   */
  static final List<String> OPTIONS = List.of("-Xlint:all", "-Xlint:-processing", "-encoding", "UTF-8");

  /**
   * The compilers a plan must work under: javac, and Eclipse's compiler (ecj), which Eclipse runs as you
   * type. Each with the options a careful user has: javac with {@code -Xlint:all}, ecj with its defaults
   * (the warnings Eclipse shows out of the box: unused imports, raw types, a method with a constructor's
   * name, ...).
   */
  enum Toolchain {
    JAVAC {
      @Override
      Compiler compiler() {
        return Compiler.javac().withOptions(OPTIONS);
      }
    },
    ECJ {
      @Override
      Compiler compiler() {
        return Compiler.compiler(new QuietEclipseCompiler()).withOptions(List.of("-encoding", "UTF-8"));
      }
    };

    abstract Compiler compiler();

    /** Compiles with {@code processor}. */
    Compilation compile(CommPlanProcessor processor, JavaFileObject... sources) {
      return compiler().withProcessors(processor).compile(sources);
    }

    Compilation compile(JavaFileObject... sources) {
      return compile(new CommPlanProcessor(), sources);
    }
  }

  /** ecj, less its printing of every problem to standard output (the test reads them as diagnostics). */
  private static final class QuietEclipseCompiler extends EclipseCompiler {
    @Override
    public CompilationTask getTask(Writer out, JavaFileManager fileManager,
        DiagnosticListener<? super JavaFileObject> listener, Iterable<String> options, Iterable<String> classes,
        Iterable<? extends JavaFileObject> units) {
      return super.getTask(new PrintWriter(Writer.nullWriter()), fileManager, listener, options, classes, units);
    }
  }

  /**
   * A source file {@code qualifiedName} in its package, importing the DSL and the runtime on demand (the
   * runtime only where the body uses it, so that ecj has no unused import to warn about).
   *
   * <p>The file is written to disk: ecj compiles only sources it can find there (its {@code getTask}
   * turns each source's URI into a file), and javac takes them as well.
   */
  static JavaFileObject source(String qualifiedName, String... body) {
    List<String> lines = new ArrayList<>();
    int dot = qualifiedName.lastIndexOf('.');
    if (dot > 0) {
      lines.add("package " + qualifiedName.substring(0, dot) + ";");
    }
    if (String.join("\n", body).contains("@")) {
      lines.add("import dev.commplan.annotations.*;");
    }
    if (usesRuntime(String.join("\n", body))) {
      lines.add("import dev.commplan.runtime.*;");
    }
    lines.addAll(List.of(body));
    return file(qualifiedName, lines);
  }

  /** A source file {@code qualifiedName} with exactly {@code lines}, written to disk (see {@link #source}). */
  static JavaFileObject file(String qualifiedName, List<String> lines) {
    try {
      Path path = SOURCES.resolve("s" + COUNTER.incrementAndGet()).resolve(qualifiedName.replace('.', '/') + ".java");
      Files.createDirectories(path.getParent());
      Files.writeString(path, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
      return JavaFileObjects.forResource(path.toUri().toURL());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Compiles with {@link CommPlanProcessor} under javac. */
  static Compilation compile(JavaFileObject... sources) {
    return Toolchain.JAVAC.compile(sources);
  }

  static Compilation compile(CommPlanProcessor processor, JavaFileObject... sources) {
    return Toolchain.JAVAC.compile(processor, sources);
  }

  private static boolean usesRuntime(String body) {
    return body.matches("(?s).*\\b(F16|BF16|F32|F64|I8|U8|I32|U32|I64|U64|F8E4M3|F8E5M2)Buffer\\b.*")
        || body.matches("(?s).*\\b(Buffer|Communicator|Cluster|Backends|Stream|Mesh)\\b.*");
  }

  private static final AtomicInteger COUNTER = new AtomicInteger();
  private static final Path SOURCES = temporaryDirectory();

  private static Path temporaryDirectory() {
    try {
      Path dir = Files.createTempDirectory("commplan-test-sources-");
      Runtime.getRuntime().addShutdownHook(new Thread(() -> delete(dir)));
      return dir;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static void delete(Path dir) {
    try (Stream<Path> all = Files.walk(dir)) {
      all.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException | UncheckedIOException e) {
      // best effort: it is a temporary directory
    }
  }
}
