package dev.commplan.samples;

import dev.commplan.timing.SteadyState;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The bucket sizes the {@code overlap} sample's sweep tries, and its table: the overlapped step's time
 * against {@code bucketBytes}, next to the compute alone and the serial step. Small buckets start the
 * communication early but pay a collective's fixed cost many times; large ones pay it once but start
 * late, and the last bucket, which nothing hides, is larger.
 */
final class BucketSweep {
  /** The smallest bucket tried, whatever the model. */
  static final long MIN_BUCKET_BYTES = 4096;

  private BucketSweep() {}

  /**
   * Powers of two from a sixteenth of one weight gradient (at least {@link #MIN_BUCKET_BYTES}), where every
   * field is a bucket alone, to the first that holds every gradient, where the whole plan is one bucket:
   * 256 KiB to 128 MiB for 16 layers of 1024.
   */
  static List<Long> sizes(OverlapModel.Size size) {
    long smallest = Math.max(MIN_BUCKET_BYTES, Long.highestOneBit(size.weightBytes() / 16));
    List<Long> sizes = new ArrayList<>();
    for (long n = smallest; ; n *= 2) {
      sizes.add(n);
      if (n >= size.gradientBytes()) {
        return sizes;
      }
    }
  }

  /**
   * One size's result.
   *
   * @param buckets the plan's buckets at this size
   * @param overlappedMillis the overlapped step's median time
   * @param warmUp what its warm-up took
   */
  record Row(long bucketBytes, int buckets, double overlappedMillis, SteadyState.WarmUp warmUp) {}

  /**
   * The sweep's result: each size's row, and the compute alone and the serial step timed with them.
   *
   * @param computeMillis the compute alone's median step time
   * @param serialMillis the serial step's
   * @param rounds the steps timed of each way, interleaved
   */
  record Sweep(double computeMillis, double serialMillis, int rounds, List<Row> rows) {
    /** The table ({@link BucketSweep#lines}). */
    List<String> lines() {
      return BucketSweep.lines(rows, computeMillis, serialMillis, rounds);
    }
  }

  /**
   * The table: a header, then a line per size with the share of the serial step's communication hidden
   * ({@link OverlapTiming#hidden}) and the size's warm-up.
   */
  static List<String> lines(List<Row> rows, double computeMillis, double serialMillis, int rounds) {
    List<String> lines = new ArrayList<>();
    lines.add(String.format(Locale.ROOT, "bucket size against the overlapped step (medians of %d steps each, every"
        + " size, the compute alone (%.3f ms) and the serial step (%.3f ms) timed in turn):", rounds, computeMillis,
        serialMillis));
    lines.add(String.format(Locale.ROOT, "  %12s  %7s  %12s  %6s  %s", "bucketBytes", "buckets", "step (ms)", "hidden",
        "warm-up"));
    for (Row row : rows) {
      double hidden = OverlapTiming.hidden(computeMillis, serialMillis, row.overlappedMillis());
      lines.add(String.format(Locale.ROOT, "  %12s  %7d  %12.3f  %5.0f%%  %s", OverlapModel.bytes(row.bucketBytes()),
          row.buckets(), row.overlappedMillis(), 100 * hidden, row.warmUp().summary("steps")));
    }
    return lines;
  }
}
