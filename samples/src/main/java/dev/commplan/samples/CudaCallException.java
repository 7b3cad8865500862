package dev.commplan.samples;

/** A call into cuBLAS or the CUDA runtime that a sample makes itself returned an error. */
final class CudaCallException extends RuntimeException {
  private static final long serialVersionUID = 1L;

  CudaCallException(String message) {
    super(message);
  }
}
