package dev.commplan.samples;

import dev.commplan.runtime.CommPlanException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The samples' command line: {@code java -jar commplan-samples.jar <sample> [--ranks N] [--mesh
 * dp=2,tp=4] [--backend local|nccl|mpi]}. With {@code --backend mpi} the process is one rank of {@code
 * MPI_COMM_WORLD}, started by {@code mpirun -np N} (seed, pipeline, moe, tp, 3d and overlap); rank 0 prints
 * what every rank saw.
 */
public final class Main {
  private static final String USAGE =
      """
      usage: java -jar commplan-samples.jar <sample> [--ranks N | --mesh AXES] [--backend local|nccl|mpi] [--out FILE]
        samples:
          seed      the four collectives (all-reduce, all-gather, reduce-scatter, broadcast) on N ranks
          ddp       data-parallel training of a small MLP: N ranks match 1 rank; draws the loss curve (SVG)
          zero      the same training with ZeRO-1: 1/N of the optimizer state per rank, the same loss
          syncbn    batch-norm statistics of uneven per-rank batches, gathered: the whole batch's mean and variance
          pipeline  pipeline-parallel training, one layer per rank (send/recv), checked against one host
          moe       mixture-of-experts token dispatch and combine (all-to-all), checked against one host
          tp        Megatron-style tensor-parallel MLP over tp, data-parallel over dp, on a 2-D mesh; checked against one host
          3d        pipeline x data x tensor parallel training on a 3-D mesh (pp, dp, tp), checked against one host
          overlap   data-parallel training of 16 linear layers (host compute, or cuBLAS on GPUs), the gradients'
                    all-reduce in buckets overlapped with the backward pass, checked against one host; with
                    --measure, the step timed compute alone, communication alone, serial and overlapped, and drawn
        options:
          --ranks N            number of ranks (default 4; with mpi, mpirun's -np decides)
          --mesh AXES          tp and 3d: the mesh, outermost axis first (tp: default dp=2,tp=4; 3d: default
                               pp=2,dp=2,tp=2); its ranks are the product of the sizes (with mpi: mpirun's -np)
          --backend local|nccl|mpi
                               local: ranks as threads of this JVM (default); nccl: one GPU per rank;
                               mpi: this process is one rank, started by mpirun -np N (seed, pipeline, moe, tp, 3d,
                               overlap)
          --out FILE           where ddp writes its loss curve (default ddp-loss.svg in the working directory), and
                               overlap --measure its timeline (default overlap-timeline.svg)
          --measure            overlap: also time the step each way and draw a serial and an overlapped step
          --sweep              overlap: --measure, then the overlapped step for bucket sizes from 1/16 of a weight
                               gradient to all the gradients, in powers of two
          --width N, --batch N overlap --measure: the measured model's width and samples per rank (default 256 and
                               4; on nccl 1024 and 1024)
          --bucket-bytes N     overlap --measure: the measured plan's bucketBytes (default 1M; on nccl the
                               annotation's, 16M; K, M and G mean KiB, MiB and GiB)
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
   * pipeline, moe, tp or 3d result that differs from the expected one), 2 a mistake on the command line. Every
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
    boolean drawsTimeline = options.overlap() != null && options.overlap().timeline();
    if (options.out() != null && !options.sample().equals("ddp") && !drawsTimeline) {
      // Not an error: bin/gpu-run passes --out to every sample.
      err.println("note: --out is ddp's and overlap --measure's (where they draw); " + options.sample()
          + " writes no file");
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
        case "tp" -> {
          boolean ok = options.backend().equals("mpi")
              ? TpSample.runMpi(options.mesh(), out)
              : TpSample.run(options.backend(), options.mesh(), out);
          return ok ? 0 : 1;
        }
        case "3d" -> {
          boolean ok = options.backend().equals("mpi")
              ? ThreeDSample.runMpi(options.mesh(), out)
              : ThreeDSample.run(options.backend(), options.mesh(), out);
          return ok ? 0 : 1;
        }
        case "overlap" -> {
          return OverlapSample.command(options, out, err);
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
    } catch (UnsupportedOperationException e) {
      // A backend that cannot split a communicator yet (a mesh needs it) says so in its message.
      err.println("error: " + e.getMessage());
      return 1;
    }
  }

  /** One line, exit status 2. */
  private static int usageError(PrintStream err, String message) {
    err.println("error: " + message + " (--help lists the samples and options)");
    return 2;
  }

  /**
   * The parsed command line.
   *
   * @param mesh the mesh of tp and 3d ({@code --mesh} or their default); null for the other samples
   * @param overlap the overlap sample's own options; null for the other samples
   */
  record Options(String sample, int ranks, boolean ranksGiven, String backend, Path out, MeshShape mesh,
      OverlapOptions overlap) {
    private static final List<String> SAMPLES =
        List.of("seed", "ddp", "zero", "syncbn", "pipeline", "moe", "tp", "3d", "overlap");
    /** The samples that run as one rank per process under mpirun; the others drive a Cluster. */
    private static final List<String> MPI_SAMPLES = List.of("seed", "pipeline", "moe", "tp", "3d", "overlap");

    static Options parse(String[] args) {
      String sample = null;
      int ranks = 4;
      boolean ranksGiven = false;
      String backend = null;
      Path out = null;
      String meshText = null;
      List<String> overlapArgs = new ArrayList<>();
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
          case "--mesh" -> {
            if (meshText != null) {
              throw new IllegalArgumentException("--mesh given twice");
            }
            meshText = valueOf(args, ++i, arg);
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
            return new Options("help", ranks, false, "local", null, null, null);
          }
          default -> {
            if (OverlapOptions.isOption(arg)) { // checked once the sample is known
              overlapArgs.add(arg);
              if (OverlapOptions.takesValue(arg)) {
                overlapArgs.add(valueOf(args, ++i, arg));
              }
              continue;
            }
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
      MeshShape mesh = null;
      if (sample.equals("tp") || sample.equals("3d")) {
        mesh = mesh(sample, meshText, ranks, ranksGiven);
        ranks = mesh.ranks();
        ranksGiven = true;
      } else if (meshText != null) {
        throw new IllegalArgumentException("--mesh is for tp and 3d; " + sample + " runs on --ranks N ranks");
      }
      OverlapOptions overlap = null;
      if (sample.equals("overlap")) {
        overlap = OverlapOptions.parse(overlapArgs, backend);
      } else if (!overlapArgs.isEmpty()) {
        throw new IllegalArgumentException(overlapArgs.get(0) + " is an option of overlap, not of " + sample);
      }
      if (backend.equals("local") && ranks > MAX_LOCAL_RANKS) {
        throw new IllegalArgumentException((mesh != null ? "--mesh " + mesh + " has " + ranks + " ranks, " : "--ranks "
            + ranks + " is ") + "more than the local backend runs: at most "
            + MAX_LOCAL_RANKS + ", since each local rank is a thread of this JVM and the collectives' work grows with"
            + " the square of the ranks (seed: 2 s on 256 ranks, 40 s on 1024); for more, use --backend nccl or mpi");
      }
      return new Options(sample, ranks, ranksGiven, backend, out, mesh, overlap);
    }

    /** tp's or 3d's mesh: {@code --mesh} or the sample's default, checked against --ranks and the model. */
    private static MeshShape mesh(String sample, String text, int ranks, boolean ranksGiven) {
      boolean tp = sample.equals("tp");
      MeshShape mesh = MeshShape.parse(text != null ? text : tp ? TpSample.DEFAULT_MESH : ThreeDSample.DEFAULT_MESH,
          tp ? TpSample.AXES : ThreeDSample.AXES, sample);
      if (ranksGiven && ranks != mesh.ranks()) {
        throw new IllegalArgumentException("--ranks " + ranks + " but the mesh " + mesh + " has " + mesh.ranks()
            + " ranks: " + sample + " runs on its mesh's ranks; drop --ranks or give a --mesh of " + ranks + " ranks");
      }
      String unsupported = tp ? TpSample.unsupported(mesh) : ThreeDSample.unsupported(mesh);
      if (unsupported != null) {
        throw new IllegalArgumentException("--mesh " + mesh + ": " + unsupported);
      }
      return mesh;
    }

    private static String valueOf(String[] args, int i, String option) {
      if (i >= args.length) {
        throw new IllegalArgumentException(option + " needs a value");
      }
      return args[i];
    }
  }
}
