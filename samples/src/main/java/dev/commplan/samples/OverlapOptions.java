package dev.commplan.samples;

import java.util.List;

/**
 * The {@code overlap} sample's own options, which {@link Main} collects and hands over: {@code --measure}
 * (time the step each way and draw the timeline), and the measured model's {@code --width} and {@code
 * --batch} (per rank).
 *
 * @param measure whether to measure after the check
 * @param timeline whether to draw the timeline: with --measure, but not on mpi
 * @param size the measured model
 */
record OverlapOptions(boolean measure, boolean timeline, OverlapModel.Size size) {
  /**
   * The measured model where no option says otherwise. On a GPU, GEMMs large enough to keep it busy and 64
   * MiB of gradients, so that buckets of 256 KiB to 64 MiB differ. On the host, 4 MiB of gradients and a
   * small batch: the local backend's all-reduce is a memory copy, fast next to host GEMMs, and a small batch
   * keeps the compute from dwarfing it.
   */
  static OverlapModel.Size defaultSize(String backend) {
    return backend.equals("nccl") ? new OverlapModel.Size(1024, 1024) : new OverlapModel.Size(256, 4);
  }

  /** Whether {@code arg} is one of the sample's options. */
  static boolean isOption(String arg) {
    return arg.equals("--measure") || takesValue(arg);
  }

  /** Whether option {@code arg} is followed by a value. */
  static boolean takesValue(String arg) {
    return arg.equals("--width") || arg.equals("--batch");
  }

  /**
   * The options in {@code args} (as collected: each valued option followed by its value).
   *
   * @throws IllegalArgumentException for a repeated option, a bad number, or a size without --measure
   */
  static OverlapOptions parse(List<String> args, String backend) {
    boolean measure = false;
    Integer width = null;
    Integer batch = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      switch (arg) {
        case "--measure" -> {
          if (measure) {
            throw new IllegalArgumentException("--measure given twice");
          }
          measure = true;
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
        default -> throw new IllegalArgumentException("not an option of overlap: " + arg);
      }
    }
    if (!measure && (width != null || batch != null)) {
      throw new IllegalArgumentException((width != null ? "--width" : "--batch") + " sizes the measured model;"
          + " add --measure (the check always runs its own small model)");
    }
    OverlapModel.Size defaults = defaultSize(backend);
    return new OverlapOptions(measure, measure && !backend.equals("mpi"), new OverlapModel.Size(width != null ? width : defaults.width(),
        batch != null ? batch : defaults.batch()));
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
}
