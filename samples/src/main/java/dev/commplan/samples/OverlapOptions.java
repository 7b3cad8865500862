package dev.commplan.samples;

import java.util.List;
import java.util.Locale;

/**
 * The {@code overlap} sample's own options, which {@link Main} collects and hands over: {@code --measure}
 * (time the step each way and draw the timeline), {@code --sweep} (also time the overlapped step for each
 * bucket size of {@link BucketSweep#sizes}), the measured model's {@code --width} and {@code --batch} (per
 * rank), and {@code --bucket-bytes} for the measured overlapped step.
 *
 * @param measure whether to measure after the check
 * @param sweep whether to sweep the bucket size after the measurement
 * @param timeline whether to draw the timeline: with --measure, but not on mpi
 * @param size the measured model
 * @param bucketBytes the measured plan's bucketBytes; 0 for the annotation's ({@link #defaultBucketBytes})
 */
record OverlapOptions(boolean measure, boolean sweep, boolean timeline, OverlapModel.Size size, long bucketBytes) {
  /**
   * The measured model where no option says otherwise. On a GPU, GEMMs large enough to keep it busy and 64
   * MiB of gradients, so that buckets of 256 KiB to 64 MiB differ. On the host, 4 MiB of gradients and a
   * small batch: the local backend's all-reduce is a memory copy, fast next to host GEMMs, and a small batch
   * keeps the compute from dwarfing it.
   */
  static OverlapModel.Size defaultSize(String backend) {
    return backend.equals("nccl") ? new OverlapModel.Size(1024, 1024) : new OverlapModel.Size(256, 4);
  }

  /**
   * The measured plan's bucketBytes where --bucket-bytes does not say: on a GPU the annotation's (0 here),
   * sized for its model; on the host 1 MiB, six buckets of three layers of the host's model (the annotation's
   * 16 MiB would make its 4 MiB of gradients one bucket, and the step serial again).
   */
  static long defaultBucketBytes(String backend) {
    return backend.equals("nccl") ? 0 : 1L << 20;
  }

  /** The options of a run that only checks. */
  static final OverlapOptions CHECK_ONLY = new OverlapOptions(false, false, false, defaultSize("local"), 0);

  /** Whether {@code arg} is one of the sample's options. */
  static boolean isOption(String arg) {
    return arg.equals("--measure") || arg.equals("--sweep") || takesValue(arg);
  }

  /** Whether option {@code arg} is followed by a value. */
  static boolean takesValue(String arg) {
    return arg.equals("--width") || arg.equals("--batch") || arg.equals("--bucket-bytes");
  }

  /**
   * The options in {@code args} (as collected: each valued option followed by its value). {@code --sweep}
   * implies {@code --measure}.
   *
   * @throws IllegalArgumentException for a repeated option, a bad number, or a size without --measure
   */
  static OverlapOptions parse(List<String> args, String backend) {
    boolean measure = false;
    boolean sweep = false;
    Integer width = null;
    Integer batch = null;
    Long bucketBytes = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      switch (arg) {
        case "--measure" -> {
          if (measure) {
            throw new IllegalArgumentException("--measure given twice");
          }
          measure = true;
        }
        case "--sweep" -> {
          if (sweep) {
            throw new IllegalArgumentException("--sweep given twice");
          }
          sweep = true;
        }
        case "--width" -> {
          if (width != null) {
            throw new IllegalArgumentException("--width given twice");
          }
          width = positive(arg, args.get(++i));
        }
        case "--batch" -> {
          if (batch != null) {
            throw new IllegalArgumentException("--batch given twice");
          }
          batch = positive(arg, args.get(++i));
        }
        case "--bucket-bytes" -> {
          if (bucketBytes != null) {
            throw new IllegalArgumentException("--bucket-bytes given twice");
          }
          bucketBytes = bytes(arg, args.get(++i));
        }
        default -> throw new IllegalArgumentException("not an option of overlap: " + arg);
      }
    }
    measure |= sweep;
    if (!measure && (width != null || batch != null || bucketBytes != null)) {
      String option = width != null ? "--width" : batch != null ? "--batch" : "--bucket-bytes";
      throw new IllegalArgumentException(option + " sizes the measured model or plan; add --measure or --sweep"
          + " (the check always runs its own small model)");
    }
    OverlapModel.Size defaults = defaultSize(backend);
    return new OverlapOptions(measure, sweep, measure && !backend.equals("mpi"), new OverlapModel.Size(
        width != null ? width : defaults.width(), batch != null ? batch : defaults.batch()),
        bucketBytes != null ? bucketBytes : defaultBucketBytes(backend));
  }

  private static int positive(String option, String value) {
    int n;
    try {
      n = Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " takes a whole number, not '" + value + "'");
    }
    if (n < 1) {
      throw new IllegalArgumentException(option + " must be at least 1, was " + n);
    }
    return n;
  }

  /** A positive number of bytes, plain or with the suffix K, M or G (KiB, MiB, GiB): "262144", "256K", "8M". */
  static long bytes(String option, String value) {
    String digits = value.strip();
    int shift = switch (digits.isEmpty() ? ' ' : Character.toUpperCase(digits.charAt(digits.length() - 1))) {
      case 'K' -> 10;
      case 'M' -> 20;
      case 'G' -> 30;
      default -> 0;
    };
    if (shift > 0) {
      digits = digits.substring(0, digits.length() - 1);
    }
    long n;
    try {
      n = Long.parseLong(digits);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(option + " takes bytes, a whole number with K, M or G for KiB, MiB or"
          + " GiB if you like (8M), not '" + value + "'");
    }
    if (n < 1 || n > (Long.MAX_VALUE >> shift)) {
      throw new IllegalArgumentException(String.format(Locale.ROOT, "%s must be at least 1 byte and fit a long,"
          + " was '%s'", option, value));
    }
    return n << shift;
  }
}
