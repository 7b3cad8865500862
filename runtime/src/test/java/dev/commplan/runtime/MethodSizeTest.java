package dev.commplan.runtime;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.sun.source.tree.ClassTree;
import com.sun.source.tree.CompilationUnitTree;
import com.sun.source.tree.LineMap;
import com.sun.source.tree.MethodTree;
import com.sun.source.tree.VariableTree;
import com.sun.source.util.JavacTask;
import com.sun.source.util.SourcePositions;
import com.sun.source.util.TreeScanner;
import com.sun.source.util.Trees;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The library's methods stay short and take few arguments: no method of the main sources of {@code
 * runtime}, {@code processor}, {@code model} or {@code annotations} has a body longer than {@link #MAX_LINES}
 * lines or more than {@link #MAX_PARAMETERS} parameters, except those named below with the reason each one
 * may. The limit is on methods, not on files: a class may be long because it is one thing (a public API
 * with its javadoc, a family of small methods), but a long method is doing several things, and a long
 * parameter list is passing around state that wants a class of its own.
 *
 * <p>The limits were set from the code once the file cap was dropped and the classes it had shaped were
 * split (issue 42): of 2,288 methods, half have bodies of 4 lines or fewer, 90% of 18 or fewer and 99% of 46
 * or fewer; 19 are over 50 lines and 6 over 60, the exceptions below. 96% take 5 parameters or fewer; 5 take
 * more than 10, the exceptions below. The limits hold for every other method and catch growth: a method
 * that outgrows them is split by what it does, and a new exception needs a reason a reviewer accepts.
 *
 * <p>A body's length is its lines from the opening brace to the closing one, comments and blank lines
 * included (a lambda or an anonymous class inside counts towards its method). A record's compact
 * constructor is not counted for parameters: its components are the record's declaration. The sources
 * are read by path from the repository (tests run in this module's directory) and parsed with javac's
 * own parser.
 */
class MethodSizeTest {
  /** The most lines a method's body may have, braces included. */
  static final int MAX_LINES = 60;
  /** The most parameters a method or constructor may take. */
  static final int MAX_PARAMETERS = 10;

  /** The modules whose main sources are checked: the library and the processor. */
  private static final List<String> MODULES = List.of("runtime", "processor", "model", "annotations");

  /**
   * The methods allowed a longer body, by class and name ({@code <init>} for a constructor), with why. An
   * entry goes as soon as its method passes ({@link #everyExceptionIsStillNeeded}).
   */
  private static final Map<String, String> LONGER = Map.of(
      "dev.commplan.processor.generator.PlanGenerator#generate",
      "writes the generated plan class, member by member in the order of the generated source (one JavaPoet call"
          + " per generated line); its length follows the generated code, which the golden files pin",
      "dev.commplan.processor.generator.BuildMethod#build",
      "writes the generated Builder.build method statement by statement, as the generated source reads",
      "dev.commplan.processor.generator.BuilderType#type",
      "writes the generated Builder class, member by member in the order of the generated source",
      "dev.commplan.runtime.mpi.MpiCallTable#set",
      "one row of the MPI call table: maps a call's arguments, column by column, to what its MPI function takes");

  /** The methods allowed more parameters, by class and name, with why. */
  private static final Map<String, String> MORE_PARAMETERS = Map.of(
      "dev.commplan.runtime.plan.CollectiveCall#<init>",
      "the public record's constructor without the point-to-point components (11): published API, kept for"
          + " compatibility",
      "dev.commplan.runtime.plan.Plan#<init>",
      "made once, by PlanAssembly, from what each stage of the build produced",
      "dev.commplan.runtime.local.LocalCollective#<init>",
      "a collective's arguments, one each, as the call it stands for takes them (and its flight-record label)",
      "dev.commplan.runtime.mpi.MpiCallTable#set",
      "one row of the MPI call table, an argument per column (the table's arrays are its columns)");

  /** A method's measures: its class and name, where it is, its body's lines and its parameters. */
  private record Measured(String key, String where, int lines, int parameters) {}

  private static List<Measured> methods;

  @BeforeAll
  static void parseTheMainSources() throws IOException {
    List<Path> files = new ArrayList<>();
    for (String module : MODULES) {
      Path main = Path.of("..", module, "src/main/java");
      assertTrue(Files.isDirectory(main), main + " is not a directory");
      try (Stream<Path> walk = Files.walk(main)) {
        walk.filter(p -> p.toString().endsWith(".java") && !p.endsWith("module-info.java")
            && !p.endsWith("package-info.java")).forEach(files::add);
      }
    }
    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    try (StandardJavaFileManager fileManager = javac.getStandardFileManager(null, null, null)) {
      JavacTask task = (JavacTask) javac.getTask(null, fileManager, null, List.of("-proc:none"), null,
          fileManager.getJavaFileObjectsFromPaths(files));
      SourcePositions positions = Trees.instance(task).getSourcePositions();
      methods = new ArrayList<>();
      for (CompilationUnitTree unit : task.parse()) {
        measure(unit, positions, methods);
      }
    }
    assertTrue(methods.size() > 1000, "only " + methods.size() + " methods found: are the sources where they were?");
  }

  /** Adds every method with a body in {@code unit} to {@code into}. */
  private static void measure(CompilationUnitTree unit, SourcePositions positions, List<Measured> into) {
    LineMap lines = unit.getLineMap();
    String pkg = unit.getPackageName() == null ? "" : unit.getPackageName() + ".";
    new TreeScanner<Void, String>() {
      @Override
      public Void visitClass(ClassTree type, String outer) {
        String name = outer == null ? pkg + type.getSimpleName() : outer + "." + type.getSimpleName();
        return super.visitClass(type, type.getSimpleName().isEmpty() ? outer : name); // anonymous: its method's
      }

      @Override
      public Void visitMethod(MethodTree method, String owner) {
        if (method.getBody() != null) {
          long from = lines.getLineNumber(positions.getStartPosition(unit, method.getBody()));
          long to = lines.getLineNumber(positions.getEndPosition(unit, method.getBody()));
          long start = positions.getStartPosition(unit, method);
          // a compact constructor's parameters are its record's components, declared before it
          int parameters = 0;
          for (VariableTree p : method.getParameters()) {
            parameters += positions.getStartPosition(unit, p) > start ? 1 : 0;
          }
          into.add(new Measured(owner + "#" + method.getName(),
              unit.getSourceFile().getName() + ":" + lines.getLineNumber(start), (int) (to - from + 1), parameters));
        }
        return super.visitMethod(method, owner);
      }
    }.scan(unit, null);
  }

  @Test
  void noMethodIsLongerThanTheLimit() {
    List<String> tooLong = new ArrayList<>();
    for (Measured m : methods) {
      if (m.lines() > MAX_LINES && !LONGER.containsKey(m.key())) {
        tooLong.add(m.key() + ": " + m.lines() + " lines (" + m.where() + ")");
      }
    }
    assertEquals(List.of(), tooLong, "methods longer than " + MAX_LINES + " lines: split each by what it does");
  }

  @Test
  void noMethodTakesMoreParametersThanTheLimit() {
    List<String> tooMany = new ArrayList<>();
    for (Measured m : methods) {
      if (m.parameters() > MAX_PARAMETERS && !MORE_PARAMETERS.containsKey(m.key())) {
        tooMany.add(m.key() + ": " + m.parameters() + " parameters (" + m.where() + ")");
      }
    }
    assertEquals(List.of(), tooMany, "methods with more than " + MAX_PARAMETERS + " parameters: give what travels"
        + " together a class or record of its own");
  }

  /** The exceptions only shrink: one whose method now passes the limit, or is gone, is taken off its list. */
  @Test
  void everyExceptionIsStillNeeded() {
    Map<String, Integer> longest = new TreeMap<>();
    Map<String, Integer> widest = new TreeMap<>();
    for (Measured m : methods) {
      longest.merge(m.key(), m.lines(), Math::max);
      widest.merge(m.key(), m.parameters(), Math::max);
    }
    TreeSet<String> notNeeded = new TreeSet<>();
    for (String key : LONGER.keySet()) {
      if (longest.getOrDefault(key, 0) <= MAX_LINES) {
        notNeeded.add(key + " (lines: " + longest.get(key) + ")");
      }
    }
    for (String key : MORE_PARAMETERS.keySet()) {
      if (widest.getOrDefault(key, 0) <= MAX_PARAMETERS) {
        notNeeded.add(key + " (parameters: " + widest.get(key) + ")");
      }
    }
    assertEquals(new TreeSet<>(), notNeeded, "exceptions whose method passes the limits now, or is gone: remove them");
  }
}
