package dev.commplan.samples;

import dev.commplan.runtime.CommPlanException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.Locale;

/**
 * The samples' command line: {@code java -jar commplan-samples.jar <sample> [--ranks N] [--backend
 * local|nccl|mpi]}. With {@code --backend mpi} the process is one rank of {@code MPI_COMM_WORLD}, started
 * by {@code mpirun -np N} (the seed sample only); rank 0 prints what every rank saw.
 */
public final class Main {
  private static final String USAGE =
      """
      usage: java -jar commplan-samples.jar <sample> [--ranks N] [--backend local|nccl|mpi] [--out FILE]
        samples:
          seed   the four collectives (all-reduce, all-gather, reduce-scatter, broadcast) on N ranks
          ddp    data-parallel training of a small MLP: N ranks match 1 rank; draws the loss curve (SVG)
          zero   the same training with ZeRO-1: 1/N of the optimizer state per rank, the same loss
          syncbn batch-norm statistics of uneven per-rank batches, gathered: the whole batch's mean and variance
        options:
          --ranks N            number of ranks (default 4; with mpi, mpirun's -np decides)
          --backend local|nccl|mpi
                               local: ranks as threads of this JVM (default); nccl: one GPU per rank;
                               mpi: this process is one rank, started by mpirun -np N (seed only)
          --out FILE           where ddp writes its loss curve (default ddp-loss.svg)
      """;

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command line; returns the process exit status (0 ok, 1 failure, 2 usage). */
  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      err.println("error: " + e.getMessage());
      err.print(USAGE);
      return 2;
    }
    if (options.backend().equals("mpi")) {
      if (!options.sample().equals("seed") && !options.sample().equals("help")) {
        err.println("error: --backend mpi runs the seed sample only, not '" + options.sample() + "'");
        err.print(USAGE);
        return 2;
      }
    }
    try {
      switch (options.sample()) {
        case "seed" -> {
          if (options.backend().equals("mpi")) {
            SeedSample.runMpi(options.ranksGiven() ? options.ranks() : 0, out);
          } else {
            SeedSample.run(options.backend(), options.ranks(), out);
          }
        }
        case "ddp" -> DdpSample.run(
            options.backend(), options.ranks(), options.out() != null ? options.out() : DdpSample.DEFAULT_OUT, out);
        case "zero" -> ZeroSample.run(options.backend(), options.ranks(), out);
        case "syncbn" -> SyncBnSample.run(options.backend(), options.ranks(), out);
        case "help" -> out.print(USAGE);
        default -> {
          err.println("error: unknown sample '" + options.sample() + "'");
          err.print(USAGE);
          return 2;
        }
      }
      return 0;
    } catch (CommPlanException e) {
      err.println("error: " + e.getMessage());
      return 1;
    }
  }

  record Options(String sample, int ranks, boolean ranksGiven, String backend, Path out) {
    static Options parse(String[] args) {
      String sample = null;
      int ranks = 4;
      boolean ranksGiven = false;
      String backend = "local";
      Path out = null;
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        switch (arg) {
          case "--ranks" -> {
            String value = valueOf(args, ++i, arg);
            try {
              ranks = Integer.parseInt(value);
            } catch (NumberFormatException e) {
              throw new IllegalArgumentException("--ranks takes a whole number, not '" + value + "'");
            }
            if (ranks < 1) {
              throw new IllegalArgumentException("--ranks must be at least 1, was " + ranks);
            }
            ranksGiven = true;
          }
          case "--backend" -> {
            backend = valueOf(args, ++i, arg).toLowerCase(Locale.ROOT);
            if (!backend.equals("local") && !backend.equals("nccl") && !backend.equals("mpi")) {
              throw new IllegalArgumentException("--backend is local, nccl or mpi, not '" + backend + "'");
            }
          }
          case "--out" -> out = Path.of(valueOf(args, ++i, arg));
          case "-h", "--help" -> sample = "help";
          default -> {
            if (arg.startsWith("-")) {
              throw new IllegalArgumentException("unknown option " + arg);
            }
            if (sample != null) {
              throw new IllegalArgumentException("one sample at a time: '" + sample + "' and '" + arg + "'");
            }
            sample = arg;
          }
        }
      }
      if (sample == null) {
        throw new IllegalArgumentException("name a sample");
      }
      return new Options(sample, ranks, ranksGiven, backend, out);
    }

    private static String valueOf(String[] args, int i, String option) {
      if (i >= args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      return args[i];
    }
  }
}
