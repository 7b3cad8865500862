package dev.commplan.samples;

import dev.commplan.runtime.CommPlanException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;

/**
 * The samples' command line: {@code java -jar commplan-samples.jar <sample> [--ranks N] [--backend
 * local|nccl|mpi]}. With {@code --backend mpi} the process is one rank of {@code MPI_COMM_WORLD}, started
 * by {@code mpirun -np N} (seed, pipeline and moe); rank 0 prints what every rank saw.
 */
public final class Main {
  private static final String USAGE =
      """
      usage: java -jar commplan-samples.jar <sample> [--ranks N] [--backend local|nccl|mpi] [--out FILE]
        samples:
          seed      the four collectives (all-reduce, all-gather, reduce-scatter, broadcast) on N ranks
          ddp       data-parallel training of a small MLP: N ranks match 1 rank; draws the loss curve (SVG)
          zero      the same training with ZeRO-1: 1/N of the optimizer state per rank, the same loss
          syncbn    batch-norm statistics of uneven per-rank batches, gathered: the whole batch's mean and variance
          pipeline  pipeline-parallel training, one layer per rank (send/recv), checked against one host
          moe       mixture-of-experts token dispatch and combine (all-to-all), checked against one host
        options:
          --ranks N            number of ranks (default 4; with mpi, mpirun's -np decides)
          --backend local|nccl|mpi
                               local: ranks as threads of this JVM (default); nccl: one GPU per rank;
                               mpi: this process is one rank, started by mpirun -np N (seed, pipeline, moe)
          --out FILE           where ddp writes its loss curve (default ddp-loss.svg in the working directory)
      """;

  /**
   * The most ranks the local backend runs here. Each local rank is a thread of this one JVM, and each
   * collective's work and memory grow with the square of the ranks: seed takes about 2 s on 256 ranks,
   * 40 s on 1,024 and 10 minutes on 4,096, and 100,000 ran out of native threads after 36 s.
   */
  static final int MAX_LOCAL_RANKS = 256;

  private Main() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /**
   * Runs the command line; returns the process exit status: 0 ok, 1 a failure while running (or a seed,
   * pipeline or moe result that differs from the expected one), 2 a mistake on the command line. Every
   * mistake is one line on {@code err}, found before any work starts.
   */
  static int run(String[] args, PrintStream out, PrintStream err) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      return usageError(err, e.getMessage());
    }
    if (options.sample().equals("help")) {
      out.print(USAGE);
      return 0;
    }
    if (options.out() != null && !options.sample().equals("ddp")) {
      // Not an error: bin/gpu-run passes --out to every sample.
      err.println("note: --out is ddp's (where it draws the loss curve); " + options.sample() + " writes no file");
    }
    try {
      switch (options.sample()) {
        case "seed" -> {
          boolean ok = options.backend().equals("mpi")
              ? SeedSample.runMpi(options.ranksGiven() ? options.ranks() : 0, out)
              : SeedSample.run(options.backend(), options.ranks(), out);
          return ok ? 0 : 1;
        }
        case "ddp" -> {
          Path svg = options.out() != null ? options.out() : DdpSample.DEFAULT_OUT;
          String unwritable = OutputCheck.whyNotWritable(svg);
          if (unwritable != null) {
            err.println("error: ddp cannot write its loss curve to " + svg + ": " + unwritable
                + "; pick another --out (checked before training)");
            return 2;
          }
          DdpSample.run(options.backend(), options.ranks(), svg, out);
        }
        case "zero" -> ZeroSample.run(options.backend(), options.ranks(), out);
        case "syncbn" -> SyncBnSample.run(options.backend(), options.ranks(), out);
        case "pipeline" -> {
          boolean ok = options.backend().equals("mpi")
              ? PipelineSample.runMpi(options.ranksGiven() ? options.ranks() : 0, out)
              : PipelineSample.run(options.backend(), options.ranks(), out);
          return ok ? 0 : 1;
        }
        case "moe" -> {
          boolean ok = options.backend().equals("mpi")
              ? MoeSample.runMpi(options.ranksGiven() ? options.ranks() : 0, out)
              : MoeSample.run(options.backend(), options.ranks(), out);
          return ok ? 0 : 1;
        }
        default -> throw new IllegalStateException(options.sample());
      }
      return 0;
    } catch (CommPlanException e) {
      err.println("error: " + e.getMessage());
      return 1;
    } catch (UncheckedIOException e) {
      err.println("error: " + e.getMessage() + ": " + OutputCheck.reason(e.getCause()));
      return 1;
    }
  }

  /** One line, exit status 2. */
  private static int usageError(PrintStream err, String message) {
    err.println("error: " + message + " (--help lists the samples and options)");
    return 2;
  }

  record Options(String sample, int ranks, boolean ranksGiven, String backend, Path out) {
    private static final List<String> SAMPLES = List.of("seed", "ddp", "zero", "syncbn", "pipeline", "moe");
    /** The samples that run as one rank per process under mpirun; the others drive a Cluster. */
    private static final List<String> MPI_SAMPLES = List.of("seed", "pipeline", "moe");

    static Options parse(String[] args) {
      String sample = null;
      int ranks = 4;
      boolean ranksGiven = false;
      String backend = null;
      Path out = null;
      for (int i = 0; i < args.length; i++) {
        String arg = args[i];
        switch (arg) {
          case "--ranks" -> {
            String value = valueOf(args, ++i, arg);
            if (ranksGiven) {
              throw new IllegalArgumentException("--ranks given twice");
            }
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
            if (backend != null) {
              throw new IllegalArgumentException("--backend given twice");
            }
            backend = valueOf(args, ++i, arg).toLowerCase(Locale.ROOT);
            if (!backend.equals("local") && !backend.equals("nccl") && !backend.equals("mpi")) {
              throw new IllegalArgumentException("--backend is local, nccl or mpi, not '" + backend + "'");
            }
          }
          case "--out" -> {
            if (out != null) {
              throw new IllegalArgumentException("--out given twice");
            }
            String value = valueOf(args, ++i, arg);
            try {
              out = Path.of(value);
            } catch (InvalidPathException e) {
              throw new IllegalArgumentException("--out '" + value + "' is not a file name here: " + e.getReason());
            }
          }
          case "-h", "--help", "help" -> {
            return new Options("help", ranks, false, "local", null);
          }
          default -> {
            if (arg.startsWith("-")) {
              throw new IllegalArgumentException("unknown option " + arg);
            }
            if (sample != null) {
              throw new IllegalArgumentException("one sample at a time: '" + sample + "' and '" + arg + "'");
            }
            if (!SAMPLES.contains(arg)) {
              throw new IllegalArgumentException("unknown sample '" + arg + "': the samples are " + String.join(", ", SAMPLES));
            }
            sample = arg;
          }
        }
      }
      if (sample == null) {
        throw new IllegalArgumentException("name a sample: " + String.join(", ", SAMPLES));
      }
      if (backend == null) {
        backend = "local";
      }
      if (backend.equals("mpi") && !MPI_SAMPLES.contains(sample)) {
        throw new IllegalArgumentException("--backend mpi runs " + String.join(", ", MPI_SAMPLES) + " only, not '"
            + sample + "' (it drives all its ranks from one process)");
      }
      if (backend.equals("local") && ranks > MAX_LOCAL_RANKS) {
        throw new IllegalArgumentException("--ranks " + ranks + " is more than the local backend runs: at most "
            + MAX_LOCAL_RANKS + ", since each local rank is a thread of this JVM and the collectives' work grows with"
            + " the square of the ranks (seed: 2 s on 256 ranks, 40 s on 1024); for more, use --backend nccl or mpi");
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
