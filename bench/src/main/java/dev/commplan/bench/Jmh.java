package dev.commplan.bench;

import dev.commplan.bench.jmh.NcclExecuteBench;
import dev.commplan.bench.jmh.NcclLaunchBench;
import dev.commplan.runtime.Backends;
import dev.commplan.runtime.Cluster;
import dev.commplan.runtime.CommPlanException;
import java.io.PrintStream;
import org.openjdk.jmh.runner.Runner;
import org.openjdk.jmh.runner.RunnerException;
import org.openjdk.jmh.runner.options.ChainedOptionsBuilder;
import org.openjdk.jmh.runner.options.CommandLineOptionException;
import org.openjdk.jmh.runner.options.CommandLineOptions;
import org.openjdk.jmh.runner.options.OptionsBuilder;

/**
 * {@code commplan-bench jmh [JMH options]}: JMH's own command line, except that the NCCL benchmarks are
 * left out, with the reason printed, where NCCL cannot run here (no GPU, no library, native access off).
 */
final class Jmh {
  private Jmh() {}

  static int run(String[] args, PrintStream out, PrintStream err) {
    CommandLineOptions cli;
    try {
      cli = new CommandLineOptions(args);
    } catch (CommandLineOptionException e) {
      err.println("error: " + e.getMessage());
      return 2;
    }
    if (cli.shouldHelp()) {
      try {
        cli.showHelp();
      } catch (java.io.IOException e) {
        throw new java.io.UncheckedIOException(e);
      }
      return 0;
    }
    ChainedOptionsBuilder options = new OptionsBuilder().parent(cli);
    String unavailable = ncclUnavailable();
    if (unavailable != null) {
      for (Class<?> nccl : new Class<?>[] {NcclExecuteBench.class, NcclLaunchBench.class}) {
        err.println("# skipping " + nccl.getSimpleName() + ": " + unavailable);
        options.exclude(nccl.getSimpleName());
      }
    }
    try {
      new Runner(options.build()).run();
      return 0;
    } catch (RunnerException e) {
      // JMH gives no message when the patterns left nothing to run (e.g. only the NCCL benchmarks, skipped here)
      err.println("error: " + (e.getMessage() != null ? e.getMessage()
          : "no benchmark to run" + (unavailable != null ? " (the NCCL ones are skipped here: see above)" : "")));
      return 1;
    }
  }

  /** Why the NCCL backend cannot run here, or null where it can (one rank is brought up and closed). */
  static String ncclUnavailable() {
    try (Cluster cluster = Backends.cluster("nccl", 1)) {
      return null;
    } catch (CommPlanException | IllegalCallerException | LinkageError e) {
      return e.getMessage();
    }
  }
}
