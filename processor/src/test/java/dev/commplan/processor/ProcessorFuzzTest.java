package dev.commplan.processor;

import static org.junit.jupiter.api.Assertions.fail;

import com.google.testing.compile.Compilation;
import com.google.testing.compile.JavaFileObjects;
import com.sun.source.util.JavacTask;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.Filer;
import javax.annotation.processing.ProcessingEnvironment;
import javax.annotation.processing.RoundEnvironment;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Feeds the processor random and mutated {@code @CommPlan} sources and checks that it never fails other than
 * with located diagnostics.
 *
 * <p>Each case is one source file holding one plan class: either generated at random (random dims, ranks,
 * names, mesh axes (valid, reserved, duplicated, dims, not identifiers) and {@code over} on collectives (a
 * declared axis, an unknown one, one in a plan without axes), {@code bucketBytes} (positive, 0, negative), axis
 * names in shapes, fields of buffer and
 * non-buffer types, collectives with random attributes, {@code @Shape} entries
 * that are valid, garbage, overflowing, unicode or empty, private fields, nested, inner, local, record, enum,
 * interface and annotation targets, attribute values javac rejects), or a valid plan mutated token by token
 * (deletion, duplication, replacement, swap) until it still parses. Ten cases are compiled together in one
 * javac run. For every run the test asserts:
 *
 * <ul>
 *   <li>the compilation did not throw, and no diagnostic reports an internal error of the processor
 *       ({@code [CommPlan/InternalError]}) or an uncaught exception of an annotation processor;
 *   <li>every ERROR diagnostic of the processor ({@code [CommPlan/...]}) has a source file and a line;
 *   <li>a generated case whose file got no error, with {@code @CommPlan} on a valid target, produced its
 *       generated class; and when no user source got an error, the generated classes compiled without errors
 *       or warnings.
 * </ul>
 *
 * <p>The same runs again under ecj (Eclipse's compiler), on the first {@code commplan.fuzz.ecj.cases} cases
 * (600): the same assertions, except that ecj places nothing inside a top-level record whose members are
 * all implicit (see {@code Placement}), so an error about such a record may come without a line there.
 *
 * <p>Defaults: 2,000 cases, seed {@code 0xC0FFEE}. {@code -Dcommplan.fuzz.cases=N}, {@code
 * -Dcommplan.fuzz.seed=S}, {@code -Dcommplan.fuzz.batch=B} and {@code -Dcommplan.fuzz.threads=T} change them
 * (see docs/reliability/fuzzing.md). Case {@code i} depends only on the seed and {@code i}, so a
 * failure names a case that can be replayed alone with {@code -Dcommplan.fuzz.only=i}.
 */
class ProcessorFuzzTest {
  private static final int CASES = Integer.getInteger("commplan.fuzz.cases", 2000);
  private static final int ECJ_CASES = Integer.getInteger("commplan.fuzz.ecj.cases", 600);
  private static final long SEED = Long.decode(System.getProperty("commplan.fuzz.seed", "0xC0FFEE"));
  private static final int BATCH = Integer.getInteger("commplan.fuzz.batch", 10);
  private static final int THREADS =
      Integer.getInteger("commplan.fuzz.threads", Math.max(1, Runtime.getRuntime().availableProcessors()));
  private static final Integer ONLY = Integer.getInteger("commplan.fuzz.only");

  /** One plan source. {@code expected} is the generated class's name when the plan must produce it. */
  private record Case(
      int index, String qualifiedName, List<String> lines, String expected, String kind, boolean risky) {
    JavaFileObject file() {
      return JavaFileObjects.forSourceLines(qualifiedName, lines);
    }

    String text() {
      return String.join("\n", lines);
    }
  }

  private final List<String> failures = Collections.synchronizedList(new ArrayList<>());
  private final Map<String, AtomicInteger> stats = new ConcurrentHashMap<>();
  private final AtomicInteger javacRuns = new AtomicInteger();
  private final Map<Integer, JavaFileObject> onDisk = new ConcurrentHashMap<>();
  private Plans.Toolchain compiler;

  @ParameterizedTest(name = "{0}")
  @EnumSource(Plans.Toolchain.class)
  void processorSurvivesRandomAndMutatedPlans(Plans.Toolchain compiler) throws Exception {
    this.compiler = compiler;
    long start = System.nanoTime();
    List<Case> cases = new ArrayList<>();
    Parser parser = new Parser();
    for (int i = 0; i < (compiler == Plans.Toolchain.JAVAC ? CASES : Math.min(CASES, ECJ_CASES)); i++) {
      if (ONLY == null || ONLY == i) {
        cases.add(makeCase(i, parser));
      }
    }
    // A source that does not parse, or has an error javac does not recover from (a bad annotation element),
    // stops javac before annotation processing, for the whole run. So: sources that do not parse are compiled
    // apart; mutants and sources with bad attribute values, which often stop javac, five at a time (a run that
    // stopped is split until the culprit is alone); the rest BATCH at a time.
    List<Case> clean = new ArrayList<>();
    List<Case> risky = new ArrayList<>();
    List<Case> broken = new ArrayList<>();
    for (Case c : cases) {
      (!parser.parses(c.file()) ? broken : c.risky() ? risky : clean).add(c);
    }
    List<List<Case>> batches = new ArrayList<>();
    for (List<Case> group : List.of(clean, risky, broken)) {
      int size = group == risky ? Math.min(5, BATCH) : BATCH;
      for (int i = 0; i < group.size(); i += size) {
        batches.add(group.subList(i, Math.min(group.size(), i + size)));
      }
    }
    ExecutorService pool = Executors.newFixedThreadPool(THREADS);
    try {
      List<Future<?>> futures = new ArrayList<>();
      for (List<Case> batch : batches) {
        futures.add(pool.submit(() -> runBatch(batch)));
      }
      for (Future<?> f : futures) {
        try {
          f.get();
        } catch (ExecutionException e) {
          failures.add("batch failed: " + e.getCause());
        }
      }
    } finally {
      pool.shutdownNow();
    }
    long ms = (System.nanoTime() - start) / 1_000_000;
    System.out.printf(Locale.ROOT,
        "ProcessorFuzzTest (%s): seed %#x, %d cases (%d do not parse), %d compiler runs, %d ms; %s%n", compiler,
        SEED, cases.size(), broken.size(), javacRuns.get(), ms, new java.util.TreeMap<>(stats));
    if (!failures.isEmpty()) {
      List<String> first = new ArrayList<>();
      for (String f : failures.subList(0, Math.min(5, failures.size()))) {
        first.add(f.length() > 6000 ? f.substring(0, 6000) + "..." : f);
      }
      fail(failures.size() + " fuzz failure(s) under " + compiler + ", seed " + SEED + "; first ones:\n\n"
          + String.join("\n\n", first));
    }
  }

  private void count(String key) {
    stats.computeIfAbsent(key, k -> new AtomicInteger()).incrementAndGet();
  }

  /**
   * The case's source as compiled: in memory for javac; on disk for ecj, which compiles only sources it
   * finds there (one file per case, so that diagnostics' sources compare equal).
   */
  private JavaFileObject file(Case c) {
    return compiler == Plans.Toolchain.JAVAC
        ? c.file()
        : onDisk.computeIfAbsent(c.index(), i -> Plans.file(c.qualifiedName(), c.lines()));
  }

  private void runBatch(List<Case> batch) {
    List<JavaFileObject> files = new ArrayList<>();
    for (Case c : batch) {
      files.add(file(c));
    }
    Compilation compilation;
    Recording processor = new Recording();
    javacRuns.incrementAndGet();
    try {
      compilation = compiler.compiler().withProcessors(processor).compile(files.toArray(JavaFileObject[]::new));
    } catch (Throwable t) {
      // Find the culprit: compile each case alone.
      if (batch.size() > 1) {
        for (Case c : batch) {
          runBatch(List.of(c));
        }
      } else {
        failures.add(describe(batch.get(0), "the compilation threw " + stackTrace(t)));
      }
      return;
    }
    if (!processor.ran) {
      // javac found errors it does not recover from (a bad annotation element, say) and did not run processors
      // at all, for any file of the run: split the run to find the cases that stop it.
      if (batch.size() > 1) {
        runBatch(batch.subList(0, batch.size() / 2));
        runBatch(batch.subList(batch.size() / 2, batch.size()));
      } else {
        count("not processed (javac stopped)");
        for (Diagnostic<? extends JavaFileObject> d : compilation.diagnostics()) {
          if (d.getKind() == Diagnostic.Kind.ERROR && System.getProperty("commplan.fuzz.why") != null) {
            String m = d.getMessage(Locale.ROOT).lines().findFirst().orElse("");
            count("stop " + batch.get(0).kind() + ": " + m.substring(0, Math.min(45, m.length())));
            break;
          }
        }
        count(batch.get(0).kind());
      }
      return;
    }
    // Compilation.generatedSourceFiles() is only there when the whole compilation succeeded.
    Set<String> generated = processor.uris;
    Set<String> filesWithErrors = new HashSet<>();
    boolean userErrors = false;
    List<Diagnostic<? extends JavaFileObject>> inGenerated = new ArrayList<>();
    for (Diagnostic<? extends JavaFileObject> d : compilation.diagnostics()) {
      String message = d.getMessage(Locale.ROOT);
      String where = d.getSource() == null ? null : d.getSource().toUri().toString();
      Case owner = owner(batch, d.getSource());
      if (message.contains("[CommPlan/InternalError]") || message.contains("threw an uncaught exception")) {
        failures.add(describe(owner, batch, "internal error: " + d));
      }
      if (d.getKind() == Diagnostic.Kind.ERROR && message.startsWith("[CommPlan/")) {
        count(message.substring(0, message.indexOf(']') + 1));
        if ((d.getSource() == null || d.getLineNumber() <= 0) && !aboutATopLevelRecordUnderEcj(message, batch)) {
          failures.add(describe(owner, batch, "unlocated diagnostic: " + message));
        }
      }
      // ecj gives no source for a diagnostic in a generated file (compile-testing's output files are not
      // among its compilation units): one without a source that is not the processor's is one of those.
      boolean inGeneratedFile = where != null
          ? generated.contains(where)
          : compiler == Plans.Toolchain.ECJ && !message.startsWith("[CommPlan/");
      if (inGeneratedFile) {
        if (d.getKind() == Diagnostic.Kind.ERROR || d.getKind() == Diagnostic.Kind.WARNING
            || d.getKind() == Diagnostic.Kind.MANDATORY_WARNING) {
          inGenerated.add(d);
        }
      } else if (d.getKind() == Diagnostic.Kind.ERROR) {
        userErrors = true;
        if (where != null) {
          filesWithErrors.add(where);
        }
      }
    }
    if (!userErrors && !inGenerated.isEmpty()) {
      List<String> messages = new ArrayList<>();
      for (Diagnostic<? extends JavaFileObject> d : inGenerated) {
        messages.add(d.getKind() + " at line " + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT));
      }
      failures.add(describe(null, batch, "generated code does not compile cleanly: " + messages));
    }
    for (Case c : batch) {
      count(c.kind());
      count("cases processed");
      if (c.expected() != null && !filesWithErrors.contains(file(c).toUri().toString())) {
        count("valid");
        boolean found = processor.names.contains(c.expected());
        if (!found) {
          failures.add(describe(c, batch, "no error, but " + c.expected() + " was not generated; generated: "
              + generated + "; diagnostics: " + compilation.diagnostics()));
        }
      }
    }
  }

  /** The processor, with a {@link Filer} that records the source files it creates. */
  private static final class Recording extends AbstractProcessor {
    final Set<String> names = ConcurrentHashMap.newKeySet();
    final Set<String> uris = ConcurrentHashMap.newKeySet();
    volatile boolean ran;
    private final CommPlanProcessor delegate = new CommPlanProcessor();

    @Override
    public synchronized void init(ProcessingEnvironment env) {
      super.init(env);
      Filer filer = env.getFiler();
      Filer recording = (Filer) Proxy.newProxyInstance(Filer.class.getClassLoader(), new Class<?>[] {Filer.class},
          (proxy, method, args) -> {
            Object result = invoke(method, filer, args);
            if (method.getName().equals("createSourceFile")) {
              names.add(args[0].toString());
              uris.add(((JavaFileObject) result).toUri().toString());
            }
            return result;
          });
      delegate.init((ProcessingEnvironment) Proxy.newProxyInstance(ProcessingEnvironment.class.getClassLoader(),
          new Class<?>[] {ProcessingEnvironment.class},
          (proxy, method, args) -> method.getName().equals("getFiler") ? recording : invoke(method, env, args)));
    }

    private static Object invoke(Method method, Object target, Object[] args) throws Throwable {
      try {
        return method.invoke(target, args);
      } catch (InvocationTargetException e) {
        throw e.getCause();
      }
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
      ran = true;
      return delegate.process(annotations, round);
    }
  }

  /**
   * Whether an unlocated diagnostic is about a top-level record under ecj, which places nothing inside one
   * whose members are all implicit (docs/setup.md, Notes).
   */
  private boolean aboutATopLevelRecordUnderEcj(String message, List<Case> batch) {
    if (compiler != Plans.Toolchain.ECJ) {
      return false;
    }
    for (Case c : batch) {
      String simple = c.qualifiedName().substring(c.qualifiedName().lastIndexOf('.') + 1);
      String declaration = "(@\\S.*\\s)?record\\s+" + Pattern.quote(simple) + "\\b.*"; // not indented: top level
      boolean record = c.lines().stream().anyMatch(l -> l.matches(declaration));
      if (record && (message.contains("'" + simple + "'") || message.contains("'" + c.qualifiedName() + "'"))) {
        return true;
      }
    }
    return false;
  }

  private Case owner(List<Case> batch, JavaFileObject source) {
    if (source == null) {
      return null;
    }
    String uri = source.toUri().toString();
    for (Case c : batch) {
      if (file(c).toUri().toString().equals(uri)) {
        return c;
      }
    }
    return null;
  }

  private static String describe(Case c, String what) {
    return "case " + c.index() + " (" + c.kind() + ", replay with -Dcommplan.fuzz.only=" + c.index() + "): "
        + what + "\n--- " + c.qualifiedName() + "\n" + c.text();
  }

  private static String describe(Case c, List<Case> batch, String what) {
    if (c != null) {
      return describe(c, what);
    }
    StringBuilder b = new StringBuilder("batch of cases");
    for (Case k : batch) {
      b.append(' ').append(k.index());
    }
    b.append(": ").append(what);
    for (Case k : batch) {
      b.append("\n--- ").append(k.qualifiedName()).append('\n').append(k.text());
    }
    return b.toString();
  }

  private static String stackTrace(Throwable t) {
    java.io.StringWriter w = new java.io.StringWriter();
    t.printStackTrace(new java.io.PrintWriter(w));
    String s = w.toString();
    return s.length() > 4000 ? s.substring(0, 4000) + "..." : s;
  }

  // ---------------------------------------------------------------------------------------------------------
  // Cases.

  private static Case makeCase(int index, Parser parser) {
    SplittableRandom r = new SplittableRandom(SEED * 0x9E3779B97F4A7C15L + index);
    String cls = "Fz" + index;
    if (r.nextInt(100) < 20) {
      return mutant(index, cls, r, parser);
    }
    return new Generator(r, cls, index).generate();
  }

  /** Random plan classes. */
  private static final class Generator {
    private static final String[] BUFFERS = {"F16Buffer", "BF16Buffer", "F32Buffer", "F64Buffer", "I8Buffer",
        "U8Buffer", "I32Buffer", "U32Buffer", "I64Buffer", "U64Buffer", "F8E4M3Buffer", "F8E5M2Buffer"};
    private static final String[] NON_BUFFERS = {"int", "long", "float[]", "String", "Object", "Buffer",
        "F32Buffer[]", "java.util.List<F32Buffer>", "Stream", "Undefined", "dev.commplan.runtime.Nope", "T",
        "java.lang.Runnable", "ReduceOp", "Shape"};
    private static final String[] DIM_NAMES = {"n", "m", "k", "hidden", "batch", "in", "out", "x1", "seq"};
    private static final String[] ODD_DIMS = {"ranks", "", " n", "1n", "a-b", "class", "int", "_", "$", "π",
        "ñ", "builder", "build", "execute", "Stream", "n m", "\u0000", "\t", "ǅx", "日本", "null", "true", "ranks2",
        "N", "goto", "var", "record", "a\u200Bb", "\uD83D\uDE00"};
    private static final String[] FIELD_NAMES = {"a", "b", "c", "g", "grads", "weights", "bias", "loss", "x", "y",
        "part", "all", "whole", "slice"};
    private static final String[] ODD_FIELDS = {"builder", "build", "execute", "close", "describe", "wait",
        "notify", "hashCode", "getClass", "toString", "equals", "clone", "finalize", "_x", "$", "ranks", "Ω", "comm",
        "stream", "allocate", "bind", "n", "Builder", "plan", "size", "count", "var", "record", "x$y"};
    private static final String[] COLLECTIVES = {"AllReduce", "Broadcast", "AllGather", "ReduceScatter", "Reduce",
        "Gather", "Scatter", "AllToAll", "Send", "Recv"};
    private static final String[] PEERS = {"rank + 1", "rank - 1", "(rank + 1) % ranks", "(rank - 1) % ranks",
        "rank+0", "rank - 0", "rank + 2", "(rank-2)%ranks", "rank", "rank * 2", "", " ", "rank + -1", "(rank + 1) % n",
        "rank + 1 % ranks", "rank + 99999999999", "rank + 01", "\u0000", "π", "rank\t+\t1", "(rank + 1)"};
    private static final String[] OPS = {"SUM", "PROD", "MAX", "MIN", "AVG"};
    private static final String[] AXIS_NAMES = {"dp", "tp", "pp", "ep", "cp", "sp"};
    private static final String[] ODD_AXES = {"ranks", "rank", "", " tp", "1tp", "class", "t p", "n", "hidden",
        "b", "plan", "mesh", "comm", "Mesh", "dev", "t\u200Bp", "π", "\u0000", "tp"};
    private static final String[] ODD_OVERS = {"", "zz", "ranks", "rank", " dp", "DP", "n", "\u0000", "d\u200Bp",
        "t", "tpp", "world"};
    private static final String[] GARBAGE_SHAPES = {"", " ", "*", "n*", "*n", "**", "n**m", "0", "-1", "00", "01",
        "1e3", "0x10", "+1", "n+m", "(n)", "n*-1", "１２", "١٢", "3.5", "1_000", "2147483648", "9223372036854775807",
        "9223372036854775808", "99999999999999999999999999", "4294967296*4294967296", "9223372036854775807*2",
        "ranks*ranks*ranks", "n * * m", " * ", "\u0000", "\n", "n\tm", "π", "ñ", "ranks ", " ranks", "RANKS", "n.m",
        "n,m", "\"", "\\", "\uD83D\uDE00", "a\u200Bb", "null", "4 *", "2*3*4*5*6*7*8*9*10*11*12*13*14*15*16*17*18*19*20*21"};

    private final SplittableRandom r;
    private final String cls;
    private final int index;
    private final List<String> dims = new ArrayList<>();
    private final List<String> axes = new ArrayList<>();
    private final List<String> fieldNames = new ArrayList<>();
    private boolean badValues;

    Generator(SplittableRandom r, String cls, int index) {
      this.r = r;
      this.cls = cls;
      this.index = index;
    }

    private boolean chance(int percent) {
      return r.nextInt(100) < percent;
    }

    private <T> T pick(T[] values) {
      return values[r.nextInt(values.length)];
    }

    Case generate() {
      int nDims = r.nextInt(4);
      for (int i = 0; i < nDims; i++) {
        dims.add(chance(15) ? pick(ODD_DIMS) : pick(DIM_NAMES));
      }
      if (chance(30)) { // a plan over a mesh
        int nAxes = 1 + r.nextInt(3);
        for (int i = 0; i < nAxes; i++) {
          axes.add(chance(12) ? pick(ODD_AXES) : pick(AXIS_NAMES));
        }
      }
      int nFields = r.nextInt(7);
      for (int i = 0; i < nFields; i++) {
        String name = chance(12) ? pick(ODD_FIELDS) : pick(FIELD_NAMES);
        if (fieldNames.contains(name)) {
          if (chance(95)) {
            name = name + i;
          } else {
            badValues = true;  // "already defined" stops javac
          }
        }
        fieldNames.add(name);
      }
      String kind = pickKind();
      String planName = "";
      String customName = null;
      int nameRoll = r.nextInt(100);
      if (nameRoll < 10) {
        planName = cls + "Custom";
        customName = planName;
      } else if (nameRoll < 16) {
        planName = pick(new String[] {"1abc", "class", "a.b", " ", "Plänen" + index, cls, "Builder", "a b", "$",
            "_", "java.lang.String", cls + "Plan", "\u0000", "int"});
        customName = planName;
      }
      String annotation = commPlanAnnotation(planName);
      List<String> body = fields(kind);
      List<String> lines = new ArrayList<>();
      String simple = cls;
      String expectedSimple;
      String generic = chance(5) ? "<T>" : "";
      switch (kind) {
        case "top" -> {
          String mods = pick(new String[] {"", "", "final ", "public ", "abstract ", "public final "});
          lines.add(annotation);
          lines.add(mods + "class " + cls + generic + " {");
          lines.addAll(body);
          lines.add("}");
          expectedSimple = cls;
        }
        case "nested" -> {
          lines.add("class " + cls + " {");
          lines.add("  " + annotation);
          lines.add("  " + pick(new String[] {"", "public ", "protected ", "final "}) + "static class In" + generic
              + " {");
          lines.addAll(body);
          lines.add("  }");
          lines.add("}");
          expectedSimple = cls + "_In";
        }
        case "deep" -> {
          lines.add("class " + cls + " {");
          lines.add("  static class Mid {");
          lines.add("    " + annotation);
          lines.add("    static class In {");
          lines.addAll(body);
          lines.add("    }");
          lines.add("  }");
          lines.add("}");
          expectedSimple = cls + "_Mid_In";
        }
        case "private" -> {
          lines.add("class " + cls + " {");
          lines.add("  " + annotation + " private static class In {");
          lines.addAll(body);
          lines.add("  }");
          lines.add("}");
          expectedSimple = null;
        }
        case "inner" -> {
          lines.add("class " + cls + " {");
          lines.add("  " + annotation + " class In {");
          lines.addAll(body);
          lines.add("  }");
          lines.add("}");
          expectedSimple = null;
        }
        case "inner-of-inner" -> {
          lines.add("class " + cls + " {");
          lines.add("  class Mid {");
          lines.add("    " + annotation + " static class In {");
          lines.addAll(body);
          lines.add("    }");
          lines.add("  }");
          lines.add("}");
          expectedSimple = null;
        }
        case "local" -> {
          lines.add("class " + cls + " {");
          lines.add("  void m() {");
          lines.add("    " + annotation + " class Local {");
          lines.addAll(body);
          lines.add("    }");
          lines.add("    Object o = new @CommPlan Object() {};");
          lines.add("  }");
          lines.add("}");
          expectedSimple = null;
        }
        case "anonymous" -> {
          lines.add("class " + cls + " {");
          lines.add("  Object o = new Object() {");
          lines.addAll(body);
          lines.add("  };");
          lines.add("}");
          expectedSimple = null;
        }
        case "record" -> {
          lines.add(annotation);
          List<String> components = new ArrayList<>();
          for (String f : body) {
            String t = f.trim();
            if (t.endsWith(";") && !t.contains("=") && !t.startsWith("static")) {
              components.add(t.substring(0, t.length() - 1).replace("private ", "").replace("final ", "")
                  .replace("transient ", "").replace("volatile ", "").replace("public ", "")
                  .replace("protected ", ""));
            }
          }
          lines.add("record " + cls + "(" + String.join(", ", components) + ") {}");
          expectedSimple = null;
        }
        case "enum" -> {
          lines.add(annotation);
          lines.add("enum " + cls + " {");
          lines.add("  A, B;");
          lines.addAll(body);
          lines.add("}");
          expectedSimple = null;
        }
        case "interface" -> {
          lines.add(annotation);
          lines.add("interface " + cls + " {");
          for (String f : body) {
            lines.add(f.replace("private ", "").replace(";", " = null;").replace("= null = null", "= null"));
          }
          lines.add("}");
          expectedSimple = null;
        }
        case "annotation" -> {
          lines.add(annotation);
          lines.add("@interface " + cls + " {");
          lines.add("  String value() default \"\";");
          lines.add("}");
          expectedSimple = null;
        }
        case "no-plan" -> {
          lines.add("class " + cls + " {");
          lines.addAll(body);
          lines.add("}");
          expectedSimple = null;
        }
        case "two-plans" -> {
          lines.add(annotation);
          lines.add("class " + cls + " {");
          lines.addAll(body);
          lines.add("  @CommPlan(dims = \"n\") static class Second { @AllReduce @Shape(\"n\") F32Buffer s; }");
          lines.add("}");
          expectedSimple = cls;
        }
        default -> throw new AssertionError(kind);
      }
      String expected = null;
      if (expectedSimple != null && !badValues) {
        expected = "p." + (customName != null ? customName : expectedSimple + "Plan");
      }
      List<String> source = new ArrayList<>();
      source.add("package p;");
      source.add("import dev.commplan.annotations.*;");
      source.add("import dev.commplan.runtime.*;");
      source.addAll(lines);
      return new Case(index, "p." + simple, source, expected, "gen-" + kind, badValues);
    }

    private String pickKind() {
      int roll = r.nextInt(100);
      if (roll < 55) {
        return "top";
      } else if (roll < 67) {
        return "nested";
      } else if (roll < 70) {
        return "deep";
      } else if (roll < 80) {
        return "two-plans";
      }
      return pick(new String[] {"private", "inner", "inner-of-inner", "local", "anonymous", "record", "enum",
          "interface", "annotation", "no-plan"});
    }

    private String commPlanAnnotation(String name) {
      List<String> attrs = new ArrayList<>();
      if (!name.isEmpty()) {
        attrs.add("name = " + lit(name));
      }
      if (!dims.isEmpty() || chance(10)) {
        List<String> ds = new ArrayList<>();
        for (String d : dims) {
          ds.add(lit(d));
        }
        attrs.add("dims = " + (ds.size() == 1 && chance(50) ? ds.get(0) : "{" + String.join(", ", ds) + "}"));
      }
      if (chance(40)) {
        attrs.add("ranks = " + intValue(new int[] {0, 1, 2, 3, 4, 8}));
      }
      if (!axes.isEmpty() || chance(4)) {
        List<String> as = new ArrayList<>();
        for (String a : axes) {
          as.add(lit(a));
        }
        attrs.add("axes = " + (as.size() == 1 && chance(50) ? as.get(0) : "{" + String.join(", ", as) + "}"));
      }
      String bucketBytes = bucketBytes();
      if (bucketBytes != null) {
        attrs.add(bucketBytes);
      }
      if (chance(3)) {
        badValues = true;
        attrs.add(pick(new String[] {"ranks = \"4\"", "dims = 1", "name = null", "dims = {null}", "ranks = 4L",
            "extra = 1", "ranks = Integer.parseInt(\"4\")", "dims = {\"n\", 3}", "axes = 1", "axes = {null}",
            "axes = {\"dp\", 2}"}));
      }
      Collections.shuffle(attrs, new java.util.Random(r.nextLong()));
      if (attrs.isEmpty() && chance(50)) {
        return "@CommPlan";
      }
      return "@CommPlan(" + String.join(", ", attrs) + ")";
    }

    /**
     * {@code bucketBytes = ...} for one case in four, else null: positive (a bucketed plan, whose fields become
     * constants of its enum Field), 0 or negative. Drawn from a generator of its own, seeded by the case, so that
     * everything else in a case is what it was before bucketBytes existed.
     */
    private String bucketBytes() {
      SplittableRandom b = new SplittableRandom((SEED * 0x9E3779B97F4A7C15L + index) ^ 0xB0C3E7B5L);
      if (b.nextInt(100) >= 25) {
        return null;
      }
      String[] values = {"1", "64", "4096", "1 << 20", "25L * 1024 * 1024", "Long.MAX_VALUE", "0", "-1",
          "Long.MIN_VALUE"};
      return "bucketBytes = " + values[b.nextInt(values.length)];
    }

    private String intValue(int[] usual) {
      if (chance(85)) {
        return Integer.toString(usual[r.nextInt(usual.length)]);
      }
      return pick(new String[] {"-1", "-4", "Integer.MAX_VALUE", "Integer.MIN_VALUE", "2147483647",
          "-2147483648", "1 << 30", "65536", "(int) 1e9", "0x7fffffff", "'a'", "100", "-0", "C"});
    }

    private List<String> fields(String kind) {
      List<String> out = new ArrayList<>();
      boolean constants = chance(10);
      if (constants && !kind.equals("interface") && !kind.equals("record")) {
        out.add("    static final String N = \"n\";");
        out.add("    static final int C = 2;");
      }
      for (int i = 0; i < fieldNames.size(); i++) {
        out.add("    " + field(fieldNames.get(i), constants && !kind.equals("interface") && !kind.equals("record")));
      }
      if (chance(5)) {
        out.add("    " + pick(new String[] {"@AllReduce void m() {}", "void m(@Shape(\"n\") F32Buffer p) {}",
            "@Shape(\"n\") F32Buffer m() { return null; }", "{ }", "static { }",
            "@AllReduce @Shape(\"1\") static F32Buffer st;", cls + "() {}"}));
        if (out.get(out.size() - 1).contains("m(") || out.get(out.size() - 1).contains("void m")) {
          badValues = badValues || out.get(out.size() - 1).contains("@AllReduce void");
        }
      }
      return out;
    }

    private String field(String name, boolean constants) {
      StringBuilder b = new StringBuilder();
      int nCollectives = chance(35) ? 0 : chance(85) ? 1 : 2 + r.nextInt(2);
      List<String> kinds = new ArrayList<>(List.of(COLLECTIVES));
      Collections.shuffle(kinds, new java.util.Random(r.nextLong()));
      for (int i = 0; i < nCollectives; i++) {
        // The collective annotations are not repeatable: a second one of a kind stops javac.
        b.append(collective(constants, kinds.get(i))).append(' ');
      }
      if (chance(85)) {
        b.append(shape(constants)).append(' ');
      }
      if (chance(6)) {
        b.append("@Deprecated ");
      }
      int mod = r.nextInt(100);
      if (mod < 7) {
        b.append("private ");
      } else if (mod < 10) {
        b.append("static ");
      } else if (mod < 13) {
        b.append("final ");
      } else if (mod < 16) {
        b.append(pick(new String[] {"public ", "protected ", "transient ", "volatile ", "public static final "}));
      }
      String type;
      int t = r.nextInt(100);
      if (t < 78) {
        type = pick(BUFFERS);
      } else if (t < 82) {
        type = "dev.commplan.runtime." + pick(BUFFERS);
      } else {
        type = pick(NON_BUFFERS);
      }
      b.append(type).append(' ').append(name);
      if (b.indexOf("final ") >= 0 && b.indexOf("static") < 0) {
        b.append(" = null");
      } else if (b.indexOf("final ") >= 0) {
        b.append(type.equals("int") || type.equals("long") ? " = 1" : " = null");
      }
      b.append(';');
      return b.toString();
    }

    private String collective(boolean constants, String c) {
      List<String> attrs = new ArrayList<>();
      boolean pointToPoint = c.equals("Send") || c.equals("Recv");
      if (pointToPoint) {
        // to/from are required: leaving one out is the compiler's error, which may stop it.
        if (chance(97)) {
          attrs.add((c.equals("Send") ? "to" : "from") + " = " + lit(pick(PEERS)));
        } else {
          badValues = true;
        }
      } else if (c.equals("AllToAll") ? chance(97) : chance(60)) { // into is required for AllToAll
        String into;
        int roll = r.nextInt(100);
        if (roll < 75 && !fieldNames.isEmpty()) {
          into = fieldNames.get(r.nextInt(fieldNames.size()));
        } else if (roll < 85) {
          into = "";
        } else {
          into = pick(new String[] {"nope", " a", "a ", "A", "this.a", "N", "\u0000", "ñ", "", "a,b", "p.a"});
        }
        attrs.add("into = " + (constants && chance(10) ? "N" : lit(into)));
      }
      if ((c.equals("AllToAll") && !attrs.stream().anyMatch(a -> a.startsWith("into")))) {
        badValues = true;
      }
      if ((c.equals("AllReduce") || c.equals("ReduceScatter") || c.equals("Reduce")) && chance(50)) {
        attrs.add("op = " + (chance(50) ? "ReduceOp." : "dev.commplan.annotations.ReduceOp.") + pick(OPS));
      }
      if ((c.equals("Broadcast") || c.equals("Reduce") || c.equals("Gather") || c.equals("Scatter")) && chance(60)) {
        attrs.add("root = " + intValue(new int[] {0, 1, 2, 3, 4, 7}));
      }
      if (chance(40)) {
        attrs.add("step = " + intValue(new int[] {0, 0, 1, 1, 2, 3}));
      }
      if (chance(axes.isEmpty() ? 4 : 55)) {
        String over = !axes.isEmpty() && chance(80) ? axes.get(r.nextInt(axes.size())) : pick(ODD_OVERS);
        attrs.add("over = " + lit(over));
      }
      if (chance(3)) {
        badValues = true;
        attrs.add(pick(new String[] {"into = null", "op = null", "op = SUM", "root = \"0\"", "step = 1L",
            "op = ReduceOp.valueOf(\"SUM\")", "into = 1", "value = \"n\"", "root = 1.5", "step = C + ",
            "into = {\"a\"}", "over = null", "over = 1", "over = {\"dp\"}"}));
      }
      Collections.shuffle(attrs, new java.util.Random(r.nextLong()));
      return "@" + c + (attrs.isEmpty() && chance(50) ? "" : "(" + String.join(", ", attrs) + ")");
    }

    private String shape(boolean constants) {
      int n = chance(5) ? 0 : 1 + r.nextInt(chance(80) ? 2 : 4);
      List<String> entries = new ArrayList<>();
      for (int i = 0; i < n; i++) {
        entries.add(constants && chance(10) ? "N" : lit(shapeEntry()));
      }
      if (chance(2)) {
        badValues = true;
        return pick(new String[] {"@Shape(null)", "@Shape({null})", "@Shape(1)", "@Shape", "@Shape()",
            "@Shape(value = {\"n\"}, x = 1)", "@Shape({\"n\", 2})"});
      }
      if (n == 1 && chance(50)) {
        return "@Shape(" + (chance(30) ? "value = " : "") + entries.get(0) + ")";
      }
      return "@Shape({" + String.join(", ", entries) + "})";
    }

    private String shapeEntry() {
      int roll = r.nextInt(100);
      if (roll < 15) {
        return pick(GARBAGE_SHAPES);
      } else if (roll < 35) {
        return Integer.toString(1 + r.nextInt(chance(80) ? 16 : 1 << 20));
      } else if (roll < 45) {
        return "ranks";
      } else if (roll < 50) {
        return pick(DIM_NAMES);
      } else if (roll < 62 && !axes.isEmpty()) {
        return axes.get(r.nextInt(axes.size()));
      } else if (roll < 75 && !dims.isEmpty()) {
        return dims.get(r.nextInt(dims.size()));
      } else {
        int k = 2 + r.nextInt(3);
        List<String> factors = new ArrayList<>();
        for (int i = 0; i < k; i++) {
          int f = r.nextInt(5);
          factors.add(f == 4 && !axes.isEmpty() ? axes.get(r.nextInt(axes.size()))
              : f == 0 || f == 4 || dims.isEmpty() ? Integer.toString(1 + r.nextInt(8))
              : f == 1 ? "ranks" : dims.get(r.nextInt(dims.size())));
        }
        return String.join(chance(50) ? "*" : pick(new String[] {" * ", "* ", " *", "  *  "}), factors);
      }
    }
  }

  /** A Java string literal for {@code s}, with escapes for quotes, backslashes and control characters. */
  private static String lit(String s) {
    StringBuilder b = new StringBuilder("\"");
    for (char ch : s.toCharArray()) {
      switch (ch) {
        case '"' -> b.append("\\\"");
        case '\\' -> b.append("\\\\");
        case '\n' -> b.append("\\n");
        case '\r' -> b.append("\\r");
        case '\t' -> b.append("\\t");
        default -> {
          if (ch < 0x20 || ch == 0x7f) {
            b.append(String.format(Locale.ROOT, "\\%03o", (int) ch));
          } else {
            b.append(ch);
          }
        }
      }
    }
    return b.append('"').toString();
  }

  // ---------------------------------------------------------------------------------------------------------
  // Mutants of valid plans.

  private static final String[][] VALID = {
    {
      "@CommPlan(dims = {\"in\", \"out\"}, ranks = 4)",
      "final class CLS {",
      "  @AllReduce(op = ReduceOp.AVG) @Shape({\"in\", \"out\"}) F32Buffer weights;",
      "  @AllReduce(op = ReduceOp.AVG) @Shape(\"out\") F32Buffer bias;",
      "  @AllGather(into = \"losses\", step = 1) @Shape(\"1\") F32Buffer loss;",
      "  @Shape(\"ranks\") F32Buffer losses;",
      "}",
    },
    {
      "@CommPlan(dims = \"n\")",
      "class CLS {",
      "  @AllReduce @Shape(\"n\") F32Buffer sum;",
      "  @Broadcast(root = 0) @Shape(\"n\") F64Buffer params;",
      "  @AllGather(into = \"all\") @Shape(\"n\") I32Buffer part;",
      "  @Shape(\"ranks*n\") I32Buffer all;",
      "  @ReduceScatter(into = \"slice\", op = ReduceOp.MAX) @Shape({\"ranks\", \"n\"}) BF16Buffer whole;",
      "  @Shape(\"n\") BF16Buffer slice;",
      "}",
    },
    {
      "@CommPlan(name = \"CLSCustom\", dims = {\"hidden\", \"batch\"}, ranks = 2)",
      "class CLS {",
      "  @ReduceScatter(op = ReduceOp.SUM) @Shape(\"4 * hidden\") U8Buffer grads;",
      "  @AllGather(step = 1) @Shape({\"2\", \"batch\"}) I64Buffer acts;",
      "  @Broadcast(root = 1, into = \"dst\", step = 2) @Shape(\"hidden\") F16Buffer src;",
      "  @Shape(\"hidden\") F16Buffer dst;",
      "  int notAPlanField;",
      "}",
    },
    {
      "@CommPlan(dims = \"n\")",
      "class CLS {",
      "  @Reduce(op = ReduceOp.MAX, root = 1, into = \"sum\") @Shape(\"n\") F32Buffer part;",
      "  @Shape(\"n\") F32Buffer sum;",
      "  @Gather(into = \"all\", step = 1) @Shape(\"n\") F8E4M3Buffer one;",
      "  @Shape({\"ranks\", \"n\"}) F8E4M3Buffer all;",
      "  @Scatter(root = 0, step = 2) @Shape(\"ranks*n\") I32Buffer whole;",
      "  @AllToAll(into = \"routed\", step = 3) @Shape({\"ranks\", \"n\"}) BF16Buffer tokens;",
      "  @Shape(\"ranks * n\") BF16Buffer routed;",
      "  @Send(to = \"(rank + 1) % ranks\", step = 4) @Shape(\"n\") F32Buffer out;",
      "  @Recv(from = \"(rank - 1) % ranks\", step = 4) @Shape(\"n\") F32Buffer in;",
      "  @Send(to = \"rank + 1\", step = 5) @Shape(\"n\") F64Buffer next;",
      "  @Recv(from = \"rank - 1\", step = 5) @Shape(\"n\") F64Buffer prev;",
      "}",
    },
    {
      "@CommPlan(dims = \"h\", axes = {\"dp\", \"tp\"})",
      "class CLS {",
      "  @AllGather(over = \"tp\", into = \"full\") @Shape(\"h\") F32Buffer part;",
      "  @Shape({\"tp\", \"h\"}) F32Buffer full;",
      "  @AllReduce(op = ReduceOp.AVG, over = \"dp\", step = 1) @Shape({\"4\", \"h\"}) F32Buffer grads;",
      "  @Broadcast(root = 1, over = \"tp\", step = 1) @Shape(\"dp\") I32Buffer params;",
      "  @AllReduce(step = 2) @Shape(\"ranks\") F32Buffer loss;",
      "  @Send(to = \"rank + 1\", over = \"tp\", step = 3) @Shape(\"h\") F32Buffer out;",
      "  @Recv(from = \"rank - 1\", over = \"tp\", step = 3) @Shape(\"h\") F32Buffer in;",
      "}",
    },
    {
      "class CLS {",
      "  @CommPlan(dims = \"k\")",
      "  static class Inner {",
      "    @AllReduce(into = \"out\", op = ReduceOp.PROD, step = 3) @Shape(\"k\") U64Buffer in;",
      "    @Shape(\"k\") U64Buffer out;",
      "    @AllReduce(step = 3) @Shape(\"8\") I8Buffer flags;",
      "  }",
      "}",
    },
  };

  private static final Pattern TOKEN =
      Pattern.compile("\"(?:[^\"\\\\]|\\\\.)*\"|[A-Za-z_$][A-Za-z0-9_$]*|\\d+|\\S");
  private static final String[] IDENT_POOL = {"CommPlan", "AllReduce", "Broadcast", "AllGather", "ReduceScatter",
      "Reduce", "Gather", "Scatter", "AllToAll", "Send", "Recv", "to", "from", "F8E4M3Buffer",
      "Shape", "F32Buffer", "F64Buffer", "I8Buffer", "Buffer", "into", "op", "root", "step", "dims", "ranks", "name",
      "value", "SUM", "AVG", "ReduceOp", "private", "static", "final", "class", "record", "enum", "interface", "int",
      "String", "null", "weights", "bias", "loss", "losses", "all", "part", "n", "Inner", "CLS", "extends", "new",
      "this", "abstract", "transient", "default", "over", "axes", "dp", "tp"};
  private static final String[] STRING_POOL = {"\"\"", "\"n\"", "\"ranks\"", "\"0\"", "\"-1\"", "\"n*\"",
      "\"99999999999999999999\"", "\"weights\"", "\"bias\"", "\"loss\"", "\"losses\"", "\"π\"", "\"ranks*n\"",
      "\"nope\"", "\" \"", "\"4*in\"", "\"rank + 1\"", "\"rank - 1\"", "\"(rank + 1) % ranks\"", "\"rank\"",
      "\"dp\"", "\"tp\"", "\"tp*h\""};
  private static final String[] NUMBER_POOL = {"0", "1", "2", "3", "4", "7", "2147483647", "2147483648", "00", "9"};
  private static final String[] PUNCT_POOL = {"@", "(", ")", "{", "}", ",", ";", "=", "*", ".", "[", "]", "<",
      ">", "-", "+", "\"", "'"};

  private static Case mutant(int index, String cls, SplittableRandom r, Parser parser) {
    String[] base = VALID[r.nextInt(VALID.length)];
    List<String> tokens = new ArrayList<>();
    for (String line : base) {
      Matcher m = TOKEN.matcher(line.replace("CLS", cls));
      while (m.find()) {
        tokens.add(m.group());
      }
      tokens.add("\n");
    }
    List<String> best = null;
    for (int attempt = 0; attempt < 12; attempt++) {
      List<String> t = new ArrayList<>(tokens);
      int ops = 1 + r.nextInt(3);
      for (int i = 0; i < ops; i++) {
        mutate(t, r);
      }
      best = t;
      if (parser.parses(JavaFileObjects.forSourceLines("p." + cls, lines(t)))) {
        break;
      }
    }
    return new Case(index, "p." + cls, lines(best), null, "mutant", true);
  }

  private static void mutate(List<String> t, SplittableRandom r) {
    int i = r.nextInt(t.size());
    while (t.get(i).equals("\n")) {
      i = r.nextInt(t.size());
    }
    switch (r.nextInt(5)) {
      case 0 -> t.remove(i);
      case 1 -> t.add(i, t.get(i));
      case 2 -> {
        int j = r.nextInt(t.size());
        if (!t.get(j).equals("\n")) {
          String s = t.get(i);
          t.set(i, t.get(j));
          t.set(j, s);
        }
      }
      default -> t.set(i, replacement(t.get(i), r));
    }
  }

  private static String replacement(String token, SplittableRandom r) {
    char c = token.charAt(0);
    String[] pool;
    if (r.nextInt(100) < 25) {
      pool = new String[][] {IDENT_POOL, STRING_POOL, NUMBER_POOL, PUNCT_POOL}[r.nextInt(4)];
    } else if (c == '"') {
      pool = STRING_POOL;
    } else if (Character.isDigit(c)) {
      pool = NUMBER_POOL;
    } else if (Character.isJavaIdentifierStart(c)) {
      pool = IDENT_POOL;
    } else {
      pool = PUNCT_POOL;
    }
    return pool[r.nextInt(pool.length)];
  }

  private static List<String> lines(List<String> tokens) {
    List<String> lines = new ArrayList<>();
    StringBuilder line = new StringBuilder();
    for (String tok : tokens) {
      if (tok.equals("\n")) {
        lines.add(line.toString());
        line.setLength(0);
      } else {
        if (!line.isEmpty()) {
          line.append(' ');
        }
        line.append(tok);
      }
    }
    if (!line.isEmpty()) {
      lines.add(line.toString());
    }
    List<String> out = new ArrayList<>();
    out.add("package p;");
    out.add("import dev.commplan.annotations.*;");
    out.add("import dev.commplan.runtime.*;");
    out.addAll(lines);
    return out;
  }

  /** Parses a source with javac, without attribution or processing, to tell whether it is syntactically valid. */
  private static final class Parser {
    private final JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    private final StandardJavaFileManager files = javac.getStandardFileManager(null, Locale.ROOT, null);

    synchronized boolean parses(JavaFileObject source) {
      DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
      JavacTask task = (JavacTask) javac.getTask(null, files, diagnostics, List.of("-proc:none"), null,
          List.of(source));
      try {
        task.parse();
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
      for (Diagnostic<?> d : diagnostics.getDiagnostics()) {
        if (d.getKind() == Diagnostic.Kind.ERROR) {
          return false;
        }
      }
      return true;
    }
  }
}
