package dev.commplan.processor;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.stream.Stream;
import javax.annotation.processing.AbstractProcessor;
import javax.annotation.processing.ProcessingEnvironment;
import javax.annotation.processing.Processor;
import javax.annotation.processing.RoundEnvironment;
import javax.lang.model.SourceVersion;
import javax.lang.model.element.TypeElement;
import javax.tools.Diagnostic;
import javax.tools.DiagnosticCollector;
import javax.tools.JavaCompiler;
import javax.tools.JavaFileObject;
import javax.tools.StandardJavaFileManager;
import javax.tools.ToolProvider;

/**
 * Compile time and memory of a plan against its number of buffer fields (docs/compile-time.md). For each
 * count, four fresh JVMs each run javac in process on
 * {@link LargePlans#plan}:
 *
 * <ol>
 *   <li>{@code plan class alone}: the plan class without the processor ({@code -proc:none}), what javac
 *       takes for it anyway;
 *   <li>{@code tiny processor}: the plan class with a processor that generates one small class in the
 *       first round: what javac's processing rounds cost by themselves (javac enters and annotates the
 *       plan class again in each round);
 *   <li>{@code with processor}: the plan class with the processor, which generates the plan's class, and
 *       javac compiles that too (what a user's build does);
 *   <li>{@code generated alone}: the generated class by itself ({@code -proc:none}, the plan class's
 *       compiled classes on the class path).
 * </ol>
 *
 * Each prints the wall and CPU time of the compilation (the JVM's, JIT and GC included), the CPU time
 * of the processor's {@code process} calls (on javac's thread), the peak heap (the sum of the heap pools' peaks), the peak
 * resident set of the JVM (VmHWM, Linux), the generated lines, and whether it compiled.
 *
 * <pre>
 * java -cp "processor/target/test-classes:processor/target/classes:$(cat processor/target/test-classpath.txt)" \
 *     dev.commplan.processor.ScaleMeasure 1000 5000 10000
 * </pre>
 *
 * (docs/compile-time.md has the commands that build the class path file). The counts are measured one
 * after the other, each in its own temporary directory, deleted after.
 */
public final class ScaleMeasure {
  private ScaleMeasure() {}

  private enum Mode {
    ALONE("plan class alone"), TINY("tiny processor"), WITH("with processor"), GENERATED("generated alone");

    final String label;

    Mode(String label) {
      this.label = label;
    }
  }

  public static void main(String[] args) throws Exception {
    if (args.length == 4 && args[0].equals("--one")) {
      one(Mode.valueOf(args[1]), Path.of(args[2]), Integer.parseInt(args[3]));
      return;
    }
    if (args.length == 3 && args[0].equals("--write-source")) {
      writeSource(Path.of(args[2]), Integer.parseInt(args[1])); // for another compiler (ecj)
      return;
    }
    System.out.println("fields  what               compiled  wall s  cpu s  processor cpu s  peak heap MB  peak RSS MB"
        + "  generated lines");
    for (String n : args) {
      Path dir = Files.createTempDirectory("commplan-scale-");
      try {
        for (Mode mode : Mode.values()) {
          String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
          List<String> command = List.of(java, "-Xmx6g", "-cp", System.getProperty("java.class.path"),
              ScaleMeasure.class.getName(), "--one", mode.name(), dir.toString(), n);
          Process p = new ProcessBuilder(command).inheritIO().start();
          if (p.waitFor() != 0) {
            System.out.println(n + ": the measuring JVM exited with " + p.exitValue());
          }
        }
      } finally {
        try (Stream<Path> all = Files.walk(dir)) {
          all.sorted(Comparator.reverseOrder()).forEach(f -> f.toFile().delete());
        }
      }
    }
  }

  /** {@code p.Big}, the plan of {@code fields} buffer fields, written to {@code file}. */
  private static void writeSource(Path file, int fields) throws IOException {
    Files.createDirectories(file.toAbsolutePath().getParent());
    List<String> lines = new ArrayList<>(List.of("package p;", "import dev.commplan.annotations.*;",
        "import dev.commplan.runtime.*;"));
    lines.addAll(LargePlans.plan("Big", fields));
    Files.writeString(file, String.join("\n", lines) + "\n", StandardCharsets.UTF_8);
  }

