package dev.commplan.runtime.local;

/**
 * Per-stream scratch arrays for the reduction kernels, allocated once per stream so that running a
 * collective allocates nothing: an accumulator and an input chunk for each accumulator kind.
 */
final class KernelScratch {
  /** Elements per chunk: every input's chunk is read before the chunk's results are written. */
  static final int CHUNK = 4096;

  final float[] floatAccumulator = new float[CHUNK];
  final float[] floatInput = new float[CHUNK];
  final double[] doubleAccumulator = new double[CHUNK];
  final double[] doubleInput = new double[CHUNK];
  final long[] longAccumulator = new long[CHUNK];
  final long[] longInput = new long[CHUNK];
}
