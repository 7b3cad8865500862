package dev.commplan.spicheck;

/**
 * Each rank's inputs to {@code plans.Exchange} and the results NCCL's meaning gives them, computed here in plain
 * Java, independently of any backend. The floating-point inputs are small integers and halves, so every
 * sum, mean and maximum is exact.
 */
final class Reference {
  private Reference() {}

  static long[] sumsInput(int rank, int n) {
    long[] x = new long[n];
    for (int i = 0; i < n; i++) {
      x[i] = 1_000_000_000_000L * (rank + 1) + i; // beyond 32 bits: an I64 all-reduce, not an I32 one
    }
    return x;
  }

  static long[] sums(int ranks, int n) {
    long[] expected = new long[n];
    for (int rank = 0; rank < ranks; rank++) {
      long[] x = sumsInput(rank, n);
      for (int i = 0; i < n; i++) {
        expected[i] += x[i];
      }
    }
    return expected;
  }

  static double[] meansInput(int rank, int n) {
    double[] x = new double[n];
    for (int i = 0; i < n; i++) {
      x[i] = 2.0 * rank + i;
    }
    return x;
  }

  /** The mean of {@code 2 * rank + i} over the ranks: {@code ranks - 1 + i}. */
  static double[] means(int ranks, int n) {
    double[] expected = new double[n];
    for (int i = 0; i < n; i++) {
      expected[i] = ranks - 1 + i;
    }
    return expected;
  }

  static int[] partInput(int rank, int n) {
    int[] x = new int[n];
    for (int i = 0; i < n; i++) {
      x[i] = 100 * rank + i;
    }
    return x;
  }

  /** Rank r's part at slice r. */
  static int[] gathered(int ranks, int n) {
    int[] expected = new int[ranks * n];
    for (int rank = 0; rank < ranks; rank++) {
      System.arraycopy(partInput(rank, n), 0, expected, rank * n, n);
    }
    return expected;
  }

  /** {@code ranks * n} scores; element j of rank r is high on rank {@code j % ranks}. */
  static double[] scoresInput(int rank, int ranks, int n) {
    double[] x = new double[ranks * n];
    for (int j = 0; j < x.length; j++) {
      x[j] = j % ranks == rank ? 1000.5 + j : -j;
    }
    return x;
  }

  /** Slice {@code rank} of the element-wise maximum over the ranks. */
  static double[] shard(int ranks, int n, int rank) {
    double[] expected = new double[n];
    for (int i = 0; i < n; i++) {
      int j = rank * n + i;
      double max = Double.NEGATIVE_INFINITY;
      for (int r = 0; r < ranks; r++) {
        max = Math.max(max, scoresInput(r, ranks, n)[j]);
      }
      expected[i] = max;
    }
    return expected;
  }

  static float[] weightsInput(int rank, int n) {
    float[] x = new float[n];
    for (int i = 0; i < n; i++) {
      x[i] = rank == 0 ? 0.25f * i : -1f; // only the root's survive the broadcast
    }
    return x;
  }

  static float[] weights(int n) {
    return weightsInput(0, n);
  }
}