  /** One measurement, in this JVM, in {@code dir} (shared by the four of one count). */
  private static void one(Mode mode, Path dir, int fields) throws IOException {
    Path src = dir.resolve("src/p/Big.java");
    writeSource(src, fields);
    Path gen = Files.createDirectories(dir.resolve("gen"));
    Path out = Files.createDirectories(dir.resolve(mode == Mode.GENERATED ? "out-generated" : "out-" + mode));

    String classPath = System.getProperty("java.class.path");
    Path input = src;
    List<String> options = new ArrayList<>(List.of("-d", out.toString(), "-Xlint:all", "-Xlint:-processing",
        "-encoding", "UTF-8"));
    switch (mode) {
      case ALONE -> options.add("-proc:none");
      case WITH -> options.addAll(List.of("-s", gen.toString()));
      case TINY -> options.addAll(List.of("-s", Files.createDirectories(dir.resolve("gen-tiny")).toString()));
      case GENERATED -> {
        options.add("-proc:none");
        classPath = dir.resolve("out-" + Mode.WITH) + java.io.File.pathSeparator + classPath;
        input = gen.resolve("p/BigPlan.java");
      }
    }
    options.addAll(List.of("-classpath", classPath));

    JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
    Timed timed = new Timed(new CommPlanProcessor());
    DiagnosticCollector<JavaFileObject> diagnostics = new DiagnosticCollector<>();
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      pool.resetPeakUsage();
    }
    long start = System.nanoTime();
    long cpuStart = processCpuNanos();
    boolean ok;
    try (StandardJavaFileManager files = javac.getStandardFileManager(diagnostics, Locale.ROOT, StandardCharsets.UTF_8)) {
      JavaCompiler.CompilationTask task = javac.getTask(null, files, diagnostics, options, null,
          files.getJavaFileObjects(input));
      if (mode == Mode.WITH) {
        task.setProcessors(List.of(timed));
      } else if (mode == Mode.TINY) {
        task.setProcessors(List.of(new Tiny()));
      }
      ok = task.call();
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    double cpu = (processCpuNanos() - cpuStart) / 1e9;
    long peakHeap = 0;
    for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
      if (pool.getType() == MemoryType.HEAP) {
        peakHeap += pool.getPeakUsage().getUsed();
      }
    }
    long generated = 0;
    if (mode == Mode.WITH) {
      try (Stream<Path> all = Files.walk(gen)) {
        generated = all.filter(Files::isRegularFile).mapToLong(ScaleMeasure::lines).sum();
      }
    }
    System.out.printf(Locale.ROOT, "%6d  %-17s  %8s  %6.1f  %5.1f  %15s  %12d  %11s  %15s%n", fields, mode.label,
        ok ? "yes" : "NO", seconds, cpu, mode == Mode.WITH ? String.format(Locale.ROOT, "%.1f", timed.nanos / 1e9) : "-",
        peakHeap >> 20, peakRssMb(), mode == Mode.WITH ? Long.toString(generated) : "-");
    if (!ok) {
      diagnostics.getDiagnostics().stream().filter(d -> d.getKind() == Diagnostic.Kind.ERROR).limit(3)
          .forEach(d -> System.out.println("    " + (d.getSource() == null ? "" : d.getSource().getName()) + ":"
              + d.getLineNumber() + ": " + d.getMessage(Locale.ROOT).lines().findFirst().orElse("")));
    }
  }

  /** Generates {@code p.Tiny}, an empty class, in the first round; nothing else. */
  private static final class Tiny extends AbstractProcessor {
    private boolean done;

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
      if (!done) {
        done = true;
        try (java.io.Writer w = processingEnv.getFiler().createSourceFile("p.Tiny").openWriter()) {
          w.write("package p;\nfinal class Tiny {}\n");
        } catch (IOException e) {
          throw new java.io.UncheckedIOException(e);
        }
      }
      return false;
    }
  }

  /** The processor, with the CPU time of its {@code process} calls (javac's thread) added up. */
  private static final class Timed extends AbstractProcessor {
    private final Processor delegate;
    long nanos;

    Timed(Processor delegate) {
      this.delegate = delegate;
    }

    @Override
    public synchronized void init(ProcessingEnvironment env) {
      super.init(env);
      delegate.init(env);
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
      java.lang.management.ThreadMXBean threads = ManagementFactory.getThreadMXBean();
      long start = threads.getCurrentThreadCpuTime();
      try {
        return delegate.process(annotations, round);
      } finally {
        nanos += threads.getCurrentThreadCpuTime() - start;
      }
    }
  }

  private static long processCpuNanos() {
    return ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os
        ? os.getProcessCpuTime()
        : -1;
  }

  private static long lines(Path file) {
    try (Stream<String> l = Files.lines(file)) {
      return l.count();
    } catch (IOException e) {
      return -1;
    }
  }

  private static String peakRssMb() {
    try {
      for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (line.startsWith("VmHWM:")) {
          return Long.toString(Long.parseLong(line.replaceAll("\\D", "")) >> 10);
        }
      }
    } catch (IOException | RuntimeException e) {
      // not Linux
    }
    return "?";
  }
}
